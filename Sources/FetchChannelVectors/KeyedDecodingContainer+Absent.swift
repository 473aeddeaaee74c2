extension KeyedDecodingContainer {
    /// The member's value, nil when the member is absent; a member present as `null` is a wrong
    /// type, not absent: in a vector file a `null` would be present and check nothing.
    func decodeUnlessAbsent<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
}
