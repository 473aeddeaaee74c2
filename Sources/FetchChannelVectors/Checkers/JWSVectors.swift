import DeviceSigning
import Foundation

/// `Vectors/jws-es256.json`: the RFC 7515 A.3 example verifies with its key and yields its
/// payload; every invalid case is rejected with its `expectedError` code.
public enum JWSVectors: VectorFileChecker {
    public static let fileName = "jws-es256.json"
    public static let summary = "ES256 compact JWS, RFC 7515 A.3 and negative cases"
    /// The file must hold at least this many negative cases: a file cut short fails rather than
    /// passes.
    public static let minimumInvalidCases = 15

    public struct File: Decodable, Sendable {
        public let key: Key
        public let valid: [Valid]
        public let invalid: [Invalid]
    }
    public struct Key: Decodable, Sendable {
        public let kty: String
        public let crv: String
        public let x: String
        public let y: String
    }
    public struct Valid: Decodable, Sendable {
        public let id: Int
        public let name: String
        public let compact: String
        public let expectedPayloadBase64url: String
        /// The protected header the compact form carries, as JSON.
        public let expectedHeader: [String: JSONValue]
    }
    public struct Invalid: Decodable, Sendable {
        public let id: Int
        public let name: String
        public let compact: String
        public let expectedError: String
    }

    /// RFC 7515 Appendix A.3's ES256 JWS, as the RFC prints it.
    static let rfc7515A3Compact =
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    /// Parses and verifies; the payload or the `DeviceSigningError` code.
    static func outcome(_ compact: String, key: P256.Signing.PublicKey) -> DeviceSigningOutcome {
        DeviceSigningOutcome { try CompactJWS(parsing: compact).verifiedPayload(with: key) }
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(
                jwk: JWK(kty: file.key.kty, crv: file.key.crv, x: file.key.x, y: file.key.y))
        } catch {
            report = .unusable(fileName, "the file's key is not a P-256 public key: \(error)")
            return
        }
        // The RFC's own example is the known answer: the file cannot pass without it, nor with a
        // key or a signature of its own making under its name.
        report.expect(
            file.key.x == DeviceSignatureVectors.rfc7515X && file.key.y == DeviceSignatureVectors.rfc7515Y,
            "key: not the RFC 7515 A.3 example key")
        report.expect(
            file.valid.contains { $0.name == "rfc7515-a3" && $0.compact == rfc7515A3Compact },
            "the RFC 7515 A.3 case (rfc7515-a3, the RFC's own JWS) is missing")
        report.checkEach(file.valid, atLeast: 1, "valid cases") { vector, report in
            guard case .success(let payload) = outcome(vector.compact, key: key) else {
                report.fail("vector \(vector.id) \(vector.name) did not verify")
                return
            }
            report.expect(
                VectorDecoding.base64url(vector.expectedPayloadBase64url) == payload,
                "vector \(vector.id) \(vector.name): the payload differs from expectedPayloadBase64url")
            let encodedHeader = String(vector.compact.prefix { $0 != "." })
            let header = VectorDecoding.base64url(encodedHeader).flatMap { try? StrictJSON.parse($0) }
            report.expect(
                header == .object(vector.expectedHeader),
                "vector \(vector.id) \(vector.name): the header differs from expectedHeader")
        }
        report.checkEach(file.invalid, atLeast: minimumInvalidCases, "invalid cases") { vector, report in
            switch outcome(vector.compact, key: key) {
            case .success:
                report.fail("vector \(vector.id) \(vector.name) verified but must fail with \(vector.expectedError)")
            case .failure(let code):
                report.expect(
                    code == vector.expectedError,
                    "vector \(vector.id) \(vector.name): failed with \(code), expected \(vector.expectedError)")
            }
        }
    }
}
