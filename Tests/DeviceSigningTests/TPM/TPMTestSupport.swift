import Foundation
import Testing

@testable import DeviceSigning

/// Runs blocking work (swtpm, TPM round trips, subprocesses) on a thread of its own, not on the
/// cooperative pool that the other tests need meanwhile.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// The error `body` throws, if any.
func caught(_ body: () throws -> Void) -> DeviceSigningError? {
    do {
        try body()
        return nil
    } catch let error as DeviceSigningError {
        return error
    } catch {
        return DeviceSigningError(.openSSLFailure, "not a DeviceSigningError: \(error)")
    }
}

func caughtCode(_ body: () throws -> Void) -> DeviceSigningError.Code? { caught(body)?.code }

func caughtReason(_ body: () throws -> Void) -> String { caught(body)?.reason ?? "" }

/// Checks of signatures with OpenSSL itself (`openssl dgst`, through `OpenSSLTool`).
enum OpenSSLVerification {
    /// `openssl dgst -sha256 -verify` exit statuses for the signature over `message` ("right")
    /// and over `message` with one more byte ("wrong"); nil (and a loud note) without `openssl`.
    static func verify(
        signature: P256.Signing.ECDSASignature, message: [UInt8],
        publicKeyPEM: String
    ) throws -> [String: Int32]? {
        guard OpenSSLTool.isAvailable else {
            print("⚠️  SKIPPED: openssl is not on PATH; the check with plain OpenSSL did NOT run.")
            return nil
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("openssl-verify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicKey = directory.appendingPathComponent("public.pem")
        let signatureFile = directory.appendingPathComponent("signature.der")
        try Data(publicKeyPEM.utf8).write(to: publicKey)
        try Data(signature.derRepresentation).write(to: signatureFile)
        var verdicts: [String: Int32] = [:]
        for (name, bytes) in [("right", message), ("wrong", message + [0])] {
            let messageFile = directory.appendingPathComponent("\(name).bin")
            try Data(bytes).write(to: messageFile)
            verdicts[name] = try OpenSSLTool.run([
                "dgst", "-sha256", "-verify", publicKey.path,
                "-signature", signatureFile.path, messageFile.path,
            ]).status
        }
        return verdicts
    }
}
