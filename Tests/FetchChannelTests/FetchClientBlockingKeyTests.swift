import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannel

/// Key work that may wait for long (a first load, a TPM) holds no thread of the task pool.
/// Not on a dedicated thread: the fetch's tasks must run on the task pool, as an app's do.
@Suite struct FetchClientBlockingKeyTests {
    /// A key's first load (a file, a passphrase's derivation, a TPM) runs on a thread of
    /// ``BlockingWork``, not on the pool, where keys slow to load would take every thread; a
    /// loaded software key signs on the pool.
    @Test func aKeysFirstLoadRunsOnAThreadOfItsOwn() async throws {
        let runs = Locked(0)
        let registrations = (0..<3).map { index in
            FetchRegistration(
                server: URL(string: "https://b\(index).example")!, deviceId: "device", dispatchTargetId: "target",
                signingKey: SigningKeySource(label: "key \(index)") {
                    throw DeviceSigningError(.tpmUnavailable, "the test's TPM did not answer")
                })
        }
        let transport = FakeTransport { _ in .failure(NetworkFailure(.other, detail: "not reached")) }
        let client = FetchClient(
            configuration: FetchClientConfiguration(), clock: ManualWallClock(millis: 1_700_000_000_000),
            estimator: ClockSkewEstimator(), transport: transport, timer: NeverTimer())
        let loaded = FetchRegistration(
            server: URL(string: "https://loaded.example")!, deviceId: "device", dispatchTargetId: "target",
            key: try P256.Signing.PrivateKey())
        let result = await BlockingWork.$observer.withValue({ runs.withLock { $0 += 1 } }) {
            await client.pendingOutOfBandOperations(registrations + [loaded])
        }
        #expect(runs.withLock { $0 } == 3, "each first load off the pool, the loaded key's signature on it")
        #expect(result.errors.filter { $0.code == "deviceProtectionError" }.count == 3, "\(result.errors)")
        #expect(transport.requests.map(\.url.host) == ["loaded.example"])
    }
}

/// Where no thread can be made, the work runs on the caller's thread rather than never.
@Suite struct BlockingWorkTests {
    @Test func workRunsOnTheCallersThreadWhenNoThreadCanBeMade() async {
        let noThread: BlockingWork.Spawn = { _ in false }
        #expect(await BlockingWork.run(spawn: noThread) { 42 } == 42)
        let thrown = await #expect(throws: DeviceSigningError.self) {
            try await BlockingWork.run(spawn: noThread) { () throws -> Int in
                throw DeviceSigningError(.tpmUnavailable, "no TPM")
            }
        }
        #expect(thrown?.code == .tpmUnavailable)
    }

    @Test func workRunsOnAThreadOfItsOwn() async throws {
        let caller = pthread_self()
        let ranElsewhere = await BlockingWork.run { pthread_equal(pthread_self(), caller) == 0 }
        #expect(ranElsewhere)
    }
}

/// A registration whose signing and encryption keys are in a (software) TPM: signing and
/// decrypting run on threads of their own and give the same result as on the pool.
@Suite(.dedicatedThread) struct FetchClientTPMKeyTests {
    @Test func aTPMBoundRegistrationSignsAndDecryptsOffThePool() async throws {
        guard SoftwareTPM.available(for: "the TPM-bound fetch") else { return }
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        // The keys go before the TPM stops (they are flushed from it when released).
        try await fetchWithKeysIn(tpm)
    }

    private func fetchWithKeysIn(_ tpm: SoftwareTPM) async throws {
        let signingKey = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
        let encryptionKey = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm.configuration())
        let server = "https://backend.example"
        let plaintext = #"{"operations":[\#(FakeBackend.operation(10, "link", "tpm-token", server: server))]}"#
        let body = try JWE.encrypt(Array(plaintext.utf8), to: encryptionKey.publicKey)
        let publicKey = signingKey.publicKey
        let verifier = try DeviceSignatureVerifier(clock: SystemWallClock()) { $0 == "target" ? publicKey : nil }
        let transport = FakeTransport { request in
            guard case .success = verifier.verify(request.headers[WireHeader.deviceSignature] ?? "") else {
                return .answer(HTTPAnswer(status: 401, headers: [:], body: Data()))
            }
            return .answer(
                HTTPAnswer(status: 200, headers: [WireHeader.contentType: WireMediaType.jose], body: Data(body.utf8)))
        }
        let client = FetchClient(
            configuration: FetchClientConfiguration(), clock: SystemWallClock(), estimator: ClockSkewEstimator(),
            transport: transport, timer: NeverTimer())
        let registration = FetchRegistration(
            server: URL(string: server)!, deviceId: "device", dispatchTargetId: "target",
            signingKey: SigningKeySource(signingKey), encryptionKey: encryptionKey)
        let runs = Locked(0)
        let result = await BlockingWork.$observer.withValue({ runs.withLock { $0 += 1 } }) {
            await client.pendingOutOfBandOperations([registration])
        }
        #expect(runs.withLock { $0 } == 2, "the signature and the decryption off the pool")
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.operations.map(\.token) == ["tpm-token"])
    }
}
