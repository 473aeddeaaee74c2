/// Whether a failed answer was caused by the device clock.
///
/// The fetch client classifies every non-success answer; ``ClockSkewPolicy`` then decides what to do.
public enum ClockSkewClassification: Sendable, Hashable {
    /// The backend said so (`CLOCK_SKEW_TOO_BIG`).
    case definite(ClockSkew)
    /// A 401 or 403 while the estimated offset exceeds the tolerance: the backend may not say why
    /// it rejected the signature, but a clock this far off is the likeliest reason.
    case probable(ClockSkew)
    case notSkew

    /// The skew, for either kind of skew.
    public var clockSkew: ClockSkew? {
        switch self {
        case .definite(let skew), .probable(let skew): skew
        case .notSkew: nil
        }
    }
}
