// Fuzz target `answers`: what a backend sends back, from the bytes libcurl hands over to the
// typed result: the answer head collected line by line (`CurlResponseHead`), the clock sample of
// its `Date`, then `FetchErrorMapping` (a fetch) or `RedemptionClient.outcome` (a redemption).
// The backend is the least trusted party there is: a proxy, a misconfigured or hostile server.
//
// Input: byte 0 selects the mode (its value modulo 3): 0 a fetch by a registration that asked for
// JSON; 1 a fetch by one that asked for `application/jose`, decrypting with the RFC 7520 §5.5
// recipient key of Vectors/jwe-ecdh-es.json (TEST ONLY); 2 a redemption. Byte 1: how many times
// (its value modulo 4) the request's secret (the Device-Signature, or the redeem token) is spliced
// into the answer, each at the position of the next two bytes (little-endian, modulo the
// length): an answer that echoes the request. Then eight bytes, the estimated clock offset (mode
// 0 and 1). The rest is the answer as it came off the wire: lines up to the end of the head, then
// the body; no status line is an answer that is not HTTP, as the transport reports it.
//
// Checks, besides "no crash":
// - every error names the server (or redeem URL) it was about, has a message, and its excerpt is
//   at most `HTTPErrorInfo.maximumExcerptBytes`;
// - no error text (message, description, excerpt, reason) contains the secret, nor a
//   Device-Signature's signature part: a backend that echoes the request is redacted;
// - the error's case is the one the status allows (FetchErrorMapping's and RedemptionClient's
//   rules); an answer that is not HTTP is `invalidResponse` (`notHTTP`) or `unknown`;
// - mapping is pure: the same answer twice gives the same result.

import Foundation

@testable import DeviceSigning
@testable import FetchChannel

private enum AnswersFuzz {
    static let server = "https://backend.example"
    static let redeemURL = "https://backend.example/nevisfido/token/redeem/authentication"
    /// The Device-Signature of Vectors/error-mapping.json's redaction rows (not a real signature).
    static let deviceSignature =
        "eyJhbGciOiJFUzI1NiIsImtpZCI6InRhcmdldCIsInR5cCI6IkpXVCJ9.eyJyZXF1ZXN0SWQiOiJyZXEtMSJ9."
        + "c2lnbmF0dXJlLXBhcnQtb2YtYS1kZXZpY2Utc2lnbmF0dXJlLXRoYXQtbXVzdC1uZXZlci1sZWFr"
    static let signaturePart = String(deviceSignature.split(separator: ".").last ?? "")
    static let token = "fuzz-redeem-token-6b1f0e2a-that-must-never-leak"
    /// RFC 7520 §5.5's recipient (Vectors/jwe-ecdh-es.json `rfc7520-meriadoc`). Published, TEST ONLY.
    static let decryptionKey: P256.KeyAgreement.PrivateKey = {
        guard let d = Base64.decode("r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8", alphabet: .url),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: d)
        else { fatalError("the fixed decryption key does not load") }
        return key
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnswers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(fuzzBytes(data, size))
    let mode = reader.byte() % 3
    let splices = Int(reader.byte() % 4)
    let positions = (0..<splices).map { _ in Int(reader.byte()) | Int(reader.byte()) << 8 }
    let estimate = reader.int64()
    var wire = reader.rest()
    let secret = Array((mode == 2 ? AnswersFuzz.token : AnswersFuzz.deviceSignature).utf8)
    for position in positions {
        let at = position % (wire.count + 1)
        wire.insert(contentsOf: secret, at: at)
    }
    let result = transportResult(of: wire)
    if mode == 2 {
        checkRedemption(result)
    } else {
        checkFetch(result, estimate: estimate, decrypting: mode == 1)
    }
    return 0
}

/// The answer as the libcurl transport builds it: its header lines fed one at a time (each with
/// its line end), the rest of the bytes as the body.
private func transportResult(of wire: [UInt8]) -> TransportResult {
    var head = CurlResponseHead()
    var start = 0
    while start < wire.count, !head.isComplete {
        let end = (wire[start...].firstIndex(of: 0x0A).map { $0 + 1 }) ?? wire.count
        wire[start..<end].withUnsafeBytes { head.receive(line: $0) }
        start = end
    }
    guard let status = head.status else { return .notHTTP("the answer has no HTTP status line") }
    return .answer(
        HTTPAnswer(
            status: status, lowercasedHeaders: head.headers, body: Data(wire[start...]), bodyWasCutOff: false))
}

private func checkFetch(_ result: TransportResult, estimate: Int64, decrypting: Bool) {
    let estimator = ClockSkewEstimator()
    if case .answer(let answer) = result {
        FetchErrorMapping.recordSample(
            of: answer, sentAtMillis: 1_700_000_000_000, receivedAtMillis: 1_700_000_000_200,
            server: AnswersFuzz.server, into: estimator)
    }
    let context = FetchErrorMapping.Context(
        server: AnswersFuzz.server, estimatedOffsetMillis: estimator.estimatedOffsetMillis(for: AnswersFuzz.server) ?? estimate,
        toleranceMillis: 60_000, requestCreationMillis: 1_700_000_000_000,
        deviceSignature: AnswersFuzz.deviceSignature)
    let key = decrypting ? AnswersFuzz.decryptionKey : nil
    let mapped = FetchErrorMapping.evaluate(result, context: context, decryptionKey: key).result
    fuzzCheck(mapped == FetchErrorMapping.evaluate(result, context: context, decryptionKey: key).result,
              "the same answer mapped twice gave two results")
    switch mapped {
    case .success(let operations):
        guard case .answer(let answer) = result else { return fuzzCheck(false, "operations without an answer") }
        fuzzCheck((200...299).contains(answer.status), "operations from HTTP \(answer.status)")
        fuzzCheck(operations.allSatisfy { $0.server == AnswersFuzz.server }, "an operation without its server")
    case .failure(let error):
        fuzzCheck(error.server == AnswersFuzz.server, "an error that does not name its server")
        fuzzCheck(!error.message.isEmpty, "an error without a message")
        checkExcerpt(error.httpError)
        checkNoSecret([error.message, error.description, error.httpError?.description ?? "",
                       error.invalidResponse?.reason ?? "", error.networkFailure?.reason ?? ""],
                      secrets: [AnswersFuzz.deviceSignature, AnswersFuzz.signaturePart])
        fuzzCheck(fetchCodes(allowedFor: result).contains(error.code),
                  "\(error.code) for \(statusText(of: result))")
    }
}

private func checkRedemption(_ result: TransportResult) {
    let mapped = RedemptionClient.outcome(of: result, url: AnswersFuzz.redeemURL, token: AnswersFuzz.token)
    fuzzCheck(mapped == RedemptionClient.outcome(of: result, url: AnswersFuzz.redeemURL, token: AnswersFuzz.token),
              "the same answer mapped twice gave two results")
    switch mapped {
    case .success:
        guard case .answer(let answer) = result else { return fuzzCheck(false, "a redemption without an answer") }
        fuzzCheck((200...299).contains(answer.status), "a redemption from HTTP \(answer.status)")
    case .failure(let error):
        fuzzCheck(error.url == AnswersFuzz.redeemURL, "an error that does not name its redeem URL")
        fuzzCheck(!error.message.isEmpty, "an error without a message")
        checkExcerpt(error.httpError)
        checkNoSecret([error.message, error.description, error.httpError?.description ?? ""],
                      secrets: [AnswersFuzz.token])
        var allowed: Set<String> = ["unknown"]
        if case .answer(let answer) = result, answer.status >= 400 {
            allowed.formUnion(["tokenAlreadyRedeemed", "tokenExpired"])
        }
        fuzzCheck(allowed.contains(error.code), "\(error.code) for \(statusText(of: result))")
    }
}

/// The error cases FetchErrorMapping's rules allow for what the transport returned.
private func fetchCodes(allowedFor result: TransportResult) -> Set<String> {
    guard case .answer(let answer) = result else { return ["invalidResponse"] }
    // A definite skew (an errorCode) needs status >= 400; a probable one a 401 or 403.
    var codes: Set<String> = answer.status >= 400 ? ["clockSkewTooBig"] : []
    switch answer.status {
    case 200...299: codes.formUnion(["invalidResponse", "deviceProtectionError"])
    case 401, 403: codes.insert("unauthorized")
    case 404, 405, 501: codes.insert("operationNotSupportedByBackend")
    case 500...599: codes.insert("serverError")
    default: codes.insert("unknown")
    }
    return codes
}

private func checkExcerpt(_ info: HTTPErrorInfo?) {
    guard let info else { return }
    fuzzCheck(info.bodyExcerpt.utf8.count <= HTTPErrorInfo.maximumExcerptBytes,
              "an excerpt of \(info.bodyExcerpt.utf8.count) bytes")
}

private func checkNoSecret(_ texts: [String], secrets: [String]) {
    for text in texts {
        for secret in secrets where text.contains(secret) {
            fuzzCheck(false, "the request's secret is in an error text: \(text.prefix(200))")
        }
    }
}

private func statusText(of result: TransportResult) -> String {
    guard case .answer(let answer) = result else { return "an answer that is not HTTP" }
    return "HTTP \(answer.status)"
}

func fuzzWarmUp() {
    _ = AnswersFuzz.decryptionKey
    let head = Array("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\n\r\n".utf8)
    for mode: UInt8 in 0...2 {
        fuzzRun(fuzzAnswers, [mode, 1, 0, 0] + [UInt8](repeating: 0, count: 8) + head + Array(#"{"errorCode":"x"}"#.utf8))
    }
}
