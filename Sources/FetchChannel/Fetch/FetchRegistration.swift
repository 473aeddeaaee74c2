import DeviceSigning
import FetchChannelWire
import Foundation

/// One backend this device is registered on: where it is, who the device is there, and the key
/// that signs for its dispatch target. A device may be registered on several backends.
public struct FetchRegistration: Sendable {
    /// The clock difference a backend accepts unless configured otherwise (60 s).
    public static let defaultToleranceMillis: Int64 = 60_000

    /// The backend's base URL: `https://…`, or `http://` to a loopback host only. A path prefix is
    /// kept (`https://host/prefix` + the endpoint path).
    public var server: URL {
        didSet { derived = Derived(server: server, deviceId: deviceId, paths: paths) }
    }
    public var deviceId: String {
        didSet { derived = Derived(server: server, deviceId: deviceId, paths: paths) }
    }
    /// The id the backend gave the dispatch target; the Device-Signature's `kid`.
    public var dispatchTargetId: String
    public var signingKey: SigningKeySource
    public var paths: FetchPaths {
        didSet { derived = Derived(server: server, deviceId: deviceId, paths: paths) }
    }
    /// The backend's clock tolerance: an estimated offset beyond it turns a 401/403 into
    /// `clockSkewTooBig` (probable skew).
    public var toleranceMillis: Int64
    /// What the backend's HTTPS server must present: the system CAs by default, or its private CA
    /// bundle, plus pins. Every request to this backend is checked against it.
    public var trust: TLSTrust
    /// The private half of the dispatch target's `encryptionKey`: with one, the operations answer
    /// is asked for as `application/jose` and decrypted with it; without one, as plain JSON.
    public var encryptionKey: P256.KeyAgreement.PrivateKey?

    /// What every fetch reads from `server`, `deviceId` and `paths`, made when one of them is set
    /// rather than on each request (URL parsing is a good part of a fetch's CPU).
    private var derived: Derived

    private struct Derived: Sendable {
        let serverName: String
        /// The URL, or why `server`, `paths` and `deviceId` make none (in words, for the error).
        let pendingOperationsURL: Result<URL, URLProblem>
        let origin: BackendOrigin?

        init(server: URL, deviceId: String, paths: FetchPaths) {
            var name = server.absoluteString
            while name.hasSuffix("/") { name.removeLast() }
            // The name shows no password; the URL keeps what was given, for the transport to refuse.
            serverName = URLUserInformation.masked(name)
            pendingOperationsURL = Self.pendingOperationsURL(
                server: server, name: name, deviceId: deviceId, paths: paths)
            origin = BackendOrigin(url: server)
        }

        /// The path is appended to the base URL's text, so that a path prefix is kept; what that
        /// text must not hold, and what the path must, are checked first.
        private static func pendingOperationsURL(
            server: URL, name: String, deviceId: String, paths: FetchPaths
        ) -> Result<URL, URLProblem> {
            // A query or fragment would swallow the path: `https://b/api?t=1` + `/ops/d` asks for
            // `/api` with the query `t=1/ops/d`.
            let components = URLComponents(url: server, resolvingAgainstBaseURL: false)
            if components?.percentEncodedQuery != nil || components?.percentEncodedFragment != nil {
                return .failure(URLProblem("the server URL has a query or fragment, which would swallow the path"))
            }
            // Only an absolute path: one such as `.evil.example/x` would run on from the host.
            guard paths.pendingOperations.hasPrefix("/") else {
                return .failure(URLProblem("the pending-operations path must start with /"))
            }
            // Without the placeholder every device would ask for the same operations.
            guard paths.pendingOperations.components(separatedBy: WirePaths.deviceIdPlaceholder).count == 2 else {
                return .failure(
                    URLProblem("the pending-operations path must hold \(WirePaths.deviceIdPlaceholder) exactly once"))
            }
            guard let url = URL(string: name + paths.pendingOperationsPath(deviceId: deviceId)) else {
                return .failure(URLProblem("the server URL and path do not form a URL"))
            }
            return .success(url)
        }
    }

    /// Why a registration has no pending-operations URL, in words.
    struct URLProblem: Error, Sendable {
        let text: String
        init(_ text: String) { self.text = text }
    }

    public init(
        server: URL, deviceId: String, dispatchTargetId: String, signingKey: SigningKeySource,
        paths: FetchPaths = .default, toleranceMillis: Int64 = FetchRegistration.defaultToleranceMillis,
        trust: TLSTrust = .system, encryptionKey: P256.KeyAgreement.PrivateKey? = nil
    ) {
        self.encryptionKey = encryptionKey
        derived = Derived(server: server, deviceId: deviceId, paths: paths)
        self.server = server
        self.deviceId = deviceId
        self.dispatchTargetId = dispatchTargetId
        self.signingKey = signingKey
        self.paths = paths
        self.toleranceMillis = toleranceMillis
        self.trust = trust
    }

    /// With a key already loaded.
    public init(
        server: URL, deviceId: String, dispatchTargetId: String, key: P256.Signing.PrivateKey,
        paths: FetchPaths = .default, toleranceMillis: Int64 = FetchRegistration.defaultToleranceMillis,
        trust: TLSTrust = .system, encryptionKey: P256.KeyAgreement.PrivateKey? = nil
    ) {
        self.init(
            server: server, deviceId: deviceId, dispatchTargetId: dispatchTargetId, signingKey: SigningKeySource(key),
            paths: paths, toleranceMillis: toleranceMillis, trust: trust, encryptionKey: encryptionKey)
    }

    /// The Accept value of the operations request: the vendor's JOSE header with an encryption
    /// key, JSON without one.
    var acceptedMediaType: String {
        encryptionKey == nil ? WireMediaType.json : WireMediaType.joseUTF8
    }

    /// The base URL as errors, operations and the clock-skew estimator name it: as given, without
    /// a trailing `/`, user information shown as `***` (``URLUserInformation``).
    public var serverName: String { derived.serverName }

    /// `server` + the pending-operations path for `deviceId`, or nil when that is not a URL, the
    /// server URL has a query or fragment, or the path does not start with `/` or does not hold
    /// `{deviceId}` exactly once.
    public var pendingOperationsURL: URL? { try? derived.pendingOperationsURL.get() }

    /// ``pendingOperationsURL``, or why there is none.
    var pendingOperationsRequestURL: Result<URL, URLProblem> { derived.pendingOperationsURL }

    /// Where this backend's operations may be redeemed (``RedeemOriginCheck``); nil when `server`
    /// has no usable origin.
    var origin: BackendOrigin? { derived.origin }
}
