/// One measurement of how far a server's clock is from the device's, taken from an answer's `Date`.
///
/// `offsetMillis` = server time − device time: positive when the server is ahead (the device clock is
/// behind), negative when the device clock is ahead. Adding it to the device clock gives server time,
/// which is what ``ClockSkewPolicy/compensate(maximumOffsetMillis:)`` signs with.
public struct ClockSkewSample: Sendable, Hashable {
    /// Server time minus device time, in milliseconds.
    public let offsetMillis: Int64
    /// How long the request took (received − sent): the sample is uncertain by about half of it plus 0.5 s.
    public let roundTripMillis: Int64

    public init(offsetMillis: Int64, roundTripMillis: Int64 = 0) {
        self.offsetMillis = offsetMillis
        self.roundTripMillis = roundTripMillis
    }
}
