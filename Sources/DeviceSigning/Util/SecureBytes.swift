/// Bytes that are secret (private scalars, passphrases, private key encodings).
///
/// The storage is one allocation owned by this object; its whole capacity is zeroed with
/// OPENSSL_cleanse when the last reference goes away. The bytes are only lent out inside
/// `withUnsafeBytes`; `description` never shows them. Every initialiser copies straight into
/// that storage, so no other copy of the secret is left behind by this type (the zeroing has to
/// hit the storage that held the secret, not a copy-on-write copy of it).
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked: the buffer is written only during init and never mutated afterwards.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Test hook of this one instance: called with its buffer after it was zeroed and before it
    /// is freed. Per instance, so that no test observes another test's secrets.
    private let releaseObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?

    /// Copies `bytes` into the secure storage. A contiguous source (Array, slice, Data, a native
    /// String's UTF-8) is copied directly; any other sequence goes through one array, zeroed in
    /// place. The source itself is the caller's: use `init(takingFrom:count:)` for an array the
    /// caller owns and wants cleared.
    public convenience init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if let copy = bytes.withContiguousStorageIfAvailable({ Self.allocateCopy(of: UnsafeRawBufferPointer($0)) }) {
            self.init(adopting: copy, releaseObserver: nil)
        } else {
            var array = Array(bytes)
            let copy = array.withUnsafeBytes { Self.allocateCopy(of: $0) }
            secureZero(&array)
            self.init(adopting: copy, releaseObserver: nil)
        }
    }

    /// Copies the first `count` bytes of `source` (all of it by default) and then zeroes the
    /// whole of `source` in place with OPENSSL_cleanse, for a secret read into an array the
    /// caller owns (a passphrase from a file or a prompt). `source` must not share its storage
    /// with another array (a copy would be cleared instead); `count` is clamped to its size.
    package convenience init(takingFrom source: inout [UInt8], count: Int? = nil) {
        let length = Swift.min(Swift.max(count ?? source.count, 0), source.count)
        let copy = source.withUnsafeBytes { Self.allocateCopy(of: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        secureZero(&source)
        self.init(adopting: copy, releaseObserver: nil)
    }

    /// Allocates `count` bytes and lets `initializer` fill them in place (no intermediate copy).
    /// `count` is the caller's own size, never one read from input: a negative one is a bug.
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0, "SecureBytes(count:) was given a negative count, \(count)")
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        self.releaseObserver = nil
        // Every stored property is set: if `initializer` throws, the object is released and
        // `deinit` zeroes and frees the buffer (freeing it here too would free it twice).
        try initializer(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// For tests: a copy of `bytes` whose release is reported to `releaseObserver`.
    convenience init(_ bytes: [UInt8], releaseObserver: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
        let copy = bytes.withUnsafeBytes { Self.allocateCopy(of: $0) }
        self.init(adopting: copy, releaseObserver: releaseObserver)
    }

    private init(
        adopting copy: (buffer: UnsafeMutableRawBufferPointer, count: Int),
        releaseObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    ) {
        self.buffer = copy.buffer
        self.count = copy.count
        self.releaseObserver = releaseObserver
    }

    /// A new allocation (at least one byte, so the pointer is never nil) holding `source`.
    private static func allocateCopy(
        of source: UnsafeRawBufferPointer
    ) -> (buffer: UnsafeMutableRawBufferPointer, count: Int) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(source.count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        if source.count > 0 { buffer.copyMemory(from: source) }
        return (buffer, source.count)
    }

    /// The number of secret bytes.
    public let count: Int

    /// Lends the bytes for the duration of `body`. Do not let the pointer escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// A copy in an ordinary array, for an API that takes one (writing an export to its output),
    /// with room for `extraCapacity` more bytes so that appending them does not move the secret
    /// and leave the old storage behind. The caller zeroes the array with `secureZero(_:)`.
    package func copiedBytes(extraCapacity: Int = 0) -> [UInt8] {
        [UInt8](uninitializedCount: count + Swift.max(extraCapacity, 0)) { output, initialized in
            withUnsafeBytes { UnsafeMutableRawBufferPointer(output).copyMemory(from: $0) }
            initialized = count
        }
    }

    /// The standard base64 (with padding) of these bytes, written straight into new secure
    /// storage: for a secret that must be shown as text (a private DER in a JSON document).
    package func base64Encoded() -> SecureBytes {
        withUnsafeBytes { bytes in
            SecureBytes(count: Base64.encodedCount(bytes.count, alphabet: .standard)) { output in
                _ = Base64.encode(bytes, alphabet: .standard, into: output)
            }
        }
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
        releaseObserver?(UnsafeRawBufferPointer(buffer))
        buffer.deallocate()
    }
}
