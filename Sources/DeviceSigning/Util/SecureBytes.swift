
/// Bytes that are secret (private scalars, passphrases, private key encodings).
///
/// The storage is one allocation owned by this object; its whole capacity is zeroed with
/// OPENSSL_cleanse when the last reference goes away. The bytes are only lent out inside
/// `withUnsafeBytes`; `description` never shows them.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked: the buffer is written only during init and never mutated afterwards.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Test hook: called with the released buffer after it was zeroed and before it is freed.
    /// Internal, so that only this package's tests can observe the zeroing.
    static let releaseObserver = Locked<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)

    /// Copies `bytes`. Callers that hold the source in memory they own should zero it themselves.
    public init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(array.count, 1), alignment: 16)
        self.count = array.count
        array.withUnsafeBytes { source in
            if let base = source.baseAddress, source.count > 0 {
                buffer.baseAddress?.copyMemory(from: base, byteCount: source.count)
            }
        }
        var scratch = array
        scratch.withUnsafeMutableBytes { secureZero($0) }
    }

    /// Allocates `count` bytes and lets `initializer` fill them in place (no intermediate copy).
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        do {
            try initializer(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
            secureZero(buffer)
            buffer.deallocate()
            throw error
        }
    }

    /// The number of secret bytes.
    public let count: Int

    /// Lends the bytes for the duration of `body`. Do not let the pointer escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Constant-time comparison of two secrets of the same length.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for index in 0..<a.count { difference |= a[index] ^ b[index] }
                return difference == 0
            }
        }
    }

    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }

    deinit {
        secureZero(buffer)
        SecureBytes.releaseObserver.withLock { observer in
            observer?(UnsafeRawBufferPointer(buffer))
        }
        buffer.deallocate()
    }
}
