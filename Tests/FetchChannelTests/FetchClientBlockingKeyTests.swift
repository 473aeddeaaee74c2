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
    /// More registrations than the pool has threads, each with a key whose load waits until the
    /// test lets it go. Run on the pool, the loads would take every thread, and nothing else (the
    /// test's own next step included) would run until they returned: a watchdog thread then lets
    /// them go after 10 s and the test fails.
    @Test func keysThatAreSlowToLoadHoldNoThreadOfTheTaskPool() async throws {
        let loads = ProcessInfo.processInfo.activeProcessorCount + 1
        let gate = DispatchSemaphore(value: 0)
        let allStarted = CountdownLatch(loads)
        let registrations = (0..<loads).map { index in
            FetchRegistration(
                server: URL(string: "https://b\(index).example")!, deviceId: "device", dispatchTargetId: "target",
                signingKey: SigningKeySource(label: "slow key \(index)") {
                    allStarted.countDown()
                    gate.wait()
                    throw DeviceSigningError(.tpmUnavailable, "the test's TPM did not answer")
                })
        }
        let transport = FakeTransport { _ in .failure(NetworkFailure(.other, detail: "not reached")) }
        let client = FetchClient(
            configuration: FetchClientConfiguration(), clock: ManualWallClock(millis: 1_700_000_000_000),
            estimator: ClockSkewEstimator(), transport: transport, timer: NeverTimer())

        let progressed = DispatchSemaphore(value: 0)
        let watchdogFired = Locked(false)
        Thread {
            if progressed.wait(timeout: .now() + 10) == .timedOut {
                watchdogFired.withLock { $0 = true }
                for _ in 0..<loads { gate.signal() }
            }
        }.start()

        let fetch = Task { await client.pendingOutOfBandOperations(registrations) }
        await allStarted.wait()  // resumed on the pool while every load is waiting
        progressed.signal()
        for _ in 0..<loads { gate.signal() }
        let result = await fetch.value

        #expect(!watchdogFired.withLock { $0 }, "the loads held the task pool's threads")
        #expect(result.errors.count == loads)
        #expect(result.errors.allSatisfy { $0.code == "deviceProtectionError" }, "\(result.errors)")
        #expect(transport.requests.isEmpty)
    }
}

/// A registration whose signing and encryption keys are in a (software) TPM: signing and
/// decrypting run on threads of their own and give the same result as on the pool.
@Suite(.dedicatedThread) struct FetchClientTPMKeyTests {
    @Test func aTPMBoundRegistrationSignsAndDecryptsOffThePool() async throws {
        if let missing = SoftwareTPM.missingPrerequisites {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("this TPM check needs \(missing), and CI=true: install swtpm swtpm-tools tpm2-openssl.")
            } else {
                print("⚠️  SKIPPED: the TPM-bound fetch: \(missing). This check did NOT run.")
            }
            return
        }
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
        let result = await client.pendingOutOfBandOperations([registration])
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.operations.map(\.token) == ["tpm-token"])
    }
}

/// Resumes its waiter once `count` count-downs happened (before or after it started waiting).
final class CountdownLatch: Sendable {
    private struct State {
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state: Locked<State>

    init(_ count: Int) { state = Locked(State(remaining: count)) }

    func countDown() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.remaining <= 0 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
