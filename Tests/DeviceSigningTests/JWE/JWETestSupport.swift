import FetchChannelVectors
import Foundation
import Testing

@testable import DeviceSigning

/// Vectors/jwe-ecdh-es.json and its keys, for the JWE tests.
enum JWEFixtures {
    static func file() throws -> JWEVectors.File {
        try JWEVectors.decode(TestSupport.vectorFile(JWEVectors.fileName))
    }

    static func key(_ name: String, in file: JWEVectors.File) throws -> P256.KeyAgreement.PrivateKey {
        try JWEVectors.privateKey(name, in: file)
    }

    /// The case named `name`.
    static func vector(_ name: String, in file: JWEVectors.File) throws -> JWEVectors.Case {
        try #require(file.cases.first { $0.name == name }, "no case \(name) in \(JWEVectors.fileName)")
    }

    static func bytes(base64url text: String) throws -> [UInt8] {
        try #require(TestSupport.base64url(text), "not base64url: \(text)")
    }
}
