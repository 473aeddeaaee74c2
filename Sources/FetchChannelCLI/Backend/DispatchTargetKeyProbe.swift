import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// Asks a backend whether it verifies a dispatch target's requests with a given key: a read of
/// the device's pending operations (a GET that changes nothing) signed with that key, asking for
/// the answer encrypted to that key's encryption key when it has one, as `fetch` does for a
/// registration with that key (a redeem token never travels in plain text for a question that a
/// registration with that key would ask encrypted). Each key is asked with its own encryption key:
/// a backend that holds the key also holds the encryption key given with it, and a key made before
/// encryption keys existed has none (its registration is answered in JSON). `rotate` asks when it cannot
/// tell from the backend's answer whether the new key was taken (no answer, a server error, an
/// answer that names no target), because which key the backend holds decides which key the
/// store must keep registered; it concludes only from a pair of answers (one key accepted, the
/// other refused), never from one.
struct DispatchTargetKeyProbe: Sendable {
    enum Acceptance: Sendable, Equatable, CustomStringConvertible {
        /// The backend answered 200 with a pending-operations answer: it accepts this key.
        case accepted
        /// The backend answered INVALID_SIGNATURE: it does not verify the target with this key
        /// (another key, or no such target for the device).
        case refused
        /// Anything else (no answer, another refusal): nothing can be concluded; why, in words.
        case unknown(String)

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused: "refused"
            case .unknown(let why): why
            }
        }
    }

    let server: BackendURL
    let deviceId: String
    let targetId: String
    let trust: TLSTrust

    /// The Device-Signature of a question asked with `key`, or why there is none. Made apart from
    /// asking, so that a caller can release a TPM key before it loads the decryption key (a TPM
    /// without a resource manager holds two keys at a time). `clock` stamps its creation time.
    static func signature(
        with key: P256.Signing.PrivateKey, targetId: String, clock: any WallClock
    ) -> Result<String, Problem> {
        Result {
            try DeviceSignatureSigner(key: key, dispatchTargetId: targetId, clock: clock).headerValue()
        }.mapError { Problem("the key could not sign: \($0)") }
    }

    /// Why a question could not be asked, in words.
    struct Problem: Error, Sendable {
        let text: String
        init(_ text: String) { self.text = text }
    }

    /// Asks with a Device-Signature made by ``signature(with:targetId:)``, for the answer encrypted
    /// to `decryptionKey`'s public key (`application/jose`; the answer must decrypt with it), or,
    /// with none, for `application/json`.
    func acceptance(signature: String, decryptionKey: P256.KeyAgreement.PrivateKey?) async -> Acceptance {
        let url = server.appending(path: FetchPaths.default.pendingOperationsPath(deviceId: deviceId))
        let accept = decryptionKey == nil ? WireMediaType.json : WireMediaType.joseUTF8
        let answer: BackendHTTPClient.Answer
        do {
            answer = try await BackendHTTPClient().get(
                url, headers: [DeviceSignatureSigner.headerName: signature, WireHeader.accept: accept], trust: trust)
        } catch let failure as CLIFailure {
            return .unknown(failure.message)
        } catch {
            return .unknown("\(error)")
        }
        // A 200 that is not a pending-operations answer concludes nothing: it may not be the backend.
        if answer.status == 200 {
            if Self.isOperationsAnswer(answer, decryptionKey: decryptionKey) { return .accepted }
            // The summary names the Content-Type only: operations in plain JSON, where encrypted
            // ones were asked for, hold redeem tokens.
            return .unknown(
                "the backend answered \(answer.summary), but not with pending operations"
                    + (decryptionKey == nil ? "" : " encrypted to the registration's key"))
        }
        if Self.isInvalidSignature(answer) { return .refused }
        return .unknown("the backend answered \(answer.summary)")
    }

    /// Whether `answer` is a pending-operations answer, by the rules `fetch` reads it with: asked
    /// for encrypted, it must be `application/jose` and decrypt with the decryption key (a plain
    /// answer is not taken as one); asked for JSON, it must say JSON (not JOSE) and decode.
    static func isOperationsAnswer(
        _ answer: BackendHTTPClient.Answer, decryptionKey: P256.KeyAgreement.PrivateKey?
    ) -> Bool {
        var body = answer.body
        let contentType = answer.header(WireHeader.contentType)
        if let decryptionKey {
            guard WireMediaType.isJOSE(contentType ?? ""),
                let plaintext = try? JWE.decrypt(compact: JOSEAnswerBody.compact(in: answer.body), with: decryptionKey)
            else { return false }
            body = plaintext
        } else {
            guard FetchErrorMapping.contentTypeProblem(contentType, status: answer.status) == nil else { return false }
        }
        return (try? PendingOperationsDecoder.decode(body, server: "the backend")) != nil
    }

    /// Whether an answer is the backend's INVALID_SIGNATURE refusal.
    static func isInvalidSignature(_ answer: BackendHTTPClient.Answer) -> Bool {
        (400..<500).contains(answer.status)
            && answer.object?[WireErrorCode.Member.errorCode] as? String == WireErrorCode.invalidSignature.rawValue
    }
}
