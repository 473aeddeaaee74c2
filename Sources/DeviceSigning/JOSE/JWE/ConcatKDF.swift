/// The Concat KDF that turns an ECDH-ES shared secret into a key (RFC 7518 §4.6.2: NIST
/// SP 800-56A §5.8.1 with SHA-256), computed in the shim with SHA-256 through EVP.
public enum ConcatKDF: Sendable {
    /// The longest PartyUInfo or PartyVInfo accepted (a JWE's decoded `apu` / `apv`).
    public static let maximumPartyInfoBytes = 512
    /// The longest AlgorithmID accepted: an `alg` or `enc` name is a few bytes.
    public static let maximumAlgorithmIDBytes = 256

    /// Derives `keyBytes` bytes (1 to 64) from the shared secret Z.
    ///
    /// `algorithmID` is the JWE `enc` value for ECDH-ES direct key agreement, the `alg` value for
    /// ECDH-ES with key wrapping; the party infos are the decoded `apu` and `apv` (empty if absent).
    public static func deriveKey(
        sharedSecret: SecureBytes, algorithmID: String, partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [],
        keyBytes: Int
    ) throws -> SecureBytes {
        // Before OtherInfo is written: it holds the length in bits, which must not overflow.
        guard (1...64).contains(keyBytes) else {
            throw DeviceSigningError(.invalidKey, "The Concat KDF derives 1 to 64 bytes, not \(keyBytes).")
        }
        guard algorithmID.utf8.count <= maximumAlgorithmIDBytes else {
            throw DeviceSigningError(.inputTooLarge, "The AlgorithmID is at most \(maximumAlgorithmIDBytes) bytes.")
        }
        guard partyUInfo.count <= maximumPartyInfoBytes, partyVInfo.count <= maximumPartyInfoBytes else {
            throw DeviceSigningError(
                .inputTooLarge,
                "PartyUInfo and PartyVInfo are at most \(maximumPartyInfoBytes) bytes each.")
        }
        // OtherInfo in temporary storage (on the stack at these sizes): this runs for every
        // decryption, and an array for it cost more than its bytes.
        let count = otherInfoCount(algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo)
        return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { info in
            writeOtherInfo(
                algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo, keyBytes: keyBytes,
                into: info)
            return try JWEBackend.concatKDF(
                sharedSecret: sharedSecret, otherInfo: UnsafeRawBufferPointer(info), count: keyBytes)
        }
    }

    /// OtherInfo = AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo: each of the first three
    /// a 32-bit big-endian length and the bytes, SuppPubInfo the key length in bits (32-bit
    /// big-endian), SuppPrivInfo empty.
    static func otherInfo(algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8], keyBytes: Int) -> [UInt8] {
        let count = otherInfoCount(algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo)
        return [UInt8](uninitializedCount: count) { buffer, initialized in
            writeOtherInfo(
                algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo, keyBytes: keyBytes,
                into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    private static func otherInfoCount(algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8]) -> Int {
        16 + algorithmID.utf8.count + partyUInfo.count + partyVInfo.count
    }

    /// Writes OtherInfo at the start of `buffer`, which holds exactly `otherInfoCount` bytes.
    private static func writeOtherInfo(
        algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8], keyBytes: Int,
        into buffer: UnsafeMutableRawBufferPointer
    ) {
        var offset = 0
        func put32(_ value: Int) {
            buffer.storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, toByteOffset: offset, as: UInt32.self)
            offset += 4
        }
        func put(_ datum: some Collection<UInt8>) {
            put32(datum.count)
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]).copyBytes(from: datum)
            offset += datum.count
        }
        put(algorithmID.utf8)
        put(partyUInfo)
        put(partyVInfo)
        put32(keyBytes * 8)
    }
}
