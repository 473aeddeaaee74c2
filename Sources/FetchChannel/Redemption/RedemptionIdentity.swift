import Foundation

/// What makes an operation the one it is, for exactly-once redemption: its redeem token at the
/// origin it redeems at. Two backends may hand out the same token; keyed by the token alone, one
/// backend could make this device skip the other's operation by sending its token first.
///
/// Encoded as `{"origin": …, "token": …}` (the redeemed-token file's entries).
public struct RedemptionIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// ``BackendOrigin/origin`` of the redeem URL (`https://host:443`), or, for a redeem URL that
    /// has none (not a URL, no host, another scheme, user info, dot segments), `invalid:` followed
    /// by the URL as given, its user information masked (`https://***@host/…`) and one longer than
    /// a redeem URL may be cut: such a URL is never redeemed, and it matches no real origin.
    public let origin: String
    /// The redeem token.
    public let token: String

    public init(origin: String, token: String) {
        self.origin = origin
        self.token = token
    }

    /// The identity of the token `redeemData` carries, at its redeem URL's origin.
    public init(_ redeemData: PendingOutOfBandOperation.RedeemData) {
        self.init(origin: Self.origin(ofRedeemURL: redeemData.redeemUrl), token: redeemData.token)
    }

    /// The prefix of the origin of a redeem URL that has no usable origin.
    public static let invalidOriginPrefix = "invalid:"

    /// The origin a redeem URL redeems at, as ``origin`` names it.
    public static func origin(ofRedeemURL text: String) -> String {
        if let origin = RedeemURLOrigins.origin(of: text)?.origin { return origin }
        let isTooLong = text.utf8.count > PendingOutOfBandOperation.RedeemData.maximumRedeemURLBytes
        return invalidOriginPrefix + URLUserInformation.masked(isTooLong ? String(text.prefix(1_024)) + "…" : text)
    }

    public var description: String { "\(token) at \(origin)" }

    /// Equal when the origin and the token are the same bytes. Swift compares strings up to
    /// canonical equivalence, so `"\u{E9}"` and `"e\u{301}"` would be one token here, and the
    /// second operation would be skipped as already redeemed, while a backend tells the two apart.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.origin.utf8.elementsEqual(rhs.origin.utf8) && lhs.token.utf8.elementsEqual(rhs.token.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        // The bytes in one call each (a fetch hashes every operation's identity), and no array.
        Self.combine(origin, into: &hasher)
        Self.combine(token, into: &hasher)
    }

    private static func combine(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}

extension PendingOutOfBandOperation.RedeemData {
    /// The token at the redeem URL's origin: the key of exactly-once redemption.
    public var identity: RedemptionIdentity { RedemptionIdentity(self) }
}

extension PendingOutOfBandOperation {
    /// The token at the redeem URL's origin: the key of exactly-once redemption and de-duplication.
    public var identity: RedemptionIdentity { payload.redeemData.identity }
}
