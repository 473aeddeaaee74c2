/// Why a request was refused, with the status to answer; the connection is closed after that answer.
struct HTTPRequestParseError: Error, Sendable, Hashable, CustomStringConvertible {
    let status: Int
    let reason: String

    init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    var description: String { "\(status): \(reason)" }
}
