import DeviceSigning
import FetchChannelWire
import Foundation

/// The dispatch-target requests the CLI sends (`register`, `rotate`, the demo) and what their
/// answers carry, in the wire contract's member names (docs/ARCHITECTURE.md, "Wire contract").
enum DispatchTargetBody {
    /// `/nevisfido/token/dispatch/targets`, below a backend's base URL.
    static let path = WirePaths.basePath + WirePaths.dispatchTargets

    /// `<server><path>/<id>`, the URL a rotation PATCHes. The id is one path segment by the wire
    /// module's rule (`FetchPaths.pathSegment`), so that no id (`..`, `a/b`) names another resource.
    static func url(of targetId: String, at server: BackendURL) -> URL {
        server.appending(path: path + "/" + FetchPaths.pathSegment(targetId))
    }

    /// The body of `POST <path>`: the device, and the public keys the backend keeps for it.
    static func registration(
        username: String, deviceId: String, name: String, signatureKey: JWK, encryptionKey: JWK?
    ) -> [String: Any] {
        var body = rotation(signatureKey: signatureKey, encryptionKey: encryptionKey)
        body[WireMember.username] = username
        body[WireMember.deviceId] = deviceId
        body[WireMember.name] = name
        body[WireMember.target] = deviceId
        body[WireMember.dispatcher] = "fetchchannel"
        return body
    }

    /// The body of `PATCH <path>/<id>`: the new signature key, the encryption key unchanged.
    static func rotation(signatureKey: JWK, encryptionKey: JWK?) -> [String: Any] {
        var body: [String: Any] = [WireMember.signatureKey: KeyDescription.jwkObject(signatureKey)]
        if let encryptionKey { body[WireMember.encryptionKey] = KeyDescription.jwkObject(encryptionKey) }
        return body
    }

    /// The dispatch target id of an answer, if it names one.
    static func targetId(of answer: BackendHTTPClient.Answer) -> String? {
        answer.object?[WireMember.id] as? String
    }

    /// The backend's external id of the dispatch target, if the answer names one.
    static func extId(of answer: BackendHTTPClient.Answer) -> String? {
        answer.object?[WireMember.extId] as? String
    }
}
