import Foundation

/// An ES256 JWS in compact serialization (RFC 7515 §7.1): `header.payload.signature`.
///
/// Parsing is strict: at most 16 KiB; exactly three parts; each part strict base64url without
/// padding; the header an object with `alg` exactly "ES256"; the signature exactly 64 bytes
/// (r||s, RFC 7518 §3.4, never DER). The payload is available only through
/// `verifiedPayload(with:)`, after the signature checks.
public struct CompactJWS: Sendable {
    public static let maximumLength = 16 * 1024

    public let header: JWSHeader
    /// `base64url(header) "." base64url(payload)` as ASCII: the bytes that are signed.
    let signingInput: [UInt8]
    private let payload: Data
    let signature: P256.Signing.ECDSASignature

    public init(parsing compact: String) throws {
        let bytes = Array(compact.utf8)
        guard bytes.count <= CompactJWS.maximumLength else {
            throw DeviceSigningError(.inputTooLarge, "The JWS is longer than \(CompactJWS.maximumLength) bytes.")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw DeviceSigningError(
                .malformedJWS, "A compact JWS has exactly three dot-separated parts; this one has \(parts.count).")
        }
        guard !parts[0].isEmpty, let headerJSON = Base64.decode(parts[0], alphabet: .url) else {
            throw DeviceSigningError(.malformedJWS, "The JWS header is not base64url without padding.")
        }
        guard let payloadBytes = Base64.decode(parts[1], alphabet: .url) else {
            throw DeviceSigningError(.malformedJWS, "The JWS payload is not base64url without padding.")
        }
        guard let signatureBytes = Base64.decode(parts[2], alphabet: .url) else {
            throw DeviceSigningError(.malformedJWS, "The JWS signature is not base64url without padding.")
        }
        self.header = try JWSHeader(json: headerJSON)
        guard signatureBytes.count == P256Backend.rawSignatureBytes else {
            throw DeviceSigningError(
                .malformedSignature, "An ES256 signature is exactly 64 bytes (r || s); got \(signatureBytes.count).")
        }
        self.signature = P256.Signing.ECDSASignature(validatedRaw: Data(signatureBytes))
        self.signingInput = Array(bytes[0..<(parts[0].count + 1 + parts[1].count)])
        self.payload = Data(payloadBytes)
    }

    /// Verifies the signature with `key` and returns the payload bytes.
    public func verifiedPayload(with key: P256.Signing.PublicKey) throws -> Data {
        let valid = signingInput.withUnsafeBytes { key.isValid(signature, message: $0) }
        guard valid else {
            throw DeviceSigningError(.invalidSignature, "The JWS signature does not verify with the given key.")
        }
        return payload
    }

    /// Signs `payload` under a protected header (its JSON bytes; `alg` must be "ES256").
    public static func sign<Header: DataProtocol, Payload: DataProtocol>(
        header: Header, payload: Payload, with key: P256.Signing.PrivateKey
    ) throws -> String {
        let headerBytes = Array(header)
        _ = try JWSHeader(json: headerBytes)
        return try sign(
            encodedHeader: Base64.encodeToBytes(headerBytes, alphabet: .url), payload: Array(payload), with: key)
    }

    /// Fast path for callers that sign many payloads under one header: the header's base64url
    /// is computed once by the caller and already checked.
    static func sign(encodedHeader: [UInt8], payload: [UInt8], with key: P256.Signing.PrivateKey) throws -> String {
        var output = encodedHeader
        output.reserveCapacity(encodedHeader.count + payload.count * 4 / 3 + 92)
        output.append(UInt8(ascii: "."))
        output.append(contentsOf: Base64.encodeToBytes(payload, alphabet: .url))
        let signature = try output.withUnsafeBytes { try key.signature(message: $0) }
        output.append(UInt8(ascii: "."))
        output.append(contentsOf: Base64.encodeToBytes(signature.rawRepresentation, alphabet: .url))
        return String(decoding: output, as: UTF8.self)
    }
}
