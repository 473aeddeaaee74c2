import DeviceSigning
import FetchChannelEmulator
import Foundation

/// A backend stand-in for registrations and rotations whose answer is lost: it keeps one dispatch target
/// (`target-1`) and its signature key, verifies Device-Signatures as a backend does, and applies a
/// PATCH before answering it with whatever the test scripts (a server error, say), so that the
/// client cannot tell from the answer whether the new key was taken. `GET` of the pending
/// operations answers 200 with no operations to the key it holds, INVALID_SIGNATURE to another.
final class RotationBackendStandIn: Sendable {
    /// What the PATCH and the pending-operations reads answer while scripted otherwise.
    struct Script: Sendable {
        /// The status a PATCH answers after it was applied (nil: 200 naming the target).
        var patchStatusAfterApplying: Int?
        /// The status every pending-operations read answers instead of being verified (nil: verified).
        var readStatus: Int?
    }

    static let targetId = "target-1"
    let script = Locked(Script())
    private let signatureKey = Locked<P256.Signing.PublicKey?>(nil)
    private let server: HTTPServer
    let baseURL: URL

    /// `beforeRegistering` runs when a registration arrives, before it is answered.
    init(beforeRegistering: @escaping @Sendable () -> Void = {}) throws {
        let signatureKey = signatureKey
        let script = script
        let verifier = try DeviceSignatureVerifier(clock: SystemWallClock()) { targetId in
            targetId == Self.targetId ? signatureKey.withLock { $0 } : nil
        }
        server = HTTPServer { request in
            func json(_ status: Int, _ text: String) -> HTTPServerAction {
                .respond(.json(status: status, Data(text.utf8)))
            }
            let invalid = json(401, #"{"errorCode":"INVALID_SIGNATURE","message":"not the target's key"}"#)
            func verified() -> Bool {
                guard let header = request.headers[DeviceSignatureSigner.headerName],
                    case .success = verifier.verify(header)
                else { return false }
                return true
            }
            func key(in body: [UInt8]) -> P256.Signing.PublicKey? {
                let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
                guard let jwk = object?["signatureKey"] as? [String: Any],
                    let data = try? JSONSerialization.data(withJSONObject: jwk)
                else { return nil }
                return try? P256.Signing.PublicKey(jwk: JWK(jsonRepresentation: data))
            }
            switch request.method {
            case "POST":
                beforeRegistering()
                signatureKey.withLock { $0 = key(in: request.body) }
                return json(201, #"{"id":"\#(Self.targetId)","extId":"ext-1"}"#)
            case "PATCH":
                guard verified() else { return invalid }
                signatureKey.withLock { $0 = key(in: request.body) }
                if let status = script.withLock({ $0.patchStatusAfterApplying }) {
                    return json(status, #"{"errorCode":"INTERNAL","message":"scripted"}"#)
                }
                return json(200, #"{"id":"\#(Self.targetId)"}"#)
            default:
                if let status = script.withLock({ $0.readStatus }) {
                    return json(status, #"{"errorCode":"UNAVAILABLE","message":"scripted"}"#)
                }
                return verified() ? json(200, #"{"operations":[]}"#) : invalid
            }
        }
        baseURL = try server.start().baseURL
    }

    func stop() { server.stop() }
}
