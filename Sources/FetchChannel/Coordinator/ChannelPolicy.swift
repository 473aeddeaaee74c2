/// Which fetched operations a coordinator may start: exactly one policy per coordinator.
///
/// Pick one and keep it: an app that starts push operations from the fetch channel under one
/// policy and link or QR-code operations from another path under a second would process an
/// operation twice. Operations that arrive as a trigger (`FetchTrigger.incoming`) are already
/// being started by their own channel and are not filtered.
public enum ChannelPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Only operations dispatched by push (`firebase-cloud-messaging`): the fetch channel is the
    /// fallback for a push that did not arrive or was dismissed.
    case pushOnly
    /// Push, link and QR-code operations: a person who cannot scan a code or open a link on
    /// another screen gets the operation on the device instead.
    case accessibility

    /// Whether an operation dispatched through `channel` may be started. Unknown channels
    /// (`.other`) never are: their handling is not known here.
    public func admits(_ channel: DispatchChannel) -> Bool {
        switch (self, channel) {
        case (_, .pushNotification): true
        case (.accessibility, .link), (.accessibility, .qrCode): true
        case (.pushOnly, .link), (.pushOnly, .qrCode), (_, .other): false
        }
    }

    public var description: String { rawValue }
}
