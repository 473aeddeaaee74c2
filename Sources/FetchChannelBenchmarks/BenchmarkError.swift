import DeviceSigning

/// Why a benchmark could not produce its rows: what it measured failed or gave a wrong result, or
/// what it needs (a socket, a backend, a key) could not be set up. The bench run then fails as a
/// whole; there is no partial row. Equal when the codes are.
package struct BenchmarkError: CodedError {
    package struct Code: ErrorCode {
        package let rawValue: String

        /// The benchmark did not run to the end with correct results (every benchmark so far
        /// reports its failures under this one code; the reason says which step failed).
        package static let runFailed = Code(rawValue: "runFailed")
    }

    package let code: Code
    package let reason: String

    /// A ``Code/runFailed`` error.
    package init(_ reason: String) {
        self.code = .runFailed
        self.reason = reason
    }
}
