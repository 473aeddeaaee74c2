import Foundation

extension KeyStore {
    /// A record that is there but cannot be read: corrupt, or refused as unsafe (open to others,
    /// a symbolic link, another user's). Its key is not used; the error names the file and the fix.
    public struct UnreadableRecord: Sendable {
        public let keyId: String
        public let error: DeviceSigningError
    }

    /// Every record of the store, read one by one: the readable ones, and each that is not with
    /// its reason. For a caller that uses each key on its own (a fetch of every registration, a
    /// listing for a person), so that one bad record costs only its own key.
    public struct Listing: Sendable {
        /// Oldest first, then by key id, as ``KeyStore/list()``.
        public let records: [KeyMetadata]
        /// By key id.
        public let unreadable: [UnreadableRecord]
    }

    /// The records as a ``Listing``. Throws only when the directory itself cannot be read; a
    /// record deleted meanwhile is left out.
    public func listing() throws -> Listing {
        var records: [KeyMetadata] = []
        var unreadable: [UnreadableRecord] = []
        for keyId in try keyIds() {
            do {
                records.append(try readMetadata(keyId))
            } catch let error as DeviceSigningError {
                guard error.code != .keyNotFound else { continue }  // deleted while listing
                unreadable.append(UnreadableRecord(keyId: keyId, error: error))
            }
        }
        return Listing(
            records: records.sorted { ($0.created, $0.keyId) < ($1.created, $1.keyId) }, unreadable: unreadable)
    }

    /// The ids of the keys present (those with a record), sorted, from the file names alone:
    /// finding a key by a prefix of its id needs no record read, so a bad record of another
    /// key cannot stand in its way.
    public func keyIds() throws -> [String] {
        try storage.entries().compactMap { name in
            guard name.hasSuffix(".json") else { return nil }
            let keyId = String(name.dropLast(".json".count))
            return Self.isValidKeyId(keyId) ? keyId : nil
        }.sorted()
    }
}
