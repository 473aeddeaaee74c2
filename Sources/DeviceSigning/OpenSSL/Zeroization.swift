internal import CDeviceSigningShim
import Foundation

/// Overwrites memory with zeros in a way the compiler may not optimise away (OPENSSL_cleanse).
package func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    dss_cleanse(base, buffer.count)
}

/// Zeroes the storage of `bytes` in place (OPENSSL_cleanse; a loop of stores may be removed by
/// the optimiser), for secrets the caller holds in an array: a passphrase buffer, a decoded key.
/// `bytes` must not share its storage with another array, or the copy made for the write is
/// cleared instead of the original.
package func secureZero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { secureZero($0) }
}

/// A `Data` that takes over `buffer` (from `UnsafeMutableRawPointer.allocate`; its first `count`
/// bytes are the contents), and zeroes all `capacity` bytes before it frees them: for a secret
/// handed on as `Data` (a decrypted answer). Foundation may keep contents of a few bytes in the
/// `Data` value itself and release the buffer at once (zeroed then); copies a caller makes are
/// the caller's. `releaseObserver` is a test's look at the buffer after it was zeroed.
package func zeroingData(
    adopting buffer: UnsafeMutableRawPointer, capacity: Int, count: Int,
    releaseObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil
) -> Data {
    Data(
        bytesNoCopy: buffer, count: count,
        deallocator: .custom { pointer, _ in
            let whole = UnsafeMutableRawBufferPointer(start: pointer, count: capacity)
            secureZero(whole)
            releaseObserver?(UnsafeRawBufferPointer(whole))
            pointer.deallocate()
        })
}
