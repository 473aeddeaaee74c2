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
/// read, or an ``explanatory`` string. Arrays are walked element by element; dictionaries (`[String: String]` headers) take any
/// name; an enum or a ``VectorValueReadWhole`` value is not looked inside.
enum UnreadVectorMembers {
    /// Members that only explain, for the people who read the file: no checker needs to read them.
    static let explanatory: Set<String> = ["description", "comment", "note", "source", "schema", "reason", "testOnly"]

    /// The path of the first member of `json` that `value` has no property for (`rows[3].input.x`),
    /// or nil when every member is read.
    static func first(in json: Any, readAs value: Any, at path: String = "") -> String? {
        let value = unwrapped(value)
        if value is any VectorValueReadWhole { return nil }
        let mirror = Mirror(reflecting: value)
        if let object = json as? [String: Any] {
            guard mirror.displayStyle == .struct || mirror.displayStyle == .class else { return nil }
            var properties: [String: Any] = [:]
            for child in mirror.children {
                if let label = child.label { properties[label] = child.value }
            }
            for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                let memberPath = path.isEmpty ? name : path + "." + name
                guard let property = properties[name] else {
                    if explanatory.contains(name), member is String { continue }
                    return memberPath
                }
                if let found = first(in: member, readAs: property, at: memberPath) { return found }
            }
        } else if let array = json as? [Any], mirror.displayStyle == .collection {
            for (index, (element, child)) in zip(array, mirror.children).enumerated() {
                if let found = first(in: element, readAs: child.value, at: "\(path)[\(index)]") { return found }
            }
        }
        return nil
    }

    /// The value inside any number of optionals; the value itself when it is not one.
    private static func unwrapped(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first else { return value }
        return unwrapped(wrapped.value)
    }
}
