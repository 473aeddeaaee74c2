import Foundation

/// The checker of one vector file of `Vectors/`: the file's name, what it pins down, its shape, and
/// the checks. Loading is shared: ``check(_:)-swift.type.method`` decodes the file (a file that
/// cannot be decoded fails with the reason and the JSON path) and hands it to the checks.
public protocol VectorFileChecker: Sendable {
    /// The file's shape.
    associatedtype File: Decodable
    /// The file's name in `Vectors/`.
    static var fileName: String { get }
    /// One line: what the file pins down.
    static var summary: String { get }
    /// Records in `report` every case run and every disagreement of `file` with the code.
    static func check(_ file: File, into report: inout VectorFileReport)
}

extension VectorFileChecker {
    /// Decodes `data` as the file and checks it.
    public static func check(_ data: Data) -> VectorFileReport {
        var report = VectorFileReport(file: fileName)
        if let file = report.decode(File.self, from: data) { check(file, into: &report) }
        return report
    }

    /// Decodes `data` as the file, for tests that look at its cases; throws why it cannot be
    /// decoded (the JSON path where decoding stopped), as ``check(_:)-swift.type.method`` reports it.
    public static func decode(_ data: Data) throws -> File {
        try VectorDecoding.decode(File.self, from: data).get()
    }
}

/// One row of a decision table (clock skew, error mapping): an id that every failure names, why
/// the row is there, what goes in and what must come out.
public struct VectorTableRow<Input: Decodable & Sendable, Expected: Decodable & Sendable>: Decodable, Sendable {
    public var id: String
    public var comment: String
    public var input: Input
    public var expected: Expected

    private enum CodingKeys: String, CodingKey {
        case id, comment, input, expected
    }

    public init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: CodingKeys.self)
        id = try row.decode(String.self, forKey: .id)
        comment = try row.decode(String.self, forKey: .comment)
        input = try row.decode(Input.self, forKey: .input)
        expected = try row.decode(Expected.self, forKey: .expected)
        // A member that nothing reads (a misspelled `measuredOffsetMilis`) would leave the row
        // checking less than it says, or nothing at all: refused.
        try Self.refuseUnknownMembers(of: input, in: row, at: .input)
        try Self.refuseUnknownMembers(of: expected, in: row, at: .expected)
    }

    /// Throws for a member of the object at `key` that is not a stored property of `value` (the
    /// decoded struct: its properties are named as its members).
    private static func refuseUnknownMembers(
        of value: Any, in row: KeyedDecodingContainer<CodingKeys>, at key: CodingKeys
    ) throws {
        let known = Set(Mirror(reflecting: value).children.compactMap(\.label))
        let members = try row.nestedContainer(keyedBy: MemberName.self, forKey: key)
        if let unknown = members.allKeys.first(where: { !known.contains($0.stringValue) }) {
            let context = DecodingError.Context(
                codingPath: members.codingPath + [unknown], debugDescription: "a member no checker reads")
            throw DecodingError.dataCorrupted(context)
        }
    }

    private struct MemberName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
