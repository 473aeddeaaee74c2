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

/// Pinned "random" values for `CompactJWE.encrypt`: the ephemeral key, then byte strings in the
/// order the encrypter asks for them (content key for key wrapping, then the IV).
final class PinnedJWERandomSource: JWERandomSource, @unchecked Sendable {
    // @unchecked: used by one test on one thread.
    private let ephemeral: P256.KeyAgreement.PrivateKey
    private var queue: [[UInt8]]

    init(ephemeral: P256.KeyAgreement.PrivateKey, bytes: [[UInt8]]) {
        self.ephemeral = ephemeral
        self.queue = bytes
    }

    func ephemeralKey() throws -> P256.KeyAgreement.PrivateKey { ephemeral }

    func bytes(count: Int) throws -> SecureBytes {
        guard !queue.isEmpty, queue[0].count == count else {
            throw DeviceSigningError(.invalidKey, "the test pinned no value of \(count) bytes here")
        }
        return SecureBytes(queue.removeFirst())
    }
}
