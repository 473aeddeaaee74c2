/// The paths of the wire contract (docs/ARCHITECTURE.md, "Wire contract"): the backend's device
/// endpoints, relative to the base path a deployment mounts them under, and the reference
/// backend's control API.
public enum WirePaths {
    /// Where the device endpoints are mounted by default.
    public static let basePath = "/nevisfido"
    /// Under the base path: `POST` registers a dispatch target, `PATCH …/{id}` rotates its key.
    public static let dispatchTargets = "/token/dispatch/targets"
    /// Under the base path: `GET …/{deviceId}`, signed: the device's pending operations.
    public static let pendingOperations = "/devices/outofbandoperations"
    /// Under the base path: `POST …/{registration,authentication,deregistration}` redeems a token.
    public static let redeem = "/token/redeem"
    /// The device id's placeholder in a path template.
    public static let deviceIdPlaceholder = "{deviceId}"

    /// The reference backend's control API (loopback clients only).
    public enum Emulator {
        public static let root = "/_emulator"
        /// `POST`: creates an operation for a device.
        public static let dispatch = root + "/dispatch"
        /// `POST`: sets the server clock's offset.
        public static let clock = root + "/clock"
        /// `POST` adds a fault, `DELETE` clears them.
        public static let faults = root + "/faults"
        /// `GET`: the counters.
        public static let stats = root + "/stats"
    }
}
