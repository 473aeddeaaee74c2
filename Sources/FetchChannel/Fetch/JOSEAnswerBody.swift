import Foundation

/// The compact JWE in the body of an answer asked for as `application/jose`: the body without the
/// spaces, tabs and line ends around it (a backend may end its body with a newline). One rule for
/// every reader of such an answer, `fetch` and the CLI's key probe alike, so that they never
/// disagree on whether an answer decrypts.
package enum JOSEAnswerBody {
    /// A slice of `body`, not a copy: most of an answer is its ciphertext.
    package static func compact(in body: Data) -> Data.SubSequence {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let start = body.firstIndex { !isSpace($0) } ?? body.endIndex
        let end = body.lastIndex { !isSpace($0) }.map { body.index(after: $0) } ?? start
        return body[start..<max(start, end)]
    }
}
