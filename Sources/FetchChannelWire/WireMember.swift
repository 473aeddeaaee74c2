/// The JSON member names of the dispatch-target bodies the client and the reference backend
/// exchange (docs/ARCHITECTURE.md, "Wire contract"): registration, key rotation and their answers.
public enum WireMember {
    // MARK: Registering a dispatch target

    /// The user the device belongs to.
    public static let username = "username"
    /// The device's id at the backend.
    public static let deviceId = "deviceId"
    /// A name for the device, shown to its user.
    public static let name = "name"
    /// The dispatch target's address for the dispatcher.
    public static let target = "target"
    /// Who dispatches to the target.
    public static let dispatcher = "dispatcher"
    /// The public JWK that verifies the device's Device-Signatures (registration and rotation).
    public static let signatureKey = "signatureKey"
    /// The public JWK (`"use":"enc"`) the backend encrypts answers to (registration and rotation).
    public static let encryptionKey = "encryptionKey"

    // MARK: The answers

    /// The dispatch target id: the JWS kid of the device's requests.
    public static let id = "id"
    /// The backend's external id of the dispatch target.
    public static let extId = "extId"
}
