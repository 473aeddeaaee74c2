/// An ordered list of header fields with case-insensitive name lookup.
///
/// Order and repeated fields are preserved because they matter on the wire (e.g. two conflicting
/// `Content-Length` fields) and to a backend that wants to see exactly what a client sent.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One `name: value` field line, as received or to be sent.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in wire order.
    public private(set) var fields: [Field]

    public init() {
        fields = []
    }

    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of field lines (a repeated name counts once per line).
    public var count: Int { fields.count }

    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field with this name (case-insensitive), if any.
    public subscript(name: String) -> String? {
        fields.first { HTTPHeaders.namesEqual($0.name, name) }?.value
    }

    /// Every value of the fields with this name (case-insensitive), in wire order.
    public func values(for name: String) -> [String] {
        fields.filter { HTTPHeaders.namesEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field of this name by one field, at the position of the first one (or at the end).
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { HTTPHeaders.namesEqual($0.name, name) }) {
            fields[first] = Field(name: name, value: value)
            var index = fields.index(after: first)
            while index < fields.endIndex {
                if HTTPHeaders.namesEqual(fields[index].name, name) {
                    fields.remove(at: index)
                } else {
                    index = fields.index(after: index)
                }
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func remove(name: String) {
        fields.removeAll { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// Whether a comma-separated list field (such as `Connection`) contains `token`, case-insensitively.
    public func containsToken(_ token: String, inField name: String) -> Bool {
        values(for: name).contains { value in
            value.split(separator: ",").contains { element in
                HTTPHeaders.namesEqual(String(element.trimmingHTTPWhitespace()), token)
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison: field names are tokens, so no Unicode folding is wanted.
    static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { HTTPSyntax.asciiLowercased($0) == HTTPSyntax.asciiLowercased($1) }
    }
}

extension Substring {
    /// Drops leading and trailing SP and HTAB (the OWS of RFC 9110 §5.6.3).
    func trimmingHTTPWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
