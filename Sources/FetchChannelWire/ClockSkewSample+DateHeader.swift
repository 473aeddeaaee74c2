import DeviceSigning

extension ClockSkewSample {
    /// The sample an answer gives, or nil when it gives none.
    ///
    /// offset = serverDate + 500 − midpoint(sent, received), with midpoint = sent + ⌊(received − sent) / 2⌋:
    /// the server stamped `Date` somewhere between sending and receiving, and `Date` has one-second
    /// resolution (it is rounded down), so +500 ms is the middle of the second it names.
    ///
    /// Nil when: there is no `Date` or it does not parse (``HTTPDate``; an RFC 850 year is resolved
    /// against `receivedAtMillis`); an `Age` header is present with any value (the answer came from a
    /// cache, so `Date` is when the origin made it, not now); `receivedAtMillis < sentAtMillis` (the
    /// device clock moved during the request); or the arithmetic would overflow (nonsense times).
    public static func from(
        dateHeader: String?,
        ageHeader: String?,
        sentAtMillis: Int64,
        receivedAtMillis: Int64
    ) -> ClockSkewSample? {
        guard ageHeader == nil,
            receivedAtMillis >= sentAtMillis,
            let dateHeader,
            let serverMillis = HTTPDate.parseMillis(dateHeader, nowMillis: receivedAtMillis)
        else { return nil }
        let (roundTrip, roundTripOverflow) = receivedAtMillis.subtractingReportingOverflow(sentAtMillis)
        guard !roundTripOverflow else { return nil }
        let midpoint = sentAtMillis + roundTrip / 2  // between sent and received: cannot overflow
        let (offset, offsetOverflow) = (serverMillis + 500).subtractingReportingOverflow(midpoint)
        guard !offsetOverflow else { return nil }
        return ClockSkewSample(offsetMillis: offset, roundTripMillis: roundTrip)
    }
}
