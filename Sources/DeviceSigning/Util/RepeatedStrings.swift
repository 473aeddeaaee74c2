import Foundation

/// The last few long strings a ``StrictJSONReader`` made, by their raw bytes in the text: a string
/// read again is the same string (one more reference), not another allocation and copy. Lives as
/// long as one read; a handful of entries, so a text of unique strings costs a few length
/// comparisons per string.
///
/// Entries are replaced in turn, but one read again since it was last passed over gets a second
/// chance (the "clock" policy): in an array of operations, each operation's unique token then
/// takes the place of the previous token, not of the member names and values every operation
/// repeats.
struct RepeatedStrings {
    private var raw: [[UInt8]] = []
    private var texts: [String] = []
    private var readAgain: [Bool] = []
    private var next = 0

    private static var capacity: Int { 8 }

    init() {}

    /// The string made before from exactly these raw bytes, if it is still held.
    mutating func text(for bytes: UnsafeRawBufferPointer) -> String? {
        for index in raw.indices where raw[index].count == bytes.count {
            let same = raw[index].withUnsafeBytes { held in
                guard let a = held.baseAddress, let b = bytes.baseAddress else { return true }
                return memcmp(a, b, bytes.count) == 0
            }
            if same {
                readAgain[index] = true
                return texts[index]
            }
        }
        return nil
    }

    mutating func remember(_ bytes: UnsafeRawBufferPointer, as text: String) {
        guard raw.count == Self.capacity else {
            raw.append(Array(bytes))
            texts.append(text)
            readAgain.append(false)
            return
        }
        while readAgain[next] {
            readAgain[next] = false
            next = (next + 1) % Self.capacity
        }
        // The entry's storage is reused: no allocation when the new bytes fit in it.
        raw[next].removeAll(keepingCapacity: true)
        raw[next].append(contentsOf: bytes)
        texts[next] = text
        next = (next + 1) % Self.capacity
    }
}
