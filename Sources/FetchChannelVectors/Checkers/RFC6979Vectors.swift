import DeviceSigning
import Foundation

/// `Vectors/rfc6979-p256.json`: RFC 6979 A.2.5 (P-256, SHA-256) signatures, verify-only. The
/// RFC's public point must belong to its private scalar, every case must verify (or not) as its
/// `valid` says, and a case that gives the RFC's nonce k must have r = x(k·G) mod n.
public enum RFC6979Vectors: VectorFileChecker {
    public static let fileName = "rfc6979-p256.json"
    public static let summary = "RFC 6979 A.2.5 P-256 signatures (verify-only)"
    public static let minimumCases = 4

    public struct File: Decodable, Sendable {
        public let publicKeyXHex: String
        public let publicKeyYHex: String
        public let privateKeyHex: String
        public let cases: [Case]
    }
    public struct Case: Decodable, Sendable {
        public let id: Int
        public let message: String
        public let rHex: String
        public let sHex: String
        public let valid: Bool
        /// The RFC's nonce: r must be the x coordinate of k·G, reduced mod n.
        public let kHex: String?
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        guard let x = VectorDecoding.hex(file.publicKeyXHex), let y = VectorDecoding.hex(file.publicKeyYHex),
            let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
        else {
            report = .unusable(fileName, "publicKeyXHex/publicKeyYHex are not a P-256 point")
            return
        }
        guard let scalar = VectorDecoding.hex(file.privateKeyHex),
            let privateKey = try? P256.Signing.PrivateKey(rawRepresentation: scalar)
        else {
            report = .unusable(fileName, "privateKeyHex is not a P-256 private scalar")
            return
        }
        report.expect(privateKey.publicKey == key, "the RFC's public point must belong to its private key")
        report.checkEach(file.cases, atLeast: minimumCases, "cases") { testCase, report in
            guard let r = VectorDecoding.hex(testCase.rHex), let s = VectorDecoding.hex(testCase.sHex),
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: r + s)
            else {
                report.fail("rfc6979 case \(testCase.id): rHex/sHex are not a 64-byte r||s signature")
                return
            }
            if let kHex = testCase.kHex {
                report.expect(
                    VectorDecoding.hex(kHex).flatMap(Self.nonceR) == r,
                    "rfc6979 case \(testCase.id): r is not x(k·G) mod n for kHex")
            }
            let verified = key.isValidSignature(signature, for: Array(testCase.message.utf8))
            report.expect(
                verified == testCase.valid,
                "rfc6979 case \(testCase.id): \(verified ? "verifies" : "does not verify") but valid is \(testCase.valid)"
            )
        }
    }

    /// The group order n of P-256, big-endian.
    private static let order: [UInt8] =
        VectorDecoding.hex("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551") ?? []

    /// x(k·G) mod n as 32 big-endian bytes, or nil when k is not a valid scalar. k·G is k's public
    /// key; x < p < 2n, so one subtraction of n at most reduces it.
    static func nonceR(_ k: [UInt8]) -> [UInt8]? {
        guard let point = try? P256.Signing.PrivateKey(rawRepresentation: k).publicKey.rawRepresentation else {
            return nil
        }
        var x = Array(point.prefix(32))
        guard x.count == 32, order.count == 32, !x.lexicographicallyPrecedes(order) else { return x }
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(x[index]) - Int(order[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            x[index] = UInt8((difference + 256) % 256)
        }
        return x
    }
}
