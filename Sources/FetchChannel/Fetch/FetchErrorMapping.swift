import DeviceSigning
import FetchChannelWire
import Foundation

/// Turns what one pending-operations request came to into the operations or one typed error.
///
/// Pure: the caller supplies the clock-skew state. The client records the answer's `Date`
/// sample first (``recordSample(of:sentAtMillis:receivedAtMillis:server:into:)``), then maps
/// with the estimate that includes it. Checked row by row by `Vectors/error-mapping.json`.
///
/// The rules, in order:
/// 1. No answer (``TransportResult/failure(_:)``) → `networkError` with that cause.
/// 2. Bytes that are not HTTP (``TransportResult/notHTTP(_:)``) → `invalidResponse` (`notHTTP`).
/// 3. A body larger than 1 MiB, cut off by the transport → `invalidResponse` (`tooLarge`), whatever the status:
///    the answer was not read, so nothing in it is trusted.
/// 4. Clock skew (``ClockSkewClassification/classify(status:body:estimatedOffsetMillis:toleranceMillis:server:requestCreationMillis:)``):
///    definite (status ≥ 400 with `errorCode` `CLOCK_SKEW_TOO_BIG`) or probable
///    (401/403 while |estimate − the offset the request was signed with| > tolerance) →
///    `clockSkewTooBig` with the measured offset.
/// 5. 2xx → the body must have a JSON content type (`application/json` or `application/*+json`,
///    parameters allowed) and decode strictly (``PendingOperationsDecoder``) → the operations;
///    otherwise `invalidResponse` (`malformed`; `undecryptable` for a JWE). This includes 204 and other 2xx without a usable body: the
///    endpoint always answers `{"operations":[…]}`, even when there are none.
/// 6. 401, 403 → `unauthorized`.
/// 7. 404, 405, 501 → `operationNotSupportedByBackend`.
/// 8. Any other 5xx → `serverError`.
/// 9. Everything else (1xx, 3xx — redirects are never followed —, 400, other 4xx, < 100, ≥ 600)
///    → `unknown` with the status and excerpt.
public enum FetchErrorMapping {
    /// What the mapping needs besides the transport's result.
    public struct Context: Sendable, Hashable {
        /// The backend's base URL, named by every error.
        public var server: String
        /// The estimator's offset for `server` after recording this answer's sample.
        public var estimatedOffsetMillis: Int64?
        /// The backend's clock tolerance.
        public var toleranceMillis: Int64
        /// The device clock (without any compensation offset) when the request was signed.
        public var requestCreationMillis: Int64?
        /// The request's Device-Signature value: redacted from every body excerpt.
        public var deviceSignature: String?
        /// The clock offset the request was signed with (``ClockSkewPolicy/compensate(maximumOffsetMillis:)``;
        /// 0 without): a 401/403 is probable skew only if the estimate is still off after it.
        public var signedWithOffsetMillis: Int64

        public init(
            server: String, estimatedOffsetMillis: Int64?, toleranceMillis: Int64,
            requestCreationMillis: Int64? = nil, deviceSignature: String? = nil, signedWithOffsetMillis: Int64 = 0
        ) {
            self.server = server
            self.estimatedOffsetMillis = estimatedOffsetMillis
            self.toleranceMillis = toleranceMillis
            self.requestCreationMillis = requestCreationMillis
            self.deviceSignature = deviceSignature
            self.signedWithOffsetMillis = signedWithOffsetMillis
        }
    }

    /// The operations of a usable answer (in the order sent, each tagged with the server), or the error.
    public static func map(_ result: TransportResult, context: Context)
        -> Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError>
    {
        evaluate(result, context: context).result
    }

    /// Records the sample that `answer`'s `Date` gives (none with an `Age` header or no usable
    /// `Date`) and returns it; the estimate for `server` then includes it.
    @discardableResult
    public static func recordSample(
        of answer: HTTPAnswer, sentAtMillis: Int64, receivedAtMillis: Int64,
        server: String, into estimator: ClockSkewEstimator
    ) -> ClockSkewSample? {
        guard
            let sample = ClockSkewSample.from(
                dateHeader: answer.header(WireHeader.date), ageHeader: answer.header(WireHeader.age),
                sentAtMillis: sentAtMillis, receivedAtMillis: receivedAtMillis)
        else { return nil }
        estimator.record(sample, for: server)
        return sample
    }

    /// The mapping and the clock-skew classification it was based on (for the retry policy).
    /// With `decryptionKey`, a 2xx answer must be an `application/jose` JWE to that key
    /// (docs/ARCHITECTURE.md, "Encrypted answers"); error answers are JSON either way.
    static func evaluate(
        _ result: TransportResult, context: Context,
        decryptionKey: P256.KeyAgreement.PrivateKey? = nil
    )
        -> (
            result: Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError>,
            classification: ClockSkewClassification
        )
    {
        let server = context.server
        let answer: HTTPAnswer
        switch result {
        case .failure(let cause):
            return (.failure(.networkError(server: server, cause: cause)), .notSkew)
        case .notHTTP(let detail):
            return (.failure(invalid(.notHTTP, "The answer is not HTTP (\(detail)).", server: server)), .notSkew)
        case .answer(let received):
            answer = received
        }
        guard !answer.bodyWasCutOff else {
            let reason =
                "The answer (HTTP \(answer.status)) is larger than \(HTTPAnswer.maximumBodyBytes) bytes; it was cut off and not used."
            return (.failure(invalid(.tooLarge, reason, server: server)), .notSkew)
        }

        let classification = ClockSkewClassification.classify(
            status: answer.status, body: answer.body, estimatedOffsetMillis: context.estimatedOffsetMillis,
            toleranceMillis: context.toleranceMillis, server: server,
            requestCreationMillis: context.requestCreationMillis,
            signedWithOffsetMillis: context.signedWithOffsetMillis)
        let info = {
            HTTPErrorInfo(
                status: answer.status, body: answer.body, redacting: context.deviceSignature.map { [$0] } ?? [])
        }
        if let skew = classification.clockSkew {
            let error = PendingOutOfBandOperationsError.clockSkewTooBig(
                server: server, measuredOffsetMillis: skew.measuredOffsetMillis, toleranceMillis: skew.toleranceMillis,
                httpError: info())
            return (.failure(error), classification)
        }

        switch answer.status {
        case 200...299:
            if let decryptionKey {
                return (decrypt(answer, with: decryptionKey, server: server), .notSkew)
            }
            return (decode(answer, server: server), .notSkew)
        case 401, 403:
            return (.failure(.unauthorized(server: server, httpError: info())), .notSkew)
        case 404, 405, 501:
            return (.failure(.operationNotSupportedByBackend(server: server, httpError: info())), .notSkew)
        case 500...599:
            return (.failure(.serverError(server: server, httpError: info())), .notSkew)
        default:
            return (.failure(.unknown(server: server, httpError: info())), .notSkew)
        }
    }

    /// Why an answer (HTTP `status`) to a request for JSON is not read as operations by its
    /// `contentType` (none, a JWE's, or not JSON), or nil when it says JSON. `rotate`'s key probe
    /// asks the same.
    package static func contentTypeProblem(_ contentType: String?, status: Int) -> InvalidResponse? {
        guard let contentType else {
            let reason = "The answer (HTTP \(status)) has no Content-Type; \(WireMediaType.json) was expected."
            return InvalidResponse(.malformed, reason: reason)
        }
        // A JWE in either serialization: encrypted, so not something to read as operations.
        guard !WireMediaType.isJOSE(contentType), !WireMediaType.isJOSEJSON(contentType) else {
            let reason =
                "The answer is \(QuotedText.shown(contentType)), but this registration has no encryption key "
                + "and asked for \(WireMediaType.json)."
            return InvalidResponse(.undecryptable, reason: reason)
        }
        guard WireMediaType.isJSON(contentType) else {
            let reason = "The answer (HTTP \(status)) is \(QuotedText.shown(contentType)), not \(WireMediaType.json)."
            return InvalidResponse(.malformed, reason: reason)
        }
        return nil
    }

    private static func decode(_ answer: HTTPAnswer, server: String)
        -> Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError>
    {
        if let problem = contentTypeProblem(answer.header(WireHeader.contentType), status: answer.status) {
            return .failure(.invalidResponse(server: server, cause: problem))
        }
        do {
            return .success(try PendingOperationsDecoder.decode(answer.body, server: server))
        } catch {
            // Its kind as the decoder gave it (tooLarge too), not always malformed.
            return .failure(.invalidResponse(server: server, cause: error))
        }
    }

    /// A 2xx answer to a request that asked for `application/jose`: decrypted with `key`, then
    /// decoded like a JSON answer. An answer that is not a JWE, or does not decrypt, is
    /// `invalidResponse` of kind `undecryptable`; nothing of it is used. A key whose TPM cannot be
    /// used now is `deviceProtectionError`, as for signing.
    private static func decrypt(_ answer: HTTPAnswer, with key: P256.KeyAgreement.PrivateKey, server: String)
        -> Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError>
    {
        let undecryptable = { (why: String) -> Result<[PendingOutOfBandOperation], PendingOutOfBandOperationsError> in
            .failure(invalid(.undecryptable, why, server: server))
        }
        let contentType = answer.header(WireHeader.contentType) ?? ""
        guard WireMediaType.isJOSE(contentType) else {
            let shown = contentType.isEmpty ? "without a Content-Type" : QuotedText.shown(contentType)
            return undecryptable(
                "The answer (HTTP \(answer.status)) is \(shown), not the \(WireMediaType.jose) asked for.")
        }
        // Decrypted from the bytes as received: no String of the whole body (whose UTF-8 check and
        // copy cost more than a tenth of the decryption); the parse refuses any byte that is not
        // a dot or base64url.
        let plaintext: Data
        do {
            plaintext = try JWE.decrypt(compact: JOSEAnswerBody.compact(in: answer.body), with: key)
        } catch let error as DeviceSigningError where error.code.isTPMFailure {
            // The registration's key could not be used: the device's problem, not the answer's.
            return .failure(.deviceProtectionError(server: server, reason: FetchClient.reason(error)))
        } catch {
            return undecryptable(
                "The answer does not decrypt with this registration's encryption key: "
                    + reason(of: error))
        }
        do {
            return .success(try PendingOperationsDecoder.decode(plaintext, server: server))
        } catch {
            // Its kind as the decoder gave it (tooLarge too), not always malformed.
            return .failure(.invalidResponse(server: server, cause: error))
        }
    }

    private static func invalid(_ kind: InvalidResponse.Kind, _ reason: String, server: String)
        -> PendingOutOfBandOperationsError
    {
        .invalidResponse(server: server, cause: InvalidResponse(kind, reason: reason))
    }

    private static func reason(of error: any Error) -> String {
        (error as? DeviceSigningError).map { "\($0.reason) (\($0.code))" } ?? "\(error)"
    }
}
