/// Lowercase version-4 UUIDs (RFC 9562 §5.4) from the operating system's CSPRNG.
///
/// The system generator (getrandom / arc4random) keeps no user-space state, so forked processes
/// never repeat each other's ids.
enum RandomRequestId {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func make() -> String {
        var (high, low) = SystemRandom.bits128()
        high = (high & ~0xF000) | 0x4000  // version 4 (bits 48-51)
        low = (low & ~(0xC << 60)) | (0x8 << 60)  // variant 10xx (bits 64-65)
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                var shift = nibbles * 4
                while shift > 0 {
                    shift -= 4
                    buffer[index] = hexDigits[Int((value >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put(high >> 16, nibbles: 4)
            dash()
            put(high, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low, nibbles: 12)
            return index
        }
    }
}
