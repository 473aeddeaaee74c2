import Foundation
import Testing

@testable import DeviceSigning

/// Secrets are zeroed in the storage that held them, not in a copy-on-write copy of it.
@Suite struct SecureBytesTests {
    typealias PrivateKey = P256.Signing.PrivateKey

    /// The release hook belongs to one instance, so no other test's secrets are observed.
    @Test func releasedStorageIsZeroed() throws {
        let observed = Locked<[UInt8]?>(nil)
        do {
            let secret = SecureBytes([UInt8](repeating: 0xA5, count: 48)) { buffer in
                observed.withLock { $0 = Array(buffer) }
            }
            #expect(secret.withUnsafeBytes { $0.allSatisfy { $0 == 0xA5 } })
        }
        let released = try #require(observed.withLock { $0 })
        #expect(released.count >= 48)
        #expect(released.allSatisfy { $0 == 0 })
    }

    /// A decrypted answer handed on as `Data`: its whole buffer, padding beyond the contents
    /// included, is zero when it is freed.
    @Test func zeroingDataClearsItsWholeBufferOnRelease() {
        let observed = Locked<[UInt8]?>(nil)
        do {
            let capacity = 48
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0xA5, count: capacity)
            let data = zeroingData(adopting: buffer, capacity: capacity, count: 32) { released in
                observed.withLock { $0 = Array(released) }
            }
            #expect(data == Data(repeating: 0xA5, count: 32))
            #expect(observed.withLock { $0 } == nil)
        }
        #expect(observed.withLock { $0 } == [UInt8](repeating: 0, count: 48))
    }

    /// A filler that throws (a key file that shrank while being read) must not free the storage
    /// twice: the object is released and its deinit alone zeroes and frees it.
    @Test func aThrowingInitializerFreesTheStorageOnce() {
        struct Shrank: Error {}
        for _ in 0..<100 {
            #expect(throws: Shrank.self) {
                _ = try SecureBytes(count: 64) { buffer in
                    buffer.storeBytes(of: 0xA5, as: UInt8.self)
                    throw Shrank()
                }
            }
        }
        // The allocator still works: a double free would have corrupted it (or aborted).
        let after = SecureBytes(count: 64) { $0.initializeMemory(as: UInt8.self, repeating: 7) }
        #expect(after.withUnsafeBytes { $0.allSatisfy { $0 == 7 } })
    }

    @Test func takingFromCopiesThenZeroesTheSourceInPlace() {
        var source = Array("correct horse battery staple\n".utf8)
        let storage = source.withUnsafeBytes { $0.baseAddress }
        let passphrase = SecureBytes(takingFrom: &source, count: source.count - 1)
        #expect(passphrase.withUnsafeBytes { Array($0) } == Array("correct horse battery staple".utf8))
        #expect(source.withUnsafeBytes { $0.baseAddress } == storage, "the same storage, not a copy")
        #expect(source.count == 29 && source.allSatisfy { $0 == 0 })

        var short: [UInt8] = [1, 2, 3]
        #expect(SecureBytes(takingFrom: &short, count: 10).count == 3)
        #expect(SecureBytes(takingFrom: &short, count: -1).count == 0)
        #expect(short == [0, 0, 0])
    }

    @Test func secureZeroClearsTheArraysOwnStorage() {
        var secret: [UInt8] = Array(repeating: 0x5C, count: 100)
        let storage = secret.withUnsafeBytes { $0.baseAddress }
        secureZero(&secret)
        #expect(secret.withUnsafeBytes { $0.baseAddress } == storage)
        #expect(secret.allSatisfy { $0 == 0 })
    }

    @Test func copiedBytesLeaveRoomToAppendWithoutMovingTheSecret() throws {
        let secret = SecureBytes(Array("private".utf8))
        var copy = secret.copiedBytes(extraCapacity: 1)
        let storage = copy.withUnsafeBytes { $0.baseAddress }
        copy.append(UInt8(ascii: "\n"))
        #expect(copy.withUnsafeBytes { $0.baseAddress } == storage)
        #expect(copy == Array("private\n".utf8))
    }

    @Test func initialisersCopyEverySourceExactly() {
        let bytes: [UInt8] = Array(0...200)
        let expected = bytes
        #expect(SecureBytes(bytes).withUnsafeBytes { Array($0) } == expected)
        #expect(SecureBytes(bytes[10..<20]).withUnsafeBytes { Array($0) } == Array(expected[10..<20]))
        #expect(SecureBytes(Data(bytes)).withUnsafeBytes { Array($0) } == expected)
        let lazy = bytes.lazy.map { $0 }
        #expect(SecureBytes(lazy).withUnsafeBytes { Array($0) } == expected, "a non-contiguous sequence")
        #expect(SecureBytes("pässword".utf8).withUnsafeBytes { Array($0) } == Array("pässword".utf8))
        #expect(SecureBytes([UInt8]()).count == 0)
        #expect(bytes == expected, "the caller's source is left alone")
    }

    /// The private PEM is written straight into SecureBytes; it is exactly the PEM text.
    @Test func privatePEMIsTheStandardText() throws {
        let key = try PrivateKey()
        let der = try key.derRepresentation.withUnsafeBytes { Array($0) }
        let pem = try key.pemRepresentation.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(pem == TestPEM.pem(label: "PRIVATE KEY", der: der))
        for length in [0, 1, 2, 3, 47, 48, 49, 96, 97, 200] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let secret = bytes.withUnsafeBytes { PEM.encodeSecret(label: "X", der: $0) }
            let written = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            let lines = written.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first == "-----BEGIN X-----" && lines.dropLast().last == "-----END X-----", "\(length)")
            #expect(lines.dropFirst().dropLast(2).allSatisfy { $0.count <= 64 }, "\(length)")
            #expect(Data(base64Encoded: lines.dropFirst().dropLast(2).joined()) == Data(bytes), "\(length)")
        }
    }
}
