import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// The ECDH step agrees with `openssl pkeyutl -derive`, on fresh keys and on RFC 7518 Appendix C's.
@Suite(.enabled(if: OpenSSLTool.isAvailable, "needs openssl on PATH"))
struct ECDHOpenSSLInteropTests {
    struct Derived: Sendable {
        let ours: [UInt8]
        let openssl: [UInt8]
        let status: Int32
    }

    /// Writes `key` (private, PKCS#8 PEM) and `peer` (public PEM) to a directory of the test's own
    /// and runs `openssl pkeyutl -derive`; blocking, so it runs on a thread of its own.
    static func derive(
        _ key: P256.KeyAgreement.PrivateKey, _ peer: P256.KeyAgreement.PublicKey
    ) async throws -> Derived {
        let keyPEM = try key.pemRepresentation.withUnsafeBytes { Data($0) }
        let peerPEM = Data(peer.pemRepresentation.utf8)
        let ours = try key.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Array($0) }
        return try await DedicatedThreads.run {
            try withTemporaryDirectory { directory in
                let keyFile = directory.appendingPathComponent("key.pem")
                let peerFile = directory.appendingPathComponent("peer.pem")
                let output = directory.appendingPathComponent("z.bin")
                #expect(
                    FileManager.default.createFile(
                        atPath: keyFile.path, contents: keyPEM,
                        attributes: [.posixPermissions: 0o600]))
                #expect(FileManager.default.createFile(atPath: peerFile.path, contents: peerPEM))
                let result = try OpenSSLTool.run([
                    "pkeyutl", "-derive", "-inkey", keyFile.path,
                    "-peerkey", peerFile.path, "-out", output.path,
                ])
                let z = (try? Data(contentsOf: output)).map(Array.init) ?? []
                return Derived(ours: ours, openssl: z, status: result.status)
            }
        }
    }

    @Test func freshKeysAgreeWithOpenSSL() async throws {
        for _ in 0..<3 {
            let (a, b) = (try P256.KeyAgreement.PrivateKey(), try P256.KeyAgreement.PrivateKey())
            let derived = try await Self.derive(a, b.publicKey)
            #expect(derived.status == 0)
            #expect(derived.openssl.count == 32 && derived.ours == derived.openssl)
            let reverse = try await Self.derive(b, a.publicKey)
            #expect(reverse.ours == derived.ours && reverse.openssl == derived.openssl)
        }
    }

    @Test func rfc7518AppendixCAgreesWithOpenSSL() async throws {
        let file = try JWEFixtures.file()
        let appendix = file.rfc7518AppendixC
        let bob = try JWEFixtures.key(appendix.recipientKey, in: file)
        let alice = try JWEFixtures.key(appendix.ephemeralKey, in: file)
        let derived = try await Self.derive(bob, alice.publicKey)
        #expect(derived.status == 0)
        #expect(derived.openssl == appendix.sharedSecretZ && derived.ours == appendix.sharedSecretZ)
    }
}
