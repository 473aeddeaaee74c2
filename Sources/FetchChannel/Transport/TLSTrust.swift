import Foundation

/// Which servers a backend's HTTPS connections accept: a set of trust anchors (the system CAs, or
/// the backend's private CA bundle instead) and, optionally, SPKI pins that must match as well.
///
/// Peer and host name verification are always on; the trust only chooses what they verify
/// against. With pins, the server's chain must still lead to an anchor *and* the SHA-256 of its
/// leaf's SubjectPublicKeyInfo must be one of ``pins`` (RFC 7469's `pin-sha256`, written
/// `sha256//BASE64` as libcurl and `curl --pinnedpubkey` write it). A pin for the key of a
/// backend's next certificate can be listed beside the current one to rotate without an outage.
///
/// Validated when made: every pin is `sha256//` followed by the standard base64 of 32 bytes,
/// and a bundle holds at least one PEM certificate. Stored with the backend's registration, so
/// every request to that backend uses it (``FetchRegistration/trust``).
public struct TLSTrust: Sendable, Hashable, CustomStringConvertible {
    /// The certificates a server's chain must lead to.
    public enum Anchors: Sendable, Hashable {
        /// The system's CA store (on Debian `/etc/ssl/certs`).
        case system
        /// Only the certificates of this PEM bundle (for example a private CA's), not the system's.
        /// Each is an anchor on its own, as with `curl --cacert` (OpenSSL's partial chains): an
        /// intermediate or a server's own certificate in it is trusted without its issuer. Bind
        /// to a key with ``TLSTrust/pins`` instead.
        case pemBundle(Data)
        /// Only the certificates of the PEM file at this path, read when a connection is made;
        /// each an anchor on its own, as in ``pemBundle(_:)``.
        case pemFile(path: String)
    }

    /// The largest CA bundle accepted in memory.
    public static let maximumBundleBytes = 1 << 20
    /// The most pins one backend may list.
    public static let maximumPinCount = 16
    /// The prefix of a pin: the hash algorithm libcurl and RFC 7469 use.
    public static let pinPrefix = "sha256//"

    /// The system CAs and no pins: what a backend without its own trust gets.
    public static let system = TLSTrust(validatedAnchors: .system, pins: [])

    public let anchors: Anchors
    /// `sha256//BASE64` SPKI pins, in the order given; empty when nothing is pinned.
    public let pins: [String]

    /// Trust `anchors`, and when `pins` is not empty, only servers whose key matches one of them.
    public init(anchors: Anchors = .system, pins: [String] = []) throws(TLSTrustError) {
        switch anchors {
        case .system:
            break
        case .pemBundle(let pem):
            guard pem.count <= Self.maximumBundleBytes else {
                throw TLSTrustError(
                    .invalidCABundle,
                    reason: "the CA bundle has \(pem.count) bytes, more than "
                        + "\(Self.maximumBundleBytes).")
            }
            guard pem.range(of: Data("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
                throw TLSTrustError(
                    .invalidCABundle,
                    reason: "the CA bundle holds no PEM certificate "
                        + "(-----BEGIN CERTIFICATE-----).")
            }
        case .pemFile(let path):
            guard !path.isEmpty, !path.utf8.contains(0) else {
                throw TLSTrustError(.invalidCAFile, reason: "the CA file path is empty or contains a NUL byte.")
            }
        }
        guard pins.count <= Self.maximumPinCount else {
            throw TLSTrustError(.invalidPin, reason: "\(pins.count) pins given; at most \(Self.maximumPinCount).")
        }
        for pin in pins where !Self.isValidPin(pin) {
            throw TLSTrustError(
                .invalidPin,
                reason: "\"\(QuotedText.shown(pin, maximumScalars: 60))\" is not a pin: write sha256// followed by "
                    + "the base64 of the SHA-256 of the server's SubjectPublicKeyInfo (44 characters).")
        }
        self.init(validatedAnchors: anchors, pins: pins)
    }

    private init(validatedAnchors anchors: Anchors, pins: [String]) {
        self.anchors = anchors
        self.pins = pins
    }

    /// Only the CAs of `pemFile` (and `pins`, if any).
    public static func caFile(_ path: String, pins: [String] = []) throws(TLSTrustError) -> TLSTrust {
        try TLSTrust(anchors: .pemFile(path: path), pins: pins)
    }

    /// Whether `pin` is `sha256//` followed by the padded, canonical standard base64 of exactly 32 bytes.
    public static func isValidPin(_ pin: String) -> Bool {
        guard pin.hasPrefix(pinPrefix) else { return false }
        let encoded = pin.dropFirst(pinPrefix.count)
        guard encoded.utf8.count == 44, let digest = Data(base64Encoded: String(encoded)) else { return false }
        // Canonical only: libcurl compares the base64 text, so another spelling could never match.
        return digest.count == 32 && digest.base64EncodedString() == encoded
    }

    /// The anchors in words, for error messages: "the system CAs", "the CA file /etc/…", …
    public var anchorsDescription: String {
        switch anchors {
        case .system: "the system CAs"
        case .pemBundle: "the backend's CA bundle"
        case .pemFile(let path): "the CA file \(path)"
        }
    }

    public var description: String {
        pins.isEmpty ? anchorsDescription : "\(anchorsDescription), pinned to \(pins.joined(separator: ", "))"
    }
}
