/// A command line that cannot be run as typed: exit status 64 (EX_USAGE), the message, the
/// command's usage line and a pointer to its help, all on standard error.
package struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
