import Foundation

/// The last few long strings a ``StrictJSONReader`` made, by their raw bytes in the text: a string
/// read again is the same string (one more reference), not another allocation and copy. Lives as
/// long as one read; a handful of entries, replaced in turn, so a text of unique strings costs a
/// few length comparisons per string.
struct RepeatedStrings {
    private var raw: [[UInt8]] = []
    private var texts: [String] = []
    private var next = 0

    private static var capacity: Int { 8 }

    init() {}

    /// The string made before from exactly these raw bytes, if it is still held.
    func text(for bytes: UnsafeRawBufferPointer) -> String? {
        for index in raw.indices where raw[index].count == bytes.count {
            let same = raw[index].withUnsafeBytes { held in
                guard let a = held.baseAddress, let b = bytes.baseAddress else { return true }
                return memcmp(a, b, bytes.count) == 0
            }
            if same { return texts[index] }
        }
        return nil
    }

    mutating func remember(_ bytes: UnsafeRawBufferPointer, as text: String) {
        if raw.count < Self.capacity {
            raw.append(Array(bytes))
            texts.append(text)
        } else {
            raw[next] = Array(bytes)
            texts[next] = text
            next = (next + 1) % Self.capacity
        }
    }
}
