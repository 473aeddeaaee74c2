// Shared by every fuzz target (scripts/fuzz.sh compiles it into each one).
//
// A target is an `@_cdecl("LLVMFuzzerTestOneInput")` function that returns 0. A crash, a Swift
// trap (overflow, index out of range, force unwrap) or a failed `fuzzCheck` makes libFuzzer keep
// the input as a crash artifact.

import Foundation

@testable import DeviceSigning

/// libFuzzer calls this once, before the first input; it calls the target's `fuzzWarmUp()`.
///
/// Globals that own heap objects (the fixed key, a target's tables) must be created here, not
/// during an input: Swift keeps some references with spare bits set (the `Data` inside a key, for
/// one), which LeakSanitizer cannot follow, so an object created during an input and kept in a
/// global would be reported as a leak of that input. Each target's `fuzzWarmUp()` touches its
/// globals, usually by running its entry point on a few typical inputs. (What is created here is
/// still reported at exit for the same reason; scripts/fuzz/lsan.supp suppresses exactly that.)
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?,
                           _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    _ = FuzzKeys.privateKey
    fuzzWarmUp()
    return 0
}

/// Runs `entry` on `input`, as libFuzzer would.
func fuzzRun(_ entry: (UnsafePointer<UInt8>?, Int) -> CInt, _ input: [UInt8]) {
    _ = input.withUnsafeBufferPointer { entry($0.baseAddress, $0.count) }
}

/// Stops the run when an invariant does not hold, naming it; libFuzzer saves the input.
func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
               file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fatalError("fuzz invariant violated: \(message())", file: file, line: line)
    }
}

/// The bytes libFuzzer passes, copied once.
func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Reads an input front to back; every read succeeds (missing bytes read as zero or empty), so
/// any input is a valid program for the target.
struct FuzzReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Eight bytes, little-endian (as written by scripts/fuzz/seeds.py).
    mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return Int64(bitPattern: value)
    }

    /// A length byte, then that many bytes.
    mutating func shortBytes() -> [UInt8] {
        take(Int(byte()))
    }

    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        guard position < end else { return [] }
        defer { position = end }
        return Array(bytes[position..<end])
    }

    mutating func rest() -> [UInt8] {
        take(bytes.count - position)
    }
}

/// SplitMix64: split points and the like from a seed the input determines, so every run of an
/// input does the same thing.
struct FuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// Seeded with FNV-1a of `bytes`.
    init(hashing bytes: [UInt8]) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        self.init(seed: hash)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The RFC 7515 Appendix A.3 example key, which signs the JWS and Device-Signature vectors.
/// Published, TEST ONLY (Keys/README.md).
enum FuzzKeys {
    static let privateKey: P256.Signing.PrivateKey = {
        guard let d = Base64.decode("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI", alphabet: .url),
              let key = try? P256.Signing.PrivateKey(rawRepresentation: d) else {
            fatalError("the fixed fuzz key does not load")
        }
        return key
    }()

    static var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// A dispatch target registered with `publicKey` in the vectors (Vectors/device-signature.json).
    static let dispatchTargetId = "0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40"
}
