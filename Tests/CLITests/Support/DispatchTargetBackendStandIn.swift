import DeviceSigning
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// A backend stand-in with one dispatch target (`target-1`), for what the reference backend
/// does not do: it verifies Device-Signatures as a backend does, applies a PATCH before answering
/// it with whatever the test scripts (a server error, say: the client cannot tell whether the new
/// key was taken), and answers the pending operations the test scripts. `GET` of the pending
/// operations answers to the key it holds, INVALID_SIGNATURE to another; then, as the reference
/// backend negotiates: encrypted to the target's encryption key when the request accepts
/// `application/jose` and there is one, 406 when it accepts only that and there is none, plain
/// JSON when it accepts `application/json` (unless scripted to insist on JOSE).
final class DispatchTargetBackendStandIn: Sendable {
    /// What the PATCH and the pending-operations reads answer while scripted otherwise.
    struct Script: Sendable {
        /// The status a PATCH answers after it was applied (nil: 200 naming the target).
        var patchStatusAfterApplying: Int?
        /// The status a PATCH answers without being applied (before `patchStatusAfterApplying`).
        var patchStatusWithoutApplying: Int?
        /// The status every pending-operations read answers instead of being verified (nil: verified).
        var readStatus: Int?
        /// The operations a verified read answers, as JSON objects; `{base}` stands for the
        /// stand-in's base URL.
        var operations: [String] = []
        /// Reads accept any signature that verifies with any key ever registered or rotated to
        /// here, as a lax backend (or a proxy's cache) might.
        var readsAcceptAnyKnownKey = false
        /// A read that accepts only `application/json` is refused (406) once the target has an
        /// encryption key, as a backend that makes JOSE mandatory would.
        var insistsOnJOSE = false
    }

    static let targetId = "target-1"
    let script = Locked(Script())
    private let signatureKey = Locked<P256.Signing.PublicKey?>(nil)
    /// The Accept field of every pending-operations read, in order.
    let readAccepts = Locked<[String]>([])
    private let encryptionKey = Locked<P256.KeyAgreement.PublicKey?>(nil)
    private let server: HTTPServer
    let baseURL: URL

    /// `beforeRegistering` runs when a registration arrives, before it is answered.
    init(beforeRegistering: @escaping @Sendable () -> Void = {}) throws {
        let (signatureKey, encryptionKey, script) = (signatureKey, encryptionKey, script)
        let readAccepts = readAccepts
        let base = Locked("")
        let verifier = try DeviceSignatureVerifier(clock: SystemWallClock()) { targetId in
            targetId == Self.targetId ? signatureKey.withLock { $0 } : nil
        }
        /// A verifier per key the target has had, for `readsAcceptAnyKnownKey`.
        let laxVerifiers = Locked<[DeviceSignatureVerifier]>([])
        server = HTTPServer { request in
            func json(_ status: Int, _ text: String) -> HTTPServerAction {
                .respond(.json(status: status, Data(text.utf8)))
            }
            let invalid = json(401, #"{"errorCode":"INVALID_SIGNATURE","message":"not the target's key"}"#)
            func verified(byAnyKnownKey lax: Bool = false) -> Bool {
                guard let header = request.headers[DeviceSignatureSigner.headerName] else { return false }
                if case .success = verifier.verify(header) { return true }
                guard lax else { return false }
                return laxVerifiers.withLock { $0 }.contains { candidate in
                    if case .success = candidate.verify(header) { return true }
                    return false
                }
            }
            func remember(_ key: P256.Signing.PublicKey?) {
                guard let key else { return }
                if let lax = try? DeviceSignatureVerifier(clock: SystemWallClock(), keyLookup: { _ in key }) {
                    laxVerifiers.withLock { $0.append(lax) }
                }
            }
            func jwk(_ member: String, in body: [UInt8]) -> JWK? {
                let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
                guard let jwk = object?[member] as? [String: Any],
                    let data = try? JSONSerialization.data(withJSONObject: jwk)
                else { return nil }
                return try? JWK(jsonRepresentation: data)
            }
            func key(in body: [UInt8]) -> P256.Signing.PublicKey? {
                jwk("signatureKey", in: body).flatMap { try? P256.Signing.PublicKey(jwk: $0) }
            }
            func operations(encrypted: Bool) -> HTTPServerAction {
                let listed = script.withLock { $0.operations }.joined(separator: ",")
                let body = Data(
                    #"{"operations":[\#(listed)]}"#.replacingOccurrences(of: "{base}", with: base.withLock { $0 }).utf8)
                guard encrypted, let recipient = encryptionKey.withLock({ $0 }),
                    let compact = try? JWE.encrypt(body, to: recipient)
                else { return .respond(.json(status: 200, body)) }
                return .respond(
                    HTTPResponse(
                        status: 200, headers: [WireHeader.contentType: WireMediaType.joseUTF8],
                        body: Array(compact.utf8)))
            }
            switch request.method {
            case "POST":
                beforeRegistering()
                signatureKey.withLock { $0 = key(in: request.body) }
                remember(key(in: request.body))
                encryptionKey.withLock {
                    $0 = jwk("encryptionKey", in: request.body).flatMap { try? P256.KeyAgreement.PublicKey(jwk: $0) }
                }
                return json(201, #"{"id":"\#(Self.targetId)","extId":"ext-1"}"#)
            case "PATCH":
                guard verified() else { return invalid }
                if let status = script.withLock({ $0.patchStatusWithoutApplying }) {
                    return json(status, #"{"errorCode":"INTERNAL","message":"scripted"}"#)
                }
                signatureKey.withLock { $0 = key(in: request.body) }
                remember(key(in: request.body))
                if let given = jwk("encryptionKey", in: request.body).flatMap({
                    try? P256.KeyAgreement.PublicKey(jwk: $0)
                }) {
                    encryptionKey.withLock { $0 = given }
                }
                if let status = script.withLock({ $0.patchStatusAfterApplying }) {
                    return json(status, #"{"errorCode":"INTERNAL","message":"scripted"}"#)
                }
                return json(200, #"{"id":"\#(Self.targetId)"}"#)
            default:
                if let status = script.withLock({ $0.readStatus }) {
                    return json(status, #"{"errorCode":"UNAVAILABLE","message":"scripted"}"#)
                }
                let accept = request.headers[WireHeader.accept] ?? ""
                readAccepts.withLock { $0.append(accept) }
                let (lax, insistsOnJOSE) = script.withLock { ($0.readsAcceptAnyKnownKey, $0.insistsOnJOSE) }
                guard verified(byAnyKnownKey: lax) else { return invalid }
                let hasEncryptionKey = encryptionKey.withLock { $0 != nil }
                let asksJOSE = accept.hasPrefix(WireMediaType.jose)
                guard asksJOSE ? hasEncryptionKey : !(insistsOnJOSE && hasEncryptionKey) else {
                    return json(406, #"{"errorCode":"NOT_ACCEPTABLE","message":"scripted"}"#)
                }
                return operations(encrypted: asksJOSE)
            }
        }
        baseURL = try server.start().baseURL
        base.withLock { [baseURL] in $0 = baseURL.absoluteString }
    }

    /// Takes the target's encryption key away, as for a target registered before encryption keys existed.
    func forgetEncryptionKey() {
        encryptionKey.withLock { $0 = nil }
    }

    /// Gives the target a key no client has, as another device's rotation would.
    func replaceKeyWithAStrangersKey() throws {
        let stranger = try P256.Signing.PrivateKey().publicKey
        signatureKey.withLock { $0 = stranger }
    }

    func stop() { server.stop() }
}
