import Foundation

/// Which local notifications a fetch has made stale: those announcing an operation the backends
/// no longer hold (redeemed elsewhere, expired, withdrawn).
///
/// Only what the fetch can vouch for is cancelled. A notification is stale when all hold:
/// - it was there before the fetch's request was sent (the caller passes only those: a newer push
///   is not contradicted by an older answer);
/// - its token is not among the fetched operations (all of them, whatever the channel policy);
/// - its backend answered: its `server` is not among the failed ones, nor on the origin (scheme,
///   host and port) of one of them, or — when it names no server — no backend failed. A failure
///   that names no server keeps every notification.
///
/// The origin comparison keeps a notification whose `server` an app wrote another way than the
/// registration's name (`https://b.example:443/` for `https://b.example`): keeping one too many
/// costs a stale notification until the next fetch; cancelling one for an operation still pending
/// on a backend that did not answer would hide it.
public enum NotificationReconciliation {
    public static func stale(
        _ notificationsBeforeFetch: [LocalNotification], operations: [PendingOutOfBandOperation],
        failedServers: [String?]
    ) -> [LocalNotification] {
        if failedServers.contains(where: { $0 == nil }) { return [] }
        // Tokens as bytes, as an operation's identity compares them: `"\u{E9}"` is not `"e\u{301}"`.
        let pending = Set(operations.map { Array($0.token.utf8) })
        let failed = Set(failedServers.compactMap { $0 })
        let failedOrigins = Set(failed.compactMap(origin(of:)))
        return notificationsBeforeFetch.filter { notification in
            guard !pending.contains(Array(notification.token.utf8)) else { return false }
            if let server = notification.server {
                return !failed.contains(server) && !(origin(of: server).map(failedOrigins.contains) ?? false)
            }
            return failed.isEmpty
        }
    }

    /// `scheme://host:port` of a server name, or nil when it is not an http(s) URL.
    private static func origin(of server: String) -> String? {
        URL(string: server).flatMap(BackendOrigin.init(url:))?.origin
    }
}
