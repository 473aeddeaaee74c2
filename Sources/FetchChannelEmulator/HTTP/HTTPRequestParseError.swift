import DeviceSigning
import FetchChannelWire

/// Why a request was refused, with the status to answer; the connection is closed after that answer.
///
/// The status is the code: 400 for a malformed request, 411, 413, 431 or 505 where HTTP names the
/// problem. Equal when the codes are.
struct HTTPRequestParseError: CodedError {
    let code: HTTPStatus
    let reason: String

    init(_ status: Int, _ reason: String) {
        self.code = HTTPStatus(status)
        self.reason = reason
    }

    /// The status to answer with.
    var status: Int { code.code }
}
