import DeviceSigning
import FetchChannelTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The `openssl` command line tool, for certificates and TLS servers in tests. Blocking: call it
/// from a ``DedicatedThread``.
enum OpenSSLCommand {
    /// The tool on PATH, or nil: the TLS tests are then skipped, saying why.
    static let path = ExternalTool.openssl

    static var isAvailable: Bool { path != nil }

    /// Runs `openssl arguments…` in `directory` and returns its standard output; throws with its
    /// standard error when it fails.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL, input: Data? = nil) throws -> Data {
        guard let path else { throw TLSFixtureError("openssl is not on PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = directory.appendingPathComponent("openssl-\(UUID().uuidString).out")
        let errors = directory.appendingPathComponent("openssl-\(UUID().uuidString).err")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        if let input {
            let inputFile = directory.appendingPathComponent("openssl-\(UUID().uuidString).in")
            try input.write(to: inputFile)
            process.standardInput = try FileHandle(forReadingFrom: inputFile)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw TLSFixtureError("openssl \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return (try? Data(contentsOf: output)) ?? Data()
    }
}

struct TLSFixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Certificates made with `openssl req` and `openssl x509` in a directory of the test's own:
/// a P-256 CA; leaves it signed for 127.0.0.1 and localhost (valid, and expired), and for
/// another name; a second, unrelated CA. ``remove()`` deletes the directory.
struct TestCertificates: Sendable {
    let directory: URL
    /// The CA that signed the leaves (PEM file), and a CA that signed nothing served here.
    let caFile: URL
    let otherCAFile: URL
    /// Server certificate/key files.
    let leaf: (certificate: URL, key: URL)
    let expiredLeaf: (certificate: URL, key: URL)
    let otherNameLeaf: (certificate: URL, key: URL)
    /// `sha256//…` of the leaves' key (all three leaves share one key).
    let leafPin: String

    /// Makes every file (blocking: a few openssl runs).
    static func make() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("curl-tls-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
        let p256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]

        for name in ["ca", "other-ca"] {
            try OpenSSLCommand.run(
                ["req", "-x509"] + p256 + [
                    "-keyout", "\(name).key", "-out", "\(name).pem", "-days", "30", "-subj",
                    "/CN=Transport test \(name)",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ], in: directory)
        }
        try OpenSSLCommand.run(
            ["req"] + p256 + ["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"],
            in: directory)
        func sign(_ name: String, names: String, days: String, serial: Int) throws -> (URL, URL) {
            let extensions = "subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            try Data(extensions.utf8).write(to: file("\(name).ext"))
            // A negative -days gives a notAfter before notBefore: a certificate already expired.
            try OpenSSLCommand.run(
                [
                    "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                    "-set_serial", "\(serial)", "-days", days, "-extfile", "\(name).ext",
                    "-out", "\(name).pem",
                ], in: directory)
            return (file("\(name).pem"), file("leaf.key"))
        }
        let leaf = try sign("leaf", names: "IP:127.0.0.1,DNS:localhost", days: "30", serial: 2)
        let expired = try sign("expired", names: "IP:127.0.0.1,DNS:localhost", days: "-1", serial: 3)
        let otherName = try sign("other-name", names: "DNS:other.example", days: "30", serial: 4)

        let publicKey = try OpenSSLCommand.run(["x509", "-in", "leaf.pem", "-pubkey", "-noout"], in: directory)
        let spki = try OpenSSLCommand.run(["pkey", "-pubin", "-outform", "DER"], in: directory, input: publicKey)
        let digest = try OpenSSLCommand.run(["dgst", "-sha256", "-binary"], in: directory, input: spki)
        return TestCertificates(
            directory: directory, caFile: file("ca.pem"), otherCAFile: file("other-ca.pem"),
            leaf: leaf, expiredLeaf: expired, otherNameLeaf: otherName,
            leafPin: "sha256//" + digest.base64EncodedString())
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// `openssl s_server -www` on 127.0.0.1 with a port the system picks: answers every TLS
/// request with a small HTTP/1.0 page. Until the reference backend speaks TLS, this is the test
/// servers' TLS end. ``stop()`` kills it and waits for it.
final class OpenSSLTestServer: @unchecked Sendable {
    // @unchecked: `process` is started in init and afterwards only signalled and waited for,
    // which Foundation synchronizes.
    let port: Int
    private let process: Process

    /// Starts the server and returns once it listens (blocking: call from a ``DedicatedThread``).
    init(certificate: URL, key: URL, in directory: URL) throws {
        guard let path = OpenSSLCommand.path else { throw TLSFixtureError("openssl is not on PATH") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate.path, "-key", key.path, "-www"]
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // "ACCEPT 127.0.0.1:PORT" once it listens. The pipe is then drained until the server
        // exits, so that nothing it prints can block it.
        let reader = output.fileHandleForReading
        var text = ""
        var found: Int?
        while found == nil {
            let chunk = reader.availableData
            if chunk.isEmpty { break }  // exited
            text += String(decoding: chunk, as: UTF8.self)
            found =
                text.split(whereSeparator: \.isNewline).lazy
                .filter { $0.hasPrefix("ACCEPT ") }
                .compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
                .first
        }
        guard let found else {
            process.waitUntilExit()
            throw TLSFixtureError("openssl s_server did not start: \(text)")
        }
        port = found
        Thread { while !reader.availableData.isEmpty {} }.start()
    }

    /// Stops the server and waits for it to exit. SIGKILL, not SIGTERM: the child inherits the
    /// test process's signal mask, in which SIGTERM may be blocked.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var url: URL { URL(string: "https://127.0.0.1:\(port)/")! }
}
