import DeviceSigning
import FetchChannelWire
import Foundation

/// The answers the emulated backend gives, in one place so every error body has the same shape:
/// `{"errorCode": CODE, "message": text}` (plus `serverTimeInEpochMillis` for clock skew).
enum BackendResponses {
    /// An answer that ends a request early, carried through `Result`: its status is the code,
    /// the body it answers with the reason. Equal when the statuses are.
    struct Refusal: CodedError {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }

        var code: HTTPStatus { HTTPStatus(response.status) }
        var reason: String { String(decoding: response.body, as: UTF8.self) }
    }

    /// `object` as JSON with `status`; ``serializationFailed`` when it cannot be written, which
    /// the emulator's own answers (strings, numbers, arrays and dictionaries) always can.
    static func json(_ status: HTTPStatus, _ object: [String: Any]) -> HTTPResponse {
        (try? HTTPResponse.json(status: status.code, jsonObject: object)) ?? serializationFailed
    }

    /// The answer when an answer cannot be written as JSON: 500, since the fault is the emulator's,
    /// with a fixed error body, so that this answer cannot fail in turn. Not `{}` with the status
    /// asked for: a 200 `{}` for the statistics or a redemption would pass for a success that
    /// says nothing, and a `{}` error body has no code for the client to classify.
    static let serializationFailed = HTTPResponse.json(
        status: HTTPStatus.internalServerError.code,
        Data(
            ("{\"\(WireErrorCode.Member.errorCode)\":\"\(WireErrorCode.serializationFailed.rawValue)\","
                + "\"\(WireErrorCode.Member.message)\":\"The emulator could not write its answer as JSON.\"}").utf8))

    static func error(_ status: HTTPStatus, _ code: WireErrorCode, _ message: String, extra: [String: Any] = [:])
        -> HTTPResponse
    {
        var body: [String: Any] = [
            WireErrorCode.Member.errorCode: code.rawValue, WireErrorCode.Member.message: message,
        ]
        body.merge(extra) { current, _ in current }
        return json(status, body)
    }

    /// The answer to `rejection`: its status and code, and `message` (its reason by default).
    static func rejection(_ rejection: DeviceSignatureRejection, message: String? = nil) -> HTTPResponse {
        var extra: [String: Any] = [:]
        if case .clockSkewTooBig(let serverTime, _) = rejection {
            extra[WireErrorCode.Member.serverTimeInEpochMillis] = serverTime
        }
        var response = error(rejection.httpStatus, rejection.wireCode, message ?? rejection.reason, extra: extra)
        if let seconds = rejection.retryAfterSeconds {
            response.headers.replaceOrAdd(name: WireHeader.retryAfter, value: String(seconds))
        }
        return response
    }

    static func malformed(_ message: String) -> HTTPResponse {
        error(.badRequest, WireErrorCode.malformedRequest, message)
    }

    static let notFound = HTTPResponse(status: HTTPStatus.notFound.code)

    static func methodNotAllowed(allow: [String]) -> HTTPResponse {
        HTTPResponse(
            status: HTTPStatus.methodNotAllowed.code, headers: [WireHeader.allow: allow.joined(separator: ", ")])
    }

    /// 415 for a request body that is not `application/json` (parameters such as `charset` allowed):
    /// a web page cannot send that media type cross-site without a CORS preflight. nil when the
    /// request has no body or a JSON one.
    static func unsupportedMediaType(_ request: HTTPRequest) -> HTTPResponse? {
        guard !request.body.isEmpty else { return nil }
        let types = request.headers.values(for: WireHeader.contentType)
        if types.count == 1, let mediaType = types[0].split(separator: ";", omittingEmptySubsequences: false).first,
            HTTPHeaders.namesEqual(String(mediaType.trimmingHTTPWhitespace()), WireMediaType.json)
        {
            return nil
        }
        return error(
            .unsupportedMediaType, WireErrorCode.unsupportedMediaType,
            "A request body must be sent as \(WireHeader.contentType): \(WireMediaType.json).")
    }

    /// Parses a JSON object body; nil for anything else, a member name twice included (at any
    /// depth): with `deviceId` or `signatureKey` twice, which one counts would be a parser's choice,
    /// and a proxy in front could read the other.
    static func object(from request: HTTPRequest) -> [String: Any]? {
        guard !request.body.isEmpty, (try? StrictJSON.requireUniqueMemberNames(request.body)) != nil else {
            return nil
        }
        return (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any]
    }

    /// A random URL-safe identifier with `bytes` bytes of entropy.
    static func randomIdentifier(bytes: Int = 24) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(random).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
