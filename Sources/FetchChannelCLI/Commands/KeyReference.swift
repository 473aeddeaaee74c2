import DeviceSigning

/// A key as the command line names it: the full 43-character key id, or a prefix of at least 4
/// base64url characters that the key store resolves (`KeyStoreAccess.resolve`). Checked in the
/// parse step, before the store is opened.
struct KeyReference: Sendable, Hashable {
    let text: String

    init(parsing text: String) throws(UsageError) {
        guard
            KeyStore.isValidKeyId(text)
                || (text.count >= 4 && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        else {
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
