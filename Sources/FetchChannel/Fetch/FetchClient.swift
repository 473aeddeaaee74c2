import DeviceSigning
import FetchChannelWire
import Foundation

/// Fetches the pending out-of-band operations of this device from every backend it is registered
/// on, at once.
///
/// ``pendingOutOfBandOperations(_:)`` never throws for a backend's failure: every backend is asked
/// concurrently (a task group), each failure becomes one typed error naming its server
/// (``FetchErrorMapping``), and the operations of the others are returned, merged.
///
/// A backend's operations whose redeem URL is not on that backend (``RedeemOriginCheck``) are
/// dropped, and that backend gets one `invalidResponse` naming both origins; its other operations
/// are still returned, so one backend can yield operations and an error.
///
/// Each request is new: a fresh Device-Signature (new request id, creation time, signature), the
/// configured timeout, and `Accept: application/jose;charset=UTF-8` when the registration has an
/// encryption key (the answer is then decrypted with it), `Accept: application/json` without one.
/// Requests go only to `https://` or to plain
/// `http://` on a loopback host; anything else fails with `networkError(insecureTransport)`
/// before a request is made.
///
/// Clock skew: every answer's `Date` is a sample for ``estimator`` (one per client, or shared
/// by injecting it). With `.report` a skewed request fails with `clockSkewTooBig`. With
/// `.compensate(maximumOffsetMillis:)`:
/// - the first request is already signed with device time + the current estimate, when that
///   estimate is known, above the retry threshold and within the maximum;
/// - a request that fails with clock skew is retried once, with a new request signed at device
///   time + the new estimate, or the backend's measurement of the failed request when the
///   estimate would sign it the same way, as ``ClockSkewPolicy/decision(for:signedWithOffsetMillis:newEstimateMillis:isRetry:thresholdMillis:)``
///   decides (never twice; never when the offset did not move by more than the threshold);
/// - when a retry signed with the measurement is accepted (answered 2xx), the server's samples
///   were stale (the device clock was set since): they are forgotten, and the accepted answer's
///   is the first.
///
/// Cancelling the calling task cancels every request; backends that had not answered report
/// `networkError(cancelled)`, at once: key work under way on a thread of its own (a first load,
/// a TPM's signature or decryption) ends there, unwaited for.
public final class FetchClient: Sendable {
    public let configuration: FetchClientConfiguration
    /// The clock offsets measured per server (keyed by ``FetchRegistration/serverName``).
    public let estimator: ClockSkewEstimator
    private let clock: any WallClock
    private let transport: any HTTPTransport
    private let timer: any RequestTimer
    private let signers: SignerCache

    /// A client over the package's one transport (``DefaultTransport``).
    ///
    /// - Parameters:
    ///   - clock: the device clock: creation times and the times of samples.
    ///   - estimator: pass one to share clock estimates (for example with the redemption client).
    public convenience init(
        configuration: FetchClientConfiguration = FetchClientConfiguration(),
        clock: any WallClock = SystemWallClock(),
        estimator: ClockSkewEstimator = ClockSkewEstimator()
    ) {
        self.init(
            configuration: configuration, clock: clock, estimator: estimator,
            transport: DefaultTransport.make(), timer: ContinuousRequestTimer())
    }

    init(
        configuration: FetchClientConfiguration, clock: any WallClock, estimator: ClockSkewEstimator,
        transport: any HTTPTransport, timer: any RequestTimer
    ) {
        self.configuration = configuration
        self.clock = clock
        self.estimator = estimator
        self.transport = transport
        self.timer = timer
        self.signers = SignerCache(clock: clock)
    }

    /// What one registration yielded: its usable operations, and its error if it had one (a
    /// failure, with no operations; or operations on another origin, dropped, next to the others).
    typealias BackendOutcome = (operations: [PendingOutOfBandOperation], error: PendingOutOfBandOperationsError?)

    /// The operations pending on all `registrations`, and one error per registration that failed
    /// or returned operations on another origin.
    public func pendingOutOfBandOperations(_ registrations: [FetchRegistration]) async
        -> PendingOutOfBandOperationsResult
    {
        // One backend (the common case) needs no task of its own: same cancellation, no hop.
        if registrations.count == 1 {
            let outcome = await fetch(registrations[0])
            return PendingOutOfBandOperationsResult(
                operations: OperationOrdering.merged([outcome.operations]), errors: outcome.error.map { [$0] } ?? [])
        }
        let outcomes = await withTaskGroup(of: (Int, BackendOutcome).self) { group in
            for (index, registration) in registrations.enumerated() {
                group.addTask { (index, await self.fetch(registration)) }
            }
            var outcomes = [BackendOutcome?](repeating: nil, count: registrations.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.compactMap { $0 }  // every task reports
        }
        return PendingOutOfBandOperationsResult(
            operations: OperationOrdering.merged(outcomes.map(\.operations)),
            errors: outcomes.compactMap(\.error))
    }

    /// One registration: its answer's operations that are on its origin, and its error.
    func fetch(_ registration: FetchRegistration) async -> BackendOutcome {
        switch await request(registration) {
        case .success(let operations):
            return RedeemOriginCheck.admitted(operations, origin: registration.origin, server: registration.serverName)
        case .failure(let error):
            return ([], error)
        }
    }

    /// One registration's answer: at most two requests (the second only as the compensated retry).
    private func request(_ registration: FetchRegistration)
        async -> Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError>
    {
        let server = registration.serverName
        let url: URL
        switch registration.pendingOperationsRequestURL {
        case .success(let made): url = made
        case .failure(let problem):
            return .failure(.networkError(server: server, cause: NetworkFailure(.invalidURL, detail: problem.text)))
        }
        if let refusal = TransportSecurity.refusal(for: url) {
            return .failure(.networkError(server: server, cause: refusal))
        }
        let signer: DeviceSignatureSigner
        do {
            let signers = signers
            signer =
                registration.signingKey.isLoaded
                ? try signers.signer(for: registration)
                : try await BlockingWork.runUnlessCancelled { try signers.signer(for: registration) }
        } catch {
            return .failure(Task.isCancelled ? Self.cancelled(server) : Self.deviceProtectionError(error, server))
        }

        let policy = configuration.clockSkewPolicy
        var offset = initialOffset(for: server)
        var isRetry = false
        // The retry is signed with the backend's measurement, not the estimate.
        var signedWithMeasurement = false
        while true {
            if Task.isCancelled { return .failure(Self.cancelled(server)) }
            let creation = clock.nowMillis()
            let signature: String
            do {
                let signedOffset = offset
                signature =
                    signer.isHardwareBound
                    ? try await BlockingWork.runUnlessCancelled { try signer.headerValue(offsetMillis: signedOffset) }
                    : try signer.headerValue(offsetMillis: offset)
            } catch {
                return .failure(Task.isCancelled ? Self.cancelled(server) : Self.deviceProtectionError(error, server))
            }
            let request = TransportRequest(
                method: "GET", url: url,
                headers: [WireHeader.deviceSignature: signature, WireHeader.accept: registration.acceptedMediaType],
                body: nil, timeout: configuration.requestTimeout, trust: registration.trust)
            let sent = clock.nowMillis()
            let result = await transport.send(request, timer: timer)
            let received = clock.nowMillis()
            if case .answer(let answer) = result {
                FetchErrorMapping.recordSample(
                    of: answer, sentAtMillis: sent, receivedAtMillis: received, server: server, into: estimator)
            }
            let estimate = estimator.estimatedOffsetMillis(for: server)
            let context = FetchErrorMapping.Context(
                server: server, estimatedOffsetMillis: estimate,
                toleranceMillis: registration.toleranceMillis,
                requestCreationMillis: creation, deviceSignature: signature, signedWithOffsetMillis: offset)
            let decryptionKey = registration.encryptionKey
            let evaluated =
                decryptionKey?.isHardwareBound == true
                ? try? await BlockingWork.runUnlessCancelled {
                    FetchErrorMapping.evaluate(result, context: context, decryptionKey: decryptionKey)
                }
                : FetchErrorMapping.evaluate(result, context: context, decryptionKey: decryptionKey)
            guard let evaluated else { return .failure(Self.cancelled(server)) }
            let (mapped, classification) = evaluated
            let decision = policy.decision(
                for: classification, signedWithOffsetMillis: offset, newEstimateMillis: estimate,
                isRetry: isRetry, thresholdMillis: configuration.retryThresholdMillis)
            if isRetry, signedWithMeasurement, case .answer(let answer) = result, (200..<300).contains(answer.status),
                case .success = mapped
            {
                // Accepted with the backend's measurement where the estimate was refused: its
                // samples are stale (the device clock was set since), and the next fetch would be
                // signed with them. Only on an answer that accepted the request and was used: one
                // refusal from a node that is off, a proxy's 502 with a Date of its own, or a 2xx
                // whose body is not the backend's answer, cannot wipe a good median by itself.
                estimator.reset(server: server)
                FetchErrorMapping.recordSample(
                    of: answer, sentAtMillis: sent, receivedAtMillis: received, server: server, into: estimator)
            }
            guard case .retry(let newOffset) = decision, !Task.isCancelled else { return mapped }
            signedWithMeasurement = estimate.map { newOffset != $0 } ?? false
            offset = newOffset
            isRetry = true
        }
    }

    /// With `.compensate`, the first request is signed with the known estimate when it is worth
    /// it (beyond the retry threshold) and allowed (within the maximum); otherwise with none.
    private func initialOffset(for server: String) -> Int64 {
        guard case .compensate(let maximum) = configuration.clockSkewPolicy,
            let estimate = estimator.estimatedOffsetMillis(for: server),
            estimate.magnitude > UInt64(max(0, configuration.retryThresholdMillis)),
            estimate.magnitude <= UInt64(max(0, maximum))
        else { return 0 }
        return estimate
    }

    /// A fetch cancelled before its answer was used: not the key's failure, even when the
    /// cancellation ended the key's work (``BlockingWork/runUnlessCancelled(spawn:_:)``).
    private static func cancelled(_ server: String) -> PendingOutOfBandOperationsError {
        .networkError(server: server, cause: NetworkFailure(.cancelled, detail: "the fetch was cancelled"))
    }

    private static func deviceProtectionError(_ error: any Error, _ server: String) -> PendingOutOfBandOperationsError {
        .deviceProtectionError(server: server, reason: reason(error))
    }

    /// A key or signing failure in words for `deviceProtectionError`.
    static func reason(_ error: any Error) -> String {
        if let error = error as? DeviceSigningError {
            let text = error.reason.hasSuffix(".") ? error.reason : error.reason + "."
            return "\(text) (\(error.code))"
        }
        return "\(error)."
    }
}
