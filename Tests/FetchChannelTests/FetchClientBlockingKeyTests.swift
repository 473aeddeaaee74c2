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

    /// A fetch cancelled while its key loads (a TPM that stopped answering) reports
    /// `networkError(cancelled)` without waiting for the load, and the load, once it ends, is
    /// kept by its source: the next fetch signs without loading again.
    @Test func aFetchCancelledDuringItsKeysLoadDoesNotWaitForIt() async throws {
        let loads = Locked(0)
        let loadEnded = Locked(false)
        let release = DispatchSemaphore(value: 0)
        let (started, loading) = AsyncStream<Void>.makeStream()
        let key = try P256.Signing.PrivateKey()
        let registration = FetchRegistration(
            server: URL(string: "https://slow-key.example")!, deviceId: "device", dispatchTargetId: "target",
            signingKey: SigningKeySource(label: "a key in a TPM that does not answer") {
                loads.withLock { $0 += 1 }
                loading.yield()
                // Released once the fetch returned; were it waited for, the fetch would return
                // only after this wait.
                _ = release.wait(timeout: .now() + .seconds(LooseTimeBounds.scale * 10))
                loadEnded.withLock { $0 = true }
                return key
            })
        let transport = FakeTransport { _ in
            .answer(
                HTTPAnswer(
                    status: 200, headers: [WireHeader.contentType: WireMediaType.json],
                    body: Data(#"{"operations":[]}"#.utf8)))
        }
        let client = FetchClient(
            configuration: FetchClientConfiguration(), clock: SystemWallClock(), estimator: ClockSkewEstimator(),
            transport: transport, timer: NeverTimer())
        let fetch = Task { await client.pendingOutOfBandOperations([registration]) }
        for await _ in started { break }
        fetch.cancel()
        let cancelled = await fetch.value
        #expect(!loadEnded.withLock { $0 }, "returned before the load ended")
        release.signal()
        #expect(cancelled.errors.map { $0.networkFailure?.kind } == [.cancelled], "\(cancelled.errors)")
        #expect(transport.requests.isEmpty)

        // Waits for the load under way (its source's lock), then signs with its key.
        let next = await client.pendingOutOfBandOperations([registration])
        #expect(next.errors.isEmpty, "\(next.errors)")
        #expect(loads.withLock { $0 } == 1, "the load the cancelled fetch started is the key's one load")
        #expect(transport.requests.count == 1)
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

    /// A cancelled caller of `runUnlessCancelled` is resumed at once with `CancellationError`;
    /// the work it left ends on its thread. Were it waited for, the call would return 42 after
    /// the work's wait.
    @Test func aCancelledCallerDoesNotWaitForTheWork() async throws {
        let release = DispatchSemaphore(value: 0)
        let (started, running) = AsyncStream<Void>.makeStream()
        let ended = Locked(false)
        let call = Task {
            try await BlockingWork.runUnlessCancelled { () throws -> Int in
                running.yield()
                _ = release.wait(timeout: .now() + .seconds(LooseTimeBounds.scale * 10))
                ended.withLock { $0 = true }
                return 42
            }
        }
        for await _ in started { break }
        call.cancel()
        let result = await call.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(!ended.withLock { $0 }, "returned before the work ended")
        release.signal()
    }

    /// A caller cancelled before the work starts gets `CancellationError`, and the work never runs.
    @Test func workForACallerCancelledBeforeItStartsNeverRuns() async {
        let ran = Locked(false)
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingWork.runUnlessCancelled { ran.withLock { $0 = true } }
        }
        let result = await call.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(!ran.withLock { $0 })
    }

    /// Not cancelled, `runUnlessCancelled` returns what the work returns or throws, on a thread
    /// of its own or, without one, on the caller's.
    @Test func uncancelledWorkGivesItsResult() async throws {
        let noThread: BlockingWork.Spawn = { _ in false }
        #expect(try await BlockingWork.runUnlessCancelled { 7 } == 7)
        #expect(try await BlockingWork.runUnlessCancelled(spawn: noThread) { 8 } == 8)
        let thrown = await #expect(throws: DeviceSigningError.self) {
            try await BlockingWork.runUnlessCancelled { () throws -> Int in
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

    /// The signer cache lets go of an evicted TPM key's signer on a thread of its own: the
    /// last reference to a TPM key waits for its TPM to unload it, and the cache may be called
    /// on the task pool (a loaded key's registration). A software key's is let go where it is.
    @Test func anEvictedTPMSignerIsLetGoOffThePool() async throws {
        guard SoftwareTPM.available(for: "the signer cache's TPM eviction") else { return }
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        try evictSignersWithAKeyIn(tpm)
    }

    private func evictSignersWithAKeyIn(_ tpm: SoftwareTPM) throws {
        let tpmKey = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
        let softwareKey = try P256.Signing.PrivateKey()
        func registration(_ key: P256.Signing.PrivateKey) -> FetchRegistration {
            FetchRegistration(
                server: URL(string: "https://backend.example")!, deviceId: "device", dispatchTargetId: "target",
                signingKey: SigningKeySource(key))
        }
        let releases = Locked(0)
        func signer(for key: P256.Signing.PrivateKey, in cache: SignerCache) throws {
            _ = try BlockingWork.$observer.withValue({ releases.withLock { $0 += 1 } }) {
                try cache.signer(for: registration(key))
            }
        }
        let cache = SignerCache(clock: SystemWallClock())
        for _ in 0..<SignerCache.capacity { try signer(for: tpmKey, in: cache) }
        #expect(releases.withLock { $0 } == 0, "nothing evicted yet")
        try signer(for: softwareKey, in: cache)
        #expect(releases.withLock { $0 } == 1, "the TPM key's signer is let go off the pool")

        let softwareOnly = SignerCache(clock: SystemWallClock())
        for _ in 0...SignerCache.capacity { try signer(for: softwareKey, in: softwareOnly) }
        #expect(releases.withLock { $0 } == 1, "a software key's signer is let go where it is")
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
