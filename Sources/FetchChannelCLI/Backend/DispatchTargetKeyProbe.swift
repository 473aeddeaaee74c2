import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// Asks a backend whether it verifies a dispatch target's requests with a given key: a read of
/// the device's pending operations (a GET that changes nothing) signed with that key. `rotate`
/// asks when it cannot tell from the backend's answer whether the new key was taken (no answer,
/// a server error, an answer that names no target, or the old key refused), because which key
/// the backend holds decides which key the store must keep registered.
struct DispatchTargetKeyProbe: Sendable {
    enum Acceptance: Sendable, Equatable {
        /// The backend answered 200 with a pending-operations answer: it holds this key.
        case accepted
        /// The backend answered INVALID_SIGNATURE: it holds another key for the target.
        case refused
        /// Anything else (no answer, another refusal): nothing can be concluded; why, in words.
        case unknown(String)
    }

    let server: BackendURL
    let deviceId: String
    let targetId: String
    let trust: TLSTrust

    func acceptance(of key: P256.Signing.PrivateKey) async -> Acceptance {
        let signature: String
        do {
            signature = try DeviceSignatureSigner(key: key, dispatchTargetId: targetId, clock: SystemWallClock())
                .headerValue()
        } catch {
            return .unknown("the key could not sign: \(error)")
        }
        let url = server.appending(path: FetchPaths.default.pendingOperationsPath(deviceId: deviceId))
        let answer: BackendHTTPClient.Answer
        do {
            answer = try await BackendHTTPClient().get(
                url, headers: [DeviceSignatureSigner.headerName: signature, WireHeader.accept: WireMediaType.json],
                trust: trust)
        } catch let failure as CLIFailure {
            return .unknown(failure.message)
        } catch {
            return .unknown("\(error)")
        }
        // A 200 that is not a pending-operations answer concludes nothing: it may not be the backend.
        if answer.status == 200, (try? PendingOperationsDecoder.decode(answer.body, server: "the backend")) != nil {
            return .accepted
        }
        if Self.isInvalidSignature(answer) { return .refused }
        return .unknown("the backend answered \(answer.summary)")
    }

    /// Whether an answer is the backend's INVALID_SIGNATURE refusal.
    static func isInvalidSignature(_ answer: BackendHTTPClient.Answer) -> Bool {
        (400..<500).contains(answer.status)
            && answer.object?[WireErrorCode.Member.errorCode] as? String == WireErrorCode.invalidSignature.rawValue
    }
}
