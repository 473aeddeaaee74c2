import DeviceSigning

/// A key as the command line names it: the full 43-character key id, or a prefix of 4 to 42
/// base64url characters that the key store resolves (`KeyStoreAccess.resolve`). Checked in the
/// parse step, before the store is opened: anything longer is no key id's prefix.
struct KeyReference: Sendable, Hashable {
    let text: String

    init(parsing text: String) throws(UsageError) {
        // ASCII only: key ids are base64url, and a Unicode letter or digit ("é", "١") is in no key id.
        let base64url = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
        guard KeyStore.isValidKeyId(text) || ((4...42).contains(text.utf8.count) && base64url) else {
            throw UsageError(
                .invalidValue,
                "'\(ArgumentParser.shown(text))' is not a key id: give the 43-character id 'fetchchannel key list' "
                    + "shows, or at least its first 4 characters")
        }
        self.text = text
    }
}

extension ValueParser where Value == KeyReference {
    /// A key id or a prefix of one.
    static var keyReference: ValueParser<KeyReference> {
        ValueParser { text, _ throws(UsageError) in try KeyReference(parsing: text) }
    }
}
