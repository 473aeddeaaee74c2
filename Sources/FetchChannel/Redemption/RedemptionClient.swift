import DeviceSigning
import FetchChannelWire
import Foundation

/// Redeems an operation's token: `POST {"token": …}` to the operation's `redeemUrl`.
///
/// Never throws: the outcome is the backend's answer or a ``RedemptionError``. The same transport
/// rules as the fetch: `https://`, or plain `http://` to a loopback host only (otherwise
/// `networkError(insecureTransport)` without a request); no redirects, no cookies or caches;
/// bodies bounded at 1 MiB; a per-request timeout; cancellation honoured. Redemption is not
/// retried here: whether a failed redemption may be retried is the pipeline's decision.
///
/// With ``registeredBackends`` set, a redeem URL must also be inside one of them
/// (``BackendOrigin/contains(_:)``), or it fails with `networkError(foreignRedeemUrl)` before any
/// request: an operation that arrives by push, link or QR code cannot send this device's
/// redemption to a place it never registered with. A fetched operation is already on its
/// backend's origin (the fetch drops the others).
///
/// Made from ``FetchRegistration``s (``init(requestTimeout:registrations:)``), it also redeems
/// with each backend's own ``TLSTrust``: a redeem URL inside a registered backend is checked
/// against that backend's CA bundle and pins, as its fetch is (docs/ARCHITECTURE.md, "Transport
/// and trust"); anything else against the system CAs.
public final class RedemptionClient: Sendable {
    /// Per request; at most one day: a longer one is cut to a day.
    public let requestTimeout: Duration
    /// The backends a redeem URL must be on; nil: no restriction (any https://, or http:// on loopback).
    public let registeredBackends: [BackendOrigin]?
    /// The trust of each registered backend.
    private let backendTrusts: [BackendTrust]
    private let transport: any HTTPTransport
    private let timer: any RequestTimer

    /// A registered backend and what its HTTPS server must present.
    private struct BackendTrust: Sendable {
        let origin: BackendOrigin
        let trust: TLSTrust
    }

    /// - Parameter registeredBackends: the base URLs of the backends this device is registered with
    ///   (``FetchRegistration/server``); a redeem URL outside all of them is refused. A URL that is
    ///   not a backend origin (``BackendOrigin/init(url:)``) admits nothing. Nil (the default)
    ///   restricts nothing: for a device with no registration yet, whose first operation is the
    ///   registration QR code.
    public convenience init(requestTimeout: Duration = .seconds(15), registeredBackends: [URL]? = nil) {
        self.init(
            requestTimeout: requestTimeout, transport: DefaultTransport.make(), timer: ContinuousRequestTimer(),
            registeredBackends: registeredBackends)
    }

    /// Redeems only inside the backends of `registrations` (as `registeredBackends` does), each
    /// with its registration's ``FetchRegistration/trust``: what a device registered with a
    /// private CA or pins hands its ``RedemptionPipeline``.
    public convenience init(requestTimeout: Duration = .seconds(15), registrations: [FetchRegistration]) {
        self.init(
            requestTimeout: requestTimeout, transport: DefaultTransport.make(), timer: ContinuousRequestTimer(),
            registrations: registrations)
    }

    convenience init(
        requestTimeout: Duration, transport: any HTTPTransport, timer: any RequestTimer,
        registeredBackends: [URL]? = nil
    ) {
        self.init(
            requestTimeout: requestTimeout, transport: transport, timer: timer,
            backends: registeredBackends.map { $0.map { ($0, TLSTrust.system) } })
    }

    convenience init(
        requestTimeout: Duration, transport: any HTTPTransport, timer: any RequestTimer,
        registrations: [FetchRegistration]
    ) {
        self.init(
            requestTimeout: requestTimeout, transport: transport, timer: timer,
            backends: registrations.map { ($0.server, $0.trust) })
    }

    private init(
        requestTimeout: Duration, transport: any HTTPTransport, timer: any RequestTimer,
        backends: [(url: URL, trust: TLSTrust)]?
    ) {
        self.requestTimeout = requestTimeout
        registeredBackends = backends.map { $0.compactMap { BackendOrigin(url: $0.url) } }
        backendTrusts = (backends ?? []).compactMap { backend in
            BackendOrigin(url: backend.url).map { BackendTrust(origin: $0, trust: backend.trust) }
        }
        self.transport = transport
        self.timer = timer
    }

    /// The trust a redemption at `url` must satisfy (``RedeemURLTrust``): that of the registered
    /// backend holding it, else the system CAs; a failure when its registrations disagree.
    package func trust(forRedeemURL url: URL) -> Result<TLSTrust, NetworkFailure> {
        RedeemURLTrust.choose(for: url, among: backendTrusts.map { ($0.origin, $0.trust) })
    }

    /// Redeems the token of an operation's payload (from a fetch, a push, a link or a QR code),
    /// with the trust of the registered backend that holds its redeem URL (the system CAs when
    /// none does).
    public func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> Result<RedeemedOperation, RedemptionError>
    {
        await redeem(payload.redeemData)
    }

    /// Redeems the token of an operation's payload at a backend with its own trust: pass the
    /// ``FetchRegistration/trust`` of the backend the operation came from.
    public func redeem(
        _ payload: PendingOutOfBandOperation.Payload,
        trust: TLSTrust
    ) async -> Result<RedeemedOperation, RedemptionError> {
        await redeem(payload.redeemData, trust: trust)
    }

    /// Redeems `redeemData.token` at `redeemData.redeemUrl`, with the trust of the registered
    /// backend that holds the URL (the system CAs when none does).
    public func redeem(_ redeemData: PendingOutOfBandOperation.RedeemData) async -> Result<
        RedeemedOperation, RedemptionError
    > {
        // Before the URL is parsed to find its backend: it may be of any size.
        if let refusal = Self.sizeRefusal(redeemData) { return .failure(refusal) }
        switch URL(string: redeemData.redeemUrl).map({ trust(forRedeemURL: $0) }) ?? .success(.system) {
        case .success(let backendTrust):
            return await redeem(redeemData, trust: backendTrust)
        case .failure(let ambiguity):
            return .failure(.networkError(url: URLUserInformation.masked(redeemData.redeemUrl), cause: ambiguity))
        }
    }

    /// Redeems `redeemData.token` at `redeemData.redeemUrl`, whose server must satisfy `trust`.
    public func redeem(
        _ redeemData: PendingOutOfBandOperation.RedeemData,
        trust: TLSTrust
    ) async -> Result<RedeemedOperation, RedemptionError> {
        // Before anything else: a token from a push, link or QR code was never decoded here.
        if let refusal = Self.sizeRefusal(redeemData) { return .failure(refusal) }
        // Errors name the URL without its user information (a password, perhaps).
        let urlText = URLUserInformation.masked(redeemData.redeemUrl)
        guard let url = URL(string: redeemData.redeemUrl) else {
            return .failure(.networkError(url: urlText, cause: NetworkFailure(.invalidURL, detail: "not a URL")))
        }
        if let refusal = foreignRefusal(for: url) ?? TransportSecurity.refusal(for: url) {
            return .failure(.networkError(url: urlText, cause: refusal))
        }
        if Task.isCancelled {
            return .failure(
                .networkError(url: urlText, cause: NetworkFailure(.cancelled, detail: "the redemption was cancelled")))
        }
        // JSONSerialization escapes the token correctly whatever it holds.
        let body = (try? JSONSerialization.data(withJSONObject: ["token": redeemData.token])) ?? Data()
        let request = TransportRequest(
            method: "POST", url: url,
            headers: [WireHeader.contentType: WireMediaType.json, WireHeader.accept: WireMediaType.json],
            body: body, timeout: requestTimeout, trust: trust)
        return Self.outcome(of: await transport.send(request, timer: timer), url: urlText, token: redeemData.token)
    }

    /// Why `redeemData` is refused for its size (a token over 1 KiB, a URL over 8 KiB), or nil.
    private static func sizeRefusal(_ redeemData: PendingOutOfBandOperation.RedeemData) -> RedemptionError? {
        guard let problem = redeemData.sizeProblem(at: "redeemData") else { return nil }
        let shown = URLUserInformation.masked(String(redeemData.redeemUrl.prefix(256)))
        return .unknown(url: shown, httpError: nil, reason: problem)
    }

    /// Nil when `url` is inside a registered backend, or has a usable origin and no restriction is
    /// set. Otherwise `foreignRedeemUrl` (outside the registered backends), or `invalidURL` for a
    /// URL without a usable origin (user info, dot segments, encoded separators) when no
    /// restriction is set: its ``RedemptionIdentity`` is `invalid:`, which would not keep it from
    /// being redeemed again under the spelling of the origin it really reaches.
    private func foreignRefusal(for url: URL) -> NetworkFailure? {
        guard let registeredBackends else {
            guard BackendOrigin(url: url) == nil else { return nil }
            return NetworkFailure(
                .invalidURL, detail: "it has no usable origin (user info, dot segments or encoded separators)")
        }
        guard !registeredBackends.contains(where: { $0.contains(url) }) else { return nil }
        let registered =
            registeredBackends.isEmpty
            ? "none registered" : registeredBackends.map(\.description).joined(separator: ", ")
        let place = BackendOrigin(url: url)?.description ?? "a URL without a usable origin"
        return NetworkFailure(.foreignRedeemUrl, detail: "\(place) is not inside a registered backend (\(registered))")
    }

    /// The error codes of a redemption error body (`errorCode`).
    public static let alreadyRedeemedErrorCode = WireErrorCode.tokenAlreadyRedeemed
    public static let expiredErrorCode = WireErrorCode.tokenExpired

    /// Maps what the redeem request came to. Pure.
    ///
    /// 1. No answer → `networkError`. Not HTTP, or a body over 1 MiB → `unknown`.
    /// 2. Status ≥ 400 with `errorCode` `TOKEN_ALREADY_REDEEMED` / `TOKEN_EXPIRED` (the emulator
    ///    and the backend use 410; the body decides, whatever the 4xx/5xx) → `tokenAlreadyRedeemed` /
    ///    `tokenExpired`.
    /// 3. 2xx with a JSON content type and a JSON object body → success; otherwise `unknown`.
    ///    Bodies are read as strictly as every other answer: a member name twice is not JSON.
    /// 4. Anything else → `unknown` with the status and excerpt.
    static func outcome(of result: TransportResult, url: String, token: String) -> Result<
        RedeemedOperation, RedemptionError
    > {
        let answer: HTTPAnswer
        switch result {
        case .failure(let cause): return .failure(.networkError(url: url, cause: cause))
        case .notHTTP(let detail):
            return .failure(.unknown(url: url, httpError: nil, reason: "The answer is not HTTP (\(detail))."))
        case .answer(let received): answer = received
        }
        let info = HTTPErrorInfo(status: answer.status, body: answer.body, redacting: [token])
        guard !answer.bodyWasCutOff else {
            return .failure(
                .unknown(
                    url: url, httpError: info, reason: "The answer is larger than \(HTTPAnswer.maximumBodyBytes) bytes."
                ))
        }
        // A success is read whole (the transport stopped it at 1 MiB): its body is the operation.
        // An error body is read only for its error code, so a large one is not parsed. Strictly:
        // with a member name twice (`errorCode`), which one counts is a parser's choice.
        let readLimit = (200...299).contains(answer.status) ? HTTPAnswer.maximumBodyBytes : 64 * 1_024
        var object: [String: JSONValue]?
        // A member name twice: said as such, not as "not a JSON object", which it looks like.
        var duplicate: StrictJSON.Violation?
        if answer.body.count <= readLimit {
            do throws(StrictJSON.Violation) {
                if case .object(let members) = try StrictJSON.parse(answer.body) { object = members }
            } catch {
                if case .duplicateMemberName = error { duplicate = error }
            }
        }
        if answer.status >= 400, case .string(let errorCode)? = object?[WireErrorCode.Member.errorCode] {
            if errorCode == alreadyRedeemedErrorCode.rawValue {
                return .failure(.tokenAlreadyRedeemed(url: url, httpError: info))
            }
            if errorCode == expiredErrorCode.rawValue { return .failure(.tokenExpired(url: url, httpError: info)) }
        }
        guard (200...299).contains(answer.status) else {
            return .failure(.unknown(url: url, httpError: info, reason: "The backend did not accept the token."))
        }
        let isJSON = answer.header(WireHeader.contentType).map(WireMediaType.isJSON) ?? false
        guard isJSON, let object else {
            // The duplicate is the reason only for what says it is JSON.
            // Its name is the backend's, and may be the token: redacted like an excerpt.
            var reason: String?
            if isJSON, case .duplicateMemberName(let name)? = duplicate {
                let shown = StrictJSON.Violation.duplicateMemberName(HTTPErrorInfo.redacted(name, [token]))
                reason = "The answer has a duplicate member: \(shown)."
            }
            return .failure(.unknown(url: url, httpError: info, reason: reason ?? "The answer is not a JSON object."))
        }
        return .success(RedeemedOperation(body: object))
    }
}
