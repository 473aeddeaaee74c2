/// A request rejected (or very probably rejected) because the device clock is off.
///
/// Carried by the fetch client's `clockSkewTooBig` error; ``message`` is the text for a person.
public struct ClockSkew: Sendable, Hashable {
    /// The backend's base URL.
    public let server: String
    /// Server time − device time in milliseconds (positive: device clock behind), when known.
    public let measuredOffsetMillis: Int64?
    /// The difference the backend accepts.
    public let toleranceMillis: Int64

    public init(server: String, measuredOffsetMillis: Int64?, toleranceMillis: Int64) {
        self.server = server
        self.measuredOffsetMillis = measuredOffsetMillis
        self.toleranceMillis = toleranceMillis
    }

    /// What happened and what to do, e.g. "The device clock is 7 min 12 s ahead of
    /// https://backend.example (allowed: 60 s). Set the clock automatically and try again."
    ///
    /// A negative offset means the server is behind, so the device is ahead. With no measured
    /// offset the text says only that the time was rejected; with one clearly within the tolerance
    /// (at least ``estimateMarginMillis`` inside it; the backend's own verdict, see
    /// `clockSkewTooBig`), it does not tell a person to set a clock that is right.
    public var message: String {
        let tolerance = UInt64(max(0, toleranceMillis))
        let allowed = DurationText.text(forMagnitude: tolerance)
        let advice = "Set the clock automatically and try again."
        let rejected =
            "The backend \(server) rejected the request's time: the device clock differs from "
            + "the server's by more than the allowed \(allowed). \(advice)"
        guard let offset = measuredOffsetMillis else { return rejected }
        let direction = offset < 0 ? "ahead of" : "behind"
        let size = DurationText.text(forMagnitude: offset.magnitude)
        // Clearly within: the backend said so itself, yet the measured difference, with a margin
        // for the estimate's own error (a Date header has whole seconds), is one it allows. Advice
        // to set the clock would send a person after a clock that is right.
        let (limit, overflow) = offset.magnitude.addingReportingOverflow(Self.estimateMarginMillis)
        guard overflow || limit > tolerance else {
            let how = offset == 0 ? "agrees with it" : "is only \(size) \(direction) it"
            return "The backend \(server) rejected the request's time, although the device clock \(how) "
                + "(allowed: \(allowed)): the backend allows less than this registration's tolerance, or one of the "
                + "clocks changed meanwhile. Check the tolerance configured for that backend and that the device "
                + "sets its clock automatically, then try again."
        }
        guard offset != 0 else { return rejected }  // no direction to tell
        let (edgeTop, beyondAny) = tolerance.addingReportingOverflow(Self.estimateMarginMillis)
        guard beyondAny || offset.magnitude > edgeTop else {
            // At the edge, within the margin on either side: the estimate cannot tell on which
            // side the clock is; the backend's verdict stands.
            return "The device clock is about \(size) \(direction) \(server), at the edge of the allowed "
                + "\(allowed) (the measurement is only as fine as a second). \(advice)"
        }
        return "The device clock is \(size) \(direction) \(server) (allowed: \(allowed)). \(advice)"
    }

    /// How far a measured offset may be from the truth: a Date header's whole seconds, and the
    /// request's own time on the way.
    static let estimateMarginMillis: UInt64 = 1_000
}
