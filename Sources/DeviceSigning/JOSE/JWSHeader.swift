import Foundation

/// The protected header of an ES256 JWS, as parsed by `CompactJWS`.
public struct JWSHeader: Sendable, Hashable {
    /// Always "ES256": parsing refuses every other value.
    public let alg: String
    public let kid: String?
    public let typ: String?

    static let maximumBytes = 4 * 1024

    /// Parses a header's JSON; refuses anything but an object with `alg` exactly "ES256", any
    /// `crit` (this implementation understands no extensions, RFC 7515 §4.1.11), and duplicate
    /// member names (RFC 7515 §5.2: `{"alg":"none","alg":"ES256"}` must not be read either way).
    init(json: [UInt8]) throws {
        guard json.count <= JWSHeader.maximumBytes else {
            throw DeviceSigningError(.inputTooLarge, "The JWS header is larger than \(JWSHeader.maximumBytes) bytes.")
        }
        let members = try JOSEJSON.members(of: json, subject: "The JWS header", code: .malformedJWS)
        guard let alg = members["alg"] else {
            throw DeviceSigningError(.unsupportedAlgorithm, "The JWS header has no alg; only ES256 is accepted.")
        }
        guard let algText = alg as? String, algText == "ES256" else {
            throw DeviceSigningError(
                .unsupportedAlgorithm, "The JWS alg is \(String(describing: alg).prefix(32)); only ES256 is accepted.")
        }
        guard members["crit"] == nil else {
            throw DeviceSigningError(.malformedJWS, "The JWS header has crit extensions, which are not supported.")
        }
        if let kid = members["kid"], !(kid is String) {
            throw DeviceSigningError(.malformedJWS, "The JWS kid must be a string.")
        }
        if let typ = members["typ"], !(typ is String) {
            throw DeviceSigningError(.malformedJWS, "The JWS typ must be a string.")
        }
        self.alg = algText
        self.kid = members["kid"] as? String
        self.typ = members["typ"] as? String
    }
}
