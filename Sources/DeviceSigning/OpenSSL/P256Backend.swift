internal import CDeviceSigningShim
internal import COpenSSL
import Foundation

/// Every OpenSSL call the P-256 key and signature types make, in one place.
/// Inputs are size-checked here before they cross into C.
enum P256Backend {
    static let scalarBytes = 32
    static let pointBytes = 65
    static let compressedPointBytes = 33
    static let rawSignatureBytes = 64
    static let maximumDERSignatureBytes = 72
    static let maximumDERKeyBytes = 16 * 1024

    static func generate() throws -> EVPKey {
        guard let pointer = dss_p256_generate() else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "P-256 key generation failed.")
        }
        return try EVPKey(takingOwnershipOf: pointer)
    }

    static func privateKey(scalar: UnsafeRawBufferPointer) throws -> EVPKey {
        guard scalar.count == scalarBytes else {
            throw DeviceSigningError(
                .invalidKey, "A raw P-256 private key is exactly \(scalarBytes) bytes; got \(scalar.count).")
        }
        let outOfRange = DeviceSigningError(.invalidKey, "The private scalar is not in [1, n-1] for P-256.")
        return try decodedKey(from: scalar, orThrow: outOfRange) { dss_p256_from_private_scalar($0, $1) }
    }

    static func publicKey(point: UnsafeRawBufferPointer, allowCompressed: Bool) throws -> EVPKey {
        let sizeOK = point.count == pointBytes || (allowCompressed && point.count == compressedPointBytes)
        guard sizeOK else {
            let compressed = allowCompressed ? " or \(compressedPointBytes) compressed" : ""
            let sizes = "\(pointBytes) bytes uncompressed\(compressed)"
            throw DeviceSigningError(.invalidKey, "A P-256 public point is \(sizes); got \(point.count).")
        }
        return try decodedKey(from: point, orThrow: invalidPoint) {
            dss_p256_from_public_point($0, $1, allowCompressed ? 1 : 0)
        }
    }

    static let invalidPoint = DeviceSigningError(
        .invalidKey, "The public point is not a valid P-256 point (wrong prefix, not on the curve, or infinity).")

    static func privateKey(der: UnsafeRawBufferPointer) throws -> EVPKey {
        guard der.count <= maximumDERKeyBytes else {
            throw DeviceSigningError(.inputTooLarge, "A DER private key is at most \(maximumDERKeyBytes) bytes.")
        }
        var status = DSS_KEY_MALFORMED
        let notDER = DeviceSigningError(
            .malformedEncoding,
            "Not a DER PKCS#8 PrivateKeyInfo or SEC1 ECPrivateKey naming its curve (or trailing bytes).")
        guard
            let pointer = dss_p256_key_from_der(
                der.baseAddress?.assumingMemoryBound(to: UInt8.self), der.count, &status)
        else {
            OpenSSLErrorQueue.clear()
            throw refusal(ofPrivateKey: status) ?? notDER
        }
        // Built from its scalar by the shim: range and pairwise checked, its stated public key compared.
        return try EVPKey(takingOwnershipOf: pointer)
    }

    /// Why the shim refused a private key (`DSS_KEY_*`), or nil when it was not one at all.
    static func refusal(ofPrivateKey status: Int32) -> DeviceSigningError? {
        switch status {
        case DSS_KEY_NOT_EC:
            DeviceSigningError(.unsupportedKeyType, "The key is not an EC key; only ECDSA P-256 keys are supported.")
        case DSS_KEY_OTHER_CURVE:
            DeviceSigningError(
                .unsupportedCurve,
                "The key is an EC key on a curve other than P-256, or gives its curve as explicit parameters; "
                    + "only a key naming P-256 (prime256v1) is supported.")
        case DSS_KEY_INVALID:
            DeviceSigningError(
                .invalidKey, "The private key is not a valid P-256 key (scalar out of range, or not its public key's).")
        default:
            nil
        }
    }

    static func publicKey(spki: UnsafeRawBufferPointer) throws -> EVPKey {
        guard spki.count <= maximumDERKeyBytes else {
            throw DeviceSigningError(.inputTooLarge, "A DER public key is at most \(maximumDERKeyBytes) bytes.")
        }
        let notSPKI = DeviceSigningError(.malformedEncoding, "Not a DER SubjectPublicKeyInfo (or trailing bytes).")
        let key = try decodedKey(from: spki, orThrow: notSPKI) { dss_public_key_from_spki_der($0, $1) }
        // OpenSSL decodes a point in hybrid form (06/07) and the point at infinity (00, in more than
        // one BER spelling) without complaint. Both are refused, as every other import refuses
        // them, by the form the point was decoded in. (Matching the encoding's last bytes instead
        // also refused the valid keys whose y ends in the same bytes.)
        guard [0x02, 0x03, 0x04].contains(dss_public_point_prefix(key.pointer)) else {
            OpenSSLErrorQueue.clear()
            throw invalidPoint
        }
        // A decoded key without a point to give is invalid all the same.
        let point: [UInt8]
        do {
            point = try publicPoint(of: key)
        } catch {
            OpenSSLErrorQueue.clear()
            throw invalidPoint
        }
        // Rebuild from the point so the same on-curve checks apply as to every other import.
        return try point.withUnsafeBytes { try publicKey(point: $0, allowCompressed: false) }
    }

    /// The key `decode` makes from `bytes` (their base address and count; already size-checked),
    /// owned from here on; when it makes none, OpenSSL's error queue is cleared and `refusal` thrown.
    private static func decodedKey(
        from bytes: UnsafeRawBufferPointer, orThrow refusal: DeviceSigningError,
        _ decode: (UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    ) throws -> EVPKey {
        guard let pointer = decode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count) else {
            OpenSSLErrorQueue.clear()
            throw refusal
        }
        return try EVPKey(takingOwnershipOf: pointer)
    }

    static func publicPoint(of key: EVPKey) throws -> [UInt8] {
        var point = [UInt8](repeating: 0, count: pointBytes)
        guard dss_p256_public_point(key.pointer, &point, point.count) == 1 else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not read the public point.")
        }
        return point
    }

    static func privateScalar(of key: EVPKey) throws -> SecureBytes {
        try key.requireExportable()
        return try SecureBytes(count: scalarBytes) { buffer in
            guard
                dss_p256_private_scalar(
                    key.pointer, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
            else {
                throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not read the private scalar.")
            }
        }
    }

    static func publicOnly(_ key: EVPKey) throws -> EVPKey {
        guard let pointer = dss_public_only_copy(key.pointer) else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not copy the public key.")
        }
        return try EVPKey(takingOwnershipOf: pointer)
    }

    static func pkcs8DER(of key: EVPKey) throws -> SecureBytes {
        try key.requireExportable()
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard dss_private_key_to_pkcs8_der(key.pointer, &output, &length) == 1, let output else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not encode the private key as PKCS#8.")
        }
        defer { dss_free_clear(output, length) }
        return SecureBytes(UnsafeBufferPointer(start: output, count: length))
    }

    static func spkiDER(of key: EVPKey) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard dss_public_key_to_spki_der(key.pointer, &output, &length) == 1, let output else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not encode the public key as SubjectPublicKeyInfo.")
        }
        defer { dss_free(output) }
        return Data(UnsafeBufferPointer(start: output, count: length))
    }

    /// SHA-256 of `message` into `digest` (32 bytes); false when OpenSSL failed (no memory), with
    /// its reasons left on the error queue for the caller.
    static func sha256(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) -> Bool {
        dss_sha256(
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
            digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count) == 1
    }

    /// SHA-256 of `message`, for a value that cannot fail (a key's thumbprint): OpenSSL fails only
    /// when it cannot allocate, where Swift itself would already have stopped.
    static func sha256(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = digest.withUnsafeMutableBytes { sha256(message, into: $0) }
        precondition(ok, "SHA-256 failed: OpenSSL could not allocate")  // not input: memory exhausted
        return digest
    }

    static func derToRaw(_ der: UnsafeRawBufferPointer) -> [UInt8]? {
        guard der.count > 0, der.count <= maximumDERSignatureBytes else { return nil }
        var raw = [UInt8](repeating: 0, count: rawSignatureBytes)
        let ok =
            dss_ecdsa_der_to_raw(der.baseAddress?.assumingMemoryBound(to: UInt8.self), der.count, &raw, raw.count) == 1
        if !ok { OpenSSLErrorQueue.clear() }
        return ok ? raw : nil
    }

    static func rawToDER(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        guard raw.count == rawSignatureBytes else { return nil }
        var der = [UInt8](repeating: 0, count: maximumDERSignatureBytes)
        var length = 0
        guard
            dss_ecdsa_raw_to_der(
                raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &der, der.count, &length) == 1
        else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(der.prefix(length))
    }
}
