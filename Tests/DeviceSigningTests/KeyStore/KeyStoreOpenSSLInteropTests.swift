import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// The OpenSSL command-line tool, when installed.
enum OpenSSLTool {
    /// The program on PATH ("openssl" as it is when missing: running it then fails).
    static let path = ExternalTool.openssl ?? "openssl"
    static let isAvailable: Bool = {
        let available = ExternalTool.openssl != nil
        if !available { print("note: openssl is not on PATH; the OpenSSL interoperability tests are skipped") }
        return available
    }()

    static func run(_ arguments: [String]) throws -> ToolResult {
        try ExternalTool.run(path, arguments)
    }

    /// Runs and requires success; returns standard output.
    @discardableResult
    static func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments)
        #expect(
            result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.errors)",
            sourceLocation: sourceLocation)
        return result.output
    }
}

@Suite(.enabled(if: OpenSSLTool.isAvailable, "needs openssl on PATH"), .dedicatedThread)
struct KeyStoreOpenSSLInteropTests {
    typealias PrivateKey = P256.Signing.PrivateKey

    /// A passphrase file as `-passin file:` / `-pass file:` read it (first line).
    func passFile(_ passphrase: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("pass-\(UUID().uuidString)")
        #expect(
            FileManager.default.createFile(
                atPath: file.path, contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        return file.path
    }

    @Test(arguments: [KeyStoreFixtures.cheapKDF, .pbkdf2SHA256(iterations: 100_000), .default])
    func aKeyWrittenByTheStoreOpensWithOpenSSLPkey(kdf: KeyDerivation) throws {
        try withTemporaryDirectory { root in
            let store = try KeyStore(directory: root.appendingPathComponent("keys"))
            let key = try PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("s3cret pass"), kdf: kdf)
            let file = store.directory.appendingPathComponent("\(keyId).pem").path
            let pass = try passFile("s3cret pass", in: root)
            try OpenSSLTool.succeed(["pkey", "-in", file, "-passin", "file:\(pass)", "-noout"])
            let publicPEM = try OpenSSLTool.succeed(["pkey", "-in", file, "-passin", "file:\(pass)", "-pubout"])
            #expect(publicPEM == key.publicKey.pemRepresentation)
            let wrong = try OpenSSLTool.run([
                "pkey", "-in", file, "-passin", "file:\(try passFile("other", in: root))", "-noout",
            ])
            #expect(wrong.status != 0)
        }
    }

    @Test func keysMadeByOpenSSLGenpkeyImport() throws {
        try withTemporaryDirectory { root in
            let store = try KeyStore(directory: root.appendingPathComponent("keys"))
            let pass = try passFile("genpkey pass", in: root)
            let plainFile = root.appendingPathComponent("plain.pem").path
            let encryptedFile = root.appendingPathComponent("encrypted.pem").path
            let sec1File = root.appendingPathComponent("sec1.pem").path
            try OpenSSLTool.succeed([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", plainFile,
            ])
            try OpenSSLTool.succeed([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-aes-256-cbc", "-pass", "file:\(pass)", "-out", encryptedFile,
            ])
            // `ecparam -genkey` writes an EC PARAMETERS block, then a SEC1 EC PRIVATE KEY.
            try OpenSSLTool.succeed(["ecparam", "-name", "prime256v1", "-genkey", "-out", sec1File])

            for (file, passIn) in [
                (plainFile, [String]()), (encryptedFile, ["-passin", "file:\(pass)"]), (sec1File, []),
            ] {
                let pem = try String(contentsOfFile: file, encoding: .utf8)
                let keyId = try store.importPEM(pem, passphrase: secret("genpkey pass"), kdf: KeyStoreFixtures.cheapKDF)
                let expectedPublic = try OpenSSLTool.succeed(["pkey", "-in", file, "-pubout"] + passIn)
                let loaded = try store.load(keyId, passphrase: secret("genpkey pass"))
                #expect(loaded.publicKey.pemRepresentation == expectedPublic, "\(file)")
                let signature = try loaded.signature(for: Array("interop".utf8))
                #expect(loaded.publicKey.isValidSignature(signature, for: Array("interop".utf8)))
            }
            #expect(try store.list().count == 3)
            expectError(.wrongPassphrase) {
                try store.importPEM(
                    try String(contentsOfFile: encryptedFile, encoding: .utf8), passphrase: secret("not it"))
            }
        }
    }

    @Test func otherCurvesAndRSAFromOpenSSLGenpkeyAreRefused() throws {
        try withTemporaryDirectory { root in
            let store = try KeyStore(directory: root.appendingPathComponent("keys"))
            let pass = try passFile("genpkey pass", in: root)
            let cases: [(name: String, arguments: [String], code: DeviceSigningError.Code)] = [
                ("p384", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"], .unsupportedCurve),
                (
                    "p384-encrypted",
                    [
                        "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-aes-256-cbc", "-pass",
                        "file:\(pass)",
                    ], .unsupportedCurve
                ),
                ("secp256k1", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"], .unsupportedCurve),
                ("rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], .unsupportedKeyType),
                (
                    "rsa-encrypted",
                    ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes-256-cbc", "-pass", "file:\(pass)"],
                    .unsupportedKeyType
                ),
                ("ed25519", ["-algorithm", "ED25519"], .unsupportedKeyType),
            ]
            for testCase in cases {
                let file = root.appendingPathComponent("\(testCase.name).pem").path
                try OpenSSLTool.succeed(["genpkey"] + testCase.arguments + ["-out", file])
                let pem = try String(contentsOfFile: file, encoding: .utf8)
                let error = expectError(testCase.code) {
                    try store.importPEM(pem, passphrase: secret("genpkey pass"), kdf: KeyStoreFixtures.cheapKDF)
                }
                #expect(error != nil, "case \(testCase.name)")
            }
            #expect(try store.list().isEmpty)
        }
    }

    /// A P-256 key written with explicit curve parameters instead of the curve's name, as SEC1 and
    /// as PKCS#8: refused as another curve, since only the named curve is read.
    @Test func explicitCurveParametersAreRefused() throws {
        try withTemporaryDirectory { root in
            let sec1 = root.appendingPathComponent("explicit-sec1.pem").path
            let pkcs8 = root.appendingPathComponent("explicit-pkcs8.pem").path
            try OpenSSLTool.succeed([
                "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-param_enc", "explicit", "-out", sec1,
            ])
            try OpenSSLTool.succeed(["pkcs8", "-topk8", "-nocrypt", "-in", sec1, "-out", pkcs8])
            for file in [sec1, pkcs8] {
                let pem = try String(contentsOfFile: file, encoding: .utf8)
                #expect(pem.contains(file == sec1 ? "EC PRIVATE KEY" : "BEGIN PRIVATE KEY"), "\(pem.prefix(40))")
                let error = expectError(.unsupportedCurve) { try PrivateKey(pemRepresentation: pem) }
                #expect(error?.reason.contains("explicit parameters") == true, "\(file): the message says which form")
            }
        }
    }
}
