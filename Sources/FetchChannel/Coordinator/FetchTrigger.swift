/// Why the app asks the coordinator to act. There is deliberately no timer: a fetch channel
/// fetches when something happened, never on a schedule.
public enum FetchTrigger: Sendable, Hashable {
    /// The app came to the foreground.
    case foreground
    /// The person asked for it (pull to refresh, a "check for requests" button).
    case userAction
    /// A push, link or QR code that already carries an operation: it goes straight to the
    /// redemption pipeline and nothing is fetched.
    case incoming(DispatchChannel, PendingOutOfBandOperation.Payload)

    /// `foreground`, `userAction` or `incoming`, for logs.
    public var kind: String {
        switch self {
        case .foreground: "foreground"
        case .userAction: "userAction"
        case .incoming: "incoming"
        }
    }
}
