import Foundation

/// Keeps a backend to its own operations: a fetched operation may be redeemed only inside the
/// ``BackendOrigin`` of the backend that returned it (same scheme, host and port, under its base
/// path). Otherwise a backend, or anything that can change its answer, could send this device's
/// redemption (and the token) to another place, or hand out another backend's token.
///
/// The others are dropped, never returned and so never redeemed, and reported as one
/// `invalidResponse` (kind `foreignRedeemUrl`) for that backend; its remaining operations are still used.
enum RedeemOriginCheck {
    /// How many of the foreign places a reason names; the rest are counted.
    static let namedPlaces = 3

    /// `operations` without those whose redeem URL is outside `origin` (the backend's; nil when its
    /// URL has none, and then nothing is admitted), and the error that reports those (nil when
    /// there are none). `server` names the backend in the error.
    static func admitted(_ operations: [PendingOutOfBandOperation], origin: BackendOrigin?, server: String)
        -> (operations: [PendingOutOfBandOperation], error: PendingOutOfBandOperationsError?)
    {
        // A backend's operations mostly share one redeem URL: each text is parsed and checked once,
        // keyed by its bytes (two canonically equivalent texts can be two URLs). The previous
        // operation's text is compared first, which spares the common answer any hashing.
        var verdicts: [RedeemURLOrigins.ExactText: Bool] = [:]
        var previous: (text: RedeemURLOrigins.ExactText, verdict: Bool)?
        let inside = operations.map { operation in
            let text = RedeemURLOrigins.ExactText(text: operation.payload.redeemData.redeemUrl)
            if let previous, previous.text == text { return previous.verdict }
            let verdict =
                verdicts[text]
                ?? RedeemURLOrigins.origin(of: text.text).map { origin?.contains($0) ?? false } ?? false
            verdicts[text] = verdict
            previous = (text, verdict)
            return verdict
        }
        // All inside (the common case): the operations are returned as they are, not copied.
        guard inside.contains(false) else { return (operations, nil) }
        var admitted: [PendingOutOfBandOperation] = []
        var foreign: [String] = []
        for (operation, isInside) in zip(operations, inside) {
            if isInside {
                admitted.append(operation)
            } else {
                let text = operation.payload.redeemData.redeemUrl
                foreign.append(place(of: text, URL(string: text)))
            }
        }
        let cause = InvalidResponse(.foreignRedeemUrl, reason: reason(dropped: foreign, backend: origin))
        return (admitted, .invalidResponse(server: server, cause: cause))
    }

    /// "2 operations were dropped and will not be redeemed: their redeem URL (https://other:443/x)
    /// is not on this backend (https://host:443/prefix)."
    static func reason(dropped places: [String], backend: BackendOrigin?) -> String {
        var distinct: [String] = []
        var seen: Set<String> = []
        for place in places where seen.insert(place).inserted { distinct.append(place) }
        var named = distinct.prefix(namedPlaces).joined(separator: ", ")
        if distinct.count > namedPlaces { named += " and \(distinct.count - namedPlaces) more" }
        let count = places.count == 1 ? "1 operation was" : "\(places.count) operations were"
        let home = backend.map { "this backend (\($0))" } ?? "this backend, whose URL has no usable origin"
        return "\(count) dropped and will not be redeemed: the redeem URL (\(named)) is not on \(home)."
    }

    /// Where a redeem URL points, for the reason: its origin and path, or, when it has none, its
    /// text without user information, cut and with control characters shown as `?`.
    private static func place(of text: String, _ url: URL?) -> String {
        if let url, let origin = BackendOrigin(url: url) { return origin.description }
        return "an unusable URL '\(QuotedText.shown(URLUserInformation.masked(text)))'"
    }
}
