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
    /// Decodes `data` as the file (a member no checker reads is refused) and checks it.
    public static func check(_ data: Data) -> VectorFileReport {
        var report = VectorFileReport(file: fileName)
        if let file = report.decodeVectorFile(File.self, from: data) { check(file, into: &report) }
        return report
    }

    /// Decodes `data` as the file, for tests that look at its cases; throws why it cannot be
    /// decoded (the JSON path where decoding stopped), as ``check(_:)-swift.type.method`` reports it.
    public static func decode(_ data: Data) throws -> File {
        try VectorDecoding.decodeVectorFile(File.self, from: data).get()
    }
}

/// One row of a decision table (clock skew, error mapping): an id that every failure names, why
/// the row is there, what goes in and what must come out.
public struct VectorTableRow<Input: Decodable & Sendable, Expected: Decodable & Sendable>: Decodable, Sendable {
    public var id: String
    public var comment: String
    public var input: Input
    public var expected: Expected

}
