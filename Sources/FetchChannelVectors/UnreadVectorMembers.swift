import Foundation

/// A value of a vector file that reads its own JSON shape (a string or an object, say) and refuses
/// what it does not read itself: ``UnreadVectorMembers`` does not look inside it.
protocol VectorValueReadWhole {}

/// The members of a vector file that no checker reads.
///
/// A member that nothing reads (a misspelled `measuredOffsetMilis`, an `expectedErorr`) leaves its
/// case checking less than it says, or nothing at all; `JSONDecoder` skips such members without a
/// word. The file's JSON is walked beside the value it decoded to: every member of an object must
/// be a stored property of the struct it became, whose properties are named as the members they
/// read. Arrays are walked element by element and maps (`keys` by name) entry by entry; an enum
/// or a ``VectorValueReadWhole`` value is not looked inside, nor a map whose values are not
/// structs (`[String: String]` headers: any name is a header).
///
/// Prose for the people who read the file (``explanatory`` names, as strings) may go unread in
/// the file's own object and in the objects one member down (a key, a case, a row, an entry of a
/// map of keys); deeper, in what a case feeds the code or expects of it, it is refused like any
/// other member: a row's `expected.reason` checks nothing.
enum UnreadVectorMembers {
    /// Members that only explain, for the people who read the file: no checker needs to read them.
    static let explanatory: Set<String> = ["description", "comment", "note", "source", "schema", "reason", "testOnly"]

    /// The path of the first member of `json` that `value` has no property for (`rows[3].input.x`),
    /// or nil when every member is read. `depth` counts the members (not the array positions or
    /// map entries) from the file's object to `json`.
    static func first(in json: Any, readAs value: Any, at path: String = "", depth: Int = 0) -> String? {
        let value = unwrapped(value)
        if value is any VectorValueReadWhole { return nil }
        let mirror = Mirror(reflecting: value)
        if let object = json as? [String: Any] {
            switch mirror.displayStyle {
            case .struct, .class:
                var properties: [String: Any] = [:]
                for child in mirror.children {
                    if let label = child.label { properties[label] = child.value }
                }
                for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                    let memberPath = path.isEmpty ? name : path + "." + name
                    guard let property = properties[name] else {
                        if depth <= 1, explanatory.contains(name), member is String { continue }
                        return memberPath
                    }
                    if let found = first(in: member, readAs: property, at: memberPath, depth: depth + 1) {
                        return found
                    }
                }
            case .dictionary:
                let entries = entriesByName(mirror)
                for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                    guard let entry = entries[name] else { continue }
                    let entryPath = path + "." + name
                    if let found = first(in: member, readAs: entry, at: entryPath, depth: depth) { return found }
                }
            default:
                break
            }
        } else if let array = json as? [Any], mirror.displayStyle == .collection {
            for (index, (element, child)) in zip(array, mirror.children).enumerated() {
                if let found = first(in: element, readAs: child.value, at: "\(path)[\(index)]", depth: depth) {
                    return found
                }
            }
        }
        return nil
    }

    /// A decoded map's values by their keys' text (each child of a dictionary's mirror is a
    /// key-value pair).
    private static func entriesByName(_ mirror: Mirror) -> [String: Any] {
        var entries: [String: Any] = [:]
        for pair in mirror.children {
            let parts = Array(Mirror(reflecting: pair.value).children)
            guard parts.count == 2, let key = parts[0].value as? String else { continue }
            entries[key] = parts[1].value
        }
        return entries
    }

    /// The value inside any number of optionals; the value itself when it is not one.
    private static func unwrapped(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first else { return value }
        return unwrapped(wrapped.value)
    }
}
