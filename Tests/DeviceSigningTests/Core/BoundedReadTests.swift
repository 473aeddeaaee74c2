import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#endif

/// `BoundedRead.read` returns a copy of what it read, at most one byte past the limit (which says
/// the input was larger); the buffer it read into is zeroed, whatever the length.
@Suite struct BoundedReadTests {
    /// What `read` returns for `input` written to a pipe and closed.
    static func readPipe(_ input: [UInt8], maximumBytes: Int) throws -> Data? {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let written = input.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        try #require(written == input.count)
        return BoundedRead.read(ends[0], maximumBytes: maximumBytes)
    }

    @Test(arguments: [0, 1, 14, 15, 100])
    func aShortInputIsReturnedWhole(length: Int) throws {
        let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        #expect(try Self.readPipe(input, maximumBytes: 100) == Data(input))
    }

    @Test func aLongerInputStopsOneBytePastTheLimit() throws {
        let input = [UInt8](repeating: 0x41, count: 64)
        #expect(try Self.readPipe(input, maximumBytes: 10) == Data(input.prefix(11)))
    }

    @Test func aReadErrorIsNil() {
        let result = BoundedRead.read(-1, maximumBytes: 10)
        let code = errno
        #expect(result == nil)
        #expect(code == EBADF, "errno is kept")
    }
}
