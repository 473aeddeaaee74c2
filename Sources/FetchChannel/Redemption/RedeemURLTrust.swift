import Foundation

/// The trust a redemption at a redeem URL must satisfy, from the registered backends and their
/// trusts: one rule for the library's ``RedemptionClient`` and the CLI's `redeem`.
package enum RedeemURLTrust {
    /// The trust of the registered backend that holds `url` (the one with the longest base path,
    /// when backends nest); the system CAs when none does.
    ///
    /// A failure (code `other`, nothing sent) when several registrations of that backend hold
    /// different trusts, a CA or pins that another lacks: the operation may have come from either,
    /// and its token must not go out under whichever trust happens to be listed first.
    package static func choose(for url: URL, among backends: [(origin: BackendOrigin, trust: TLSTrust)])
        -> Result<TLSTrust, NetworkFailure>
    {
        let holding = backends.filter { $0.origin.contains(url) }
        guard let longest = holding.map(\.origin.basePath.count).max() else { return .success(.system) }
        let candidates = holding.filter { $0.origin.basePath.count == longest }
        let first = candidates[0]
        // Pins are a set: the same pins listed in another order are the same trust.
        guard
            let other = candidates.first(where: {
                $0.trust.anchors != first.trust.anchors || Set($0.trust.pins) != Set(first.trust.pins)
            })
        else { return .success(first.trust) }
        return .failure(
            NetworkFailure(
                .other,
                detail: "two registrations of \(first.origin) hold different TLS trust (\(first.trust); "
                    + "\(other.trust)), and the operation may come from either: register the backend with "
                    + "one trust, or redeem with the trust of the registration it came from"))
    }
}
