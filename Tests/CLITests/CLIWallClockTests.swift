import DeviceSigning
import FetchChannelCLI
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

/// The commands that talk to a backend read the device clock from their context
/// (`CLIContext.wallClock`), as `sign` does: `fetch` stamps its Device-Signatures with it and `skew`
/// measures it. Run in-process against a reference backend on loopback, with a clock ten minutes
/// ahead of the real one; on a thread of their own, since the fetch's key work blocks.
@Suite(.dedicatedThread) struct CLIWallClockTests {
    static let tenMinutesMillis: Int64 = 600_000

    /// A store with one unencrypted key registered at `backend`; its directory.
    static func registeredStore(at backend: ReferenceBackend) throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cli-wall-clock-\(UUID().uuidString)", isDirectory: true)
        let key = try P256.Signing.PrivateKey()
        let store = try KeyStore(directory: directory)
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil, allowUnencrypted: true)
        let targetId = try backend.registerDispatchTarget(deviceId: "phone", signatureKey: key.publicKey)
        try store.updateMetadata(keyId) {
            $0.deviceId = "phone"
            $0.dispatchTargetId = targetId
            $0.server = backend.baseURL.absoluteString
        }
        return directory
    }

    static func context(_ directory: URL, clockAheadMillis: Int64) -> CLIContext {
        var context = CLIContext.inMemory(environment: ["HOME": directory.path])
        context.wallClock = ManualWallClock(millis: SystemWallClock().nowMillis() + clockAheadMillis)
        return context
    }

    /// The error codes of `fetch --json`, after asserting that it printed its object.
    static func fetchErrorCodes(_ directory: URL, clockAheadMillis: Int64) async throws -> [String] {
        let context = Self.context(directory, clockAheadMillis: clockAheadMillis)
        _ = await FetchChannelCLI.run(["fetch", "--json", "--store", directory.path], context: context)
        let output = Data(context.standardOutput.capturedText.utf8)
        let object = try #require(
            try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(context.standardError.capturedText)")
        let errors = try #require(object["errors"] as? [[String: Any]], "\(object)")
        return errors.compactMap { $0["code"] as? String }
    }

    @Test func fetchSignsWithTheContextsClock() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let directory = try Self.registeredStore(at: backend)
        defer { try? FileManager.default.removeItem(at: directory) }

        #expect(try await Self.fetchErrorCodes(directory, clockAheadMillis: 0) == [])
        #expect(
            try await Self.fetchErrorCodes(directory, clockAheadMillis: Self.tenMinutesMillis) == ["clockSkewTooBig"])
    }

    @Test func skewMeasuresTheContextsClock() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cli-wall-clock-\(UUID().uuidString)", isDirectory: true)
        let context = Self.context(directory, clockAheadMillis: Self.tenMinutesMillis)

        let status = await FetchChannelCLI.run(
            ["skew", "--server", backend.baseURL.absoluteString, "--samples", "1", "--json"], context: context)

        #expect(status == 1, "outside the tolerance: \(context.standardError.capturedText)")
        let output = Data(context.standardOutput.capturedText.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let offset = try #require(object["offsetMillis"] as? Int64, "\(object)")
        // The server is behind this device clock by ten minutes, give or take the header's second.
        #expect(abs(offset + Self.tenMinutesMillis) < 5_000, "\(offset)")
    }
}
