/// What ``StrictJSONReader`` tells as it reads: containers opening and closing, member names, and
/// (for a sink that ``readsValues``) every scalar value. A sink throws to refuse the text.
protocol StrictJSONSink {
    /// Whether the reader materialises values for ``scalar(_:)``; when false, strings that are
    /// values are checked in place and never copied, and ``scalar(_:)`` is not called.
    static var readsValues: Bool { get }

    mutating func beginObject()
    mutating func beginArray()
    /// The name of the next member of the innermost object.
    mutating func memberName(_ name: String) throws(StrictJSON.Violation)
    /// A string, number, boolean or null (only when ``readsValues``).
    mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation)
    mutating func endObject() throws(StrictJSON.Violation)
    mutating func endArray() throws(StrictJSON.Violation)
}

/// The sink of ``StrictJSON/requireUniqueMemberNames(_:)``: the names seen in each open object,
/// innermost last; nothing else is kept.
struct UniqueMemberNames: StrictJSONSink {
    static let readsValues = false

    private var names: [Set<String>] = []

    mutating func beginObject() {
        names.append([])
    }

    mutating func beginArray() {}

    mutating func memberName(_ name: String) throws(StrictJSON.Violation) {
        guard names[names.count - 1].insert(name).inserted else { throw .duplicateMemberName(name) }
    }

    mutating func scalar(_ value: JSONValue) {}

    mutating func endObject() {
        names.removeLast()
    }

    mutating func endArray() {}
}
