internal import CDeviceSigningShim
import Testing

@testable import DeviceSigning

/// `dss_system_random`, the one-call source of the request ids: it fills exactly what it is asked
/// for and refuses what it cannot fill whole.
@Suite struct SystemRandomTests {
    @Test func fillsExactlyTheBytesAskedForAndNoMore() {
        var buffer = [UInt8](repeating: 0xA5, count: 257)
        let filled = buffer.withUnsafeMutableBufferPointer { dss_system_random($0.baseAddress, 256) }
        #expect(filled == 1)
        #expect(buffer[256] == 0xA5, "the byte after the 256 asked for was written")
        // 256 bytes from a CSPRNG keep the canary value in about one byte of them; a buffer left
        // as it was, or filled with zeros, keeps it in all or none.
        let unchanged = buffer[..<256].filter { $0 == 0xA5 }.count
        #expect(unchanged < 16, "\(unchanged) of 256 bytes still hold the value they had")
        #expect(buffer[..<256].contains { $0 != 0 })
    }

    @Test func refusesMoreThan256Bytes() {
        var buffer = [UInt8](repeating: 0, count: 257)
        let filled = buffer.withUnsafeMutableBufferPointer { dss_system_random($0.baseAddress, 257) }
        #expect(filled == 0)
    }

    @Test func refusesANullBuffer() {
        #expect(dss_system_random(nil, 16) == 0)
    }

    @Test func twoDrawsOf128BitsDiffer() {
        let first = SystemRandom.bits128()
        let second = SystemRandom.bits128()
        #expect(first != second)
    }
}
