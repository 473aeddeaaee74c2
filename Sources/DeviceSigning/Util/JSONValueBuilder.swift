/// The sink of ``StrictJSON/parse(_:limits:)``: builds the ``JSONValue`` as the reader goes, with
/// one stack per kind of open container (no recursion). A member whose name its object already
/// has is refused when its value is complete.
package struct JSONValueBuilder: StrictJSONSink {
    package static let readsValues = true

    /// The document's value, once read.
    package private(set) var value: JSONValue?

    /// One entry per open container, innermost last: true for an object.
    private var isObject: [Bool] = []
    private var objects: [[String: JSONValue]] = []
    private var arrays: [[JSONValue]] = []
    /// The name of the member being read, per open object.
    private var pendingNames: [String] = []

    package init() {}

    /// The value read, leaving the builder ready for the next one with its stacks' storage kept:
    /// one builder can read many values (each operation's) without allocating its stacks again.
    package mutating func takeValue() -> JSONValue? {
        defer { value = nil }
        return value
    }

    package mutating func beginObject() {
        isObject.append(true)
        // No storage reserved: an empty object allocates nothing, so a MiB of `[{},{},…]` stays a
        // few MiB of values rather than a dictionary's buckets for each of 350,000 objects. Its
        // first member reserves room for three (``attach(_:)``).
        objects.append([:])
    }

    package mutating func beginArray() {
        isObject.append(false)
        arrays.append([])
    }

    package mutating func memberName(_ name: String) {
        pendingNames.append(name)
    }

    package mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation) {
        try attach(value)
    }

    package mutating func endObject() throws(StrictJSON.Violation) {
        isObject.removeLast()
        try attach(.object(objects.removeLast()))
    }

    package mutating func endArray() throws(StrictJSON.Violation) {
        isObject.removeLast()
        try attach(.array(arrays.removeLast()))
    }

    /// A complete value: the next element or member of the innermost container, or the document's.
    private mutating func attach(_ value: JSONValue) throws(StrictJSON.Violation) {
        guard let inObject = isObject.last else {
            self.value = value
            return
        }
        if inObject {
            let name = pendingNames.removeLast()
            // Room for three at the first member: the small objects of an answer (an operation's
            // `additionalInformation`) are then made without growing their storage on the way.
            if objects[objects.count - 1].isEmpty { objects[objects.count - 1].reserveCapacity(3) }
            guard objects[objects.count - 1].updateValue(value, forKey: name) == nil else {
                throw .duplicateMemberName(name)
            }
        } else {
            arrays[arrays.count - 1].append(value)
        }
    }
}
