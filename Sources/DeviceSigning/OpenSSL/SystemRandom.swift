internal import CDeviceSigningShim

/// The operating system's CSPRNG through the shim (`dss_system_random`: getrandom on Linux,
/// arc4random_buf on Apple platforms), the same source as `SystemRandomNumberGenerator`.
enum SystemRandom {
    /// 128 random bits in one system call. `SystemRandomNumberGenerator` makes one per 64 bits, and
    /// a call costs about half a microsecond on these machines, on the path of every request (the
    /// request id). The standard generator stays as the fallback should the shim ever fail.
    static func bits128() -> (UInt64, UInt64) {
        var bits: (UInt64, UInt64) = (0, 0)
        let filled = withUnsafeMutableBytes(of: &bits) { buffer in
            dss_system_random(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
        }
        if filled { return bits }
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }
}
