import DeviceSigning
import FetchChannelWire

/// The `Date` header's clock and format for the server.
///
/// Formatting is FetchChannelWire's `HTTPDate.format` (IMF-fixdate, locale-free), the same code whose
/// parser the clients use to measure clock skew: one implementation of the format, both ways.
public enum HTTPServerDate {
    /// The system's real-time clock in milliseconds since the Unix epoch (the default server clock).
    @Sendable
    public static func systemMillis() -> Int64 {
        SystemWallClock().nowMillis()
    }

    /// RFC 9110 §5.6.7 IMF-fixdate of milliseconds since the Unix epoch.
    public static func imfFixdate(epochMillis: Int64) -> String {
        HTTPDate.format(millis: epochMillis)
    }
}
