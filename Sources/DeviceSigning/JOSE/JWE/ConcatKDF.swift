/// The Concat KDF that turns an ECDH-ES shared secret into a key (RFC 7518 §4.6.2: NIST
/// SP 800-56A §5.8.1 with SHA-256), computed in the shim with SHA-256 through EVP.
public enum ConcatKDF: Sendable {
    /// The longest PartyUInfo or PartyVInfo accepted (a JWE's decoded `apu` / `apv`).
    public static let maximumPartyInfoBytes = 512

    /// Derives `keyBytes` bytes (1 to 64) from the shared secret Z.
    ///
    /// `algorithmID` is the JWE `enc` value for ECDH-ES direct key agreement, the `alg` value for
    /// ECDH-ES with key wrapping; the party infos are the decoded `apu` and `apv` (empty if absent).
    public static func deriveKey(
        sharedSecret: SecureBytes, algorithmID: String, partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [],
        keyBytes: Int
    ) throws -> SecureBytes {
        guard partyUInfo.count <= maximumPartyInfoBytes, partyVInfo.count <= maximumPartyInfoBytes else {
            throw DeviceSigningError(
                .inputTooLarge,
                "PartyUInfo and PartyVInfo are at most \(maximumPartyInfoBytes) bytes each.")
        }
        let info = otherInfo(
            algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo,
            keyBytes: keyBytes)
        return try JWEBackend.concatKDF(sharedSecret: sharedSecret, otherInfo: info, count: keyBytes)
    }

    /// OtherInfo = AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo: each of the first three
    /// a 32-bit big-endian length and the bytes, SuppPubInfo the key length in bits (32-bit
    /// big-endian), SuppPrivInfo empty.
    static func otherInfo(algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8], keyBytes: Int) -> [UInt8] {
        var info: [UInt8] = []
        info.reserveCapacity(16 + algorithmID.utf8.count + partyUInfo.count + partyVInfo.count)
        func append32(_ value: Int) {
            let word = UInt32(truncatingIfNeeded: value)
            for shift in [24, 16, 8, 0] { info.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        for datum in [Array(algorithmID.utf8), partyUInfo, partyVInfo] {
            append32(datum.count)
            info.append(contentsOf: datum)
        }
        append32(keyBytes * 8)
        return info
    }
}
