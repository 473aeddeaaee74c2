import Foundation

/// The outcome of checking one vector file: how many cases ran and every disagreement, each
/// naming its case (`id`, `name` or `tcId`) so a failure can be found in the file.
public struct VectorFileReport: Sendable, Hashable {
    /// The file's name, e.g. `jws-es256.json` (Wycheproof suites: `wycheproof/<name>`).
    public let file: String
    /// The number of vector cases (rows, tests) that were run.
    public internal(set) var casesChecked: Int
    /// Every disagreement, in file order; empty when the file passed.
    public internal(set) var failures: [String]

    public init(file: String, casesChecked: Int = 0, failures: [String] = []) {
        self.file = file
        self.casesChecked = casesChecked
        self.failures = failures
    }

    /// True when no check failed.
    public var passed: Bool { failures.isEmpty }

    /// Records `message` as a failure unless `condition` holds.
    mutating func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { failures.append(message()) }
    }

    mutating func fail(_ message: String) {
        failures.append(message)
    }

    /// The first step of every checker: decodes the file, or records why it cannot be checked
    /// (`describedAs` names it in that message, the report's file name by default) and gives nil.
    mutating func decode<File: Decodable>(_ type: File.Type, from data: Data, describedAs name: String? = nil) -> File?
    {
        record(VectorDecoding.decode(type, from: data), describedAs: name)
    }

    /// ``decode(_:from:describedAs:)`` for one of the package's own vector files, which may hold no
    /// member that no checker reads (``VectorDecoding/decodeVectorFile(_:from:)``).
    mutating func decodeVectorFile<File: Decodable>(_ type: File.Type, from data: Data) -> File? {
        record(VectorDecoding.decodeVectorFile(type, from: data), describedAs: nil)
    }

    private mutating func record<File>(_ decoded: Result<File, VectorDecodingError>, describedAs name: String?) -> File?
    {
        switch decoded {
        case .success(let file):
            return file
        case .failure(let error):
            fail("\(name ?? file) cannot be read: \(error.reason)")
            return nil
        }
    }

    /// Requires at least `minimum` cases (`noun` names them in the failure), then runs `check` on
    /// each, counting it.
    mutating func checkEach<Case>(
        _ cases: [Case], atLeast minimum: Int, _ noun: String, _ check: (Case, inout VectorFileReport) -> Void
    ) {
        expect(atLeast: minimum, noun, in: cases.count)
        for item in cases {
            casesChecked += 1
            check(item, &self)
        }
    }

    /// Records a failure unless the file has at least `minimum` of what it counts.
    mutating func expect(atLeast minimum: Int, _ noun: String, in count: Int, of container: String = "file") {
        expect(count >= minimum, "the \(container) has \(count) \(noun); at least \(minimum) are required")
    }

    /// A report for a file that could not be checked at all (unreadable, undecodable, no checker).
    static func unusable(_ file: String, _ reason: String) -> VectorFileReport {
        VectorFileReport(file: file, casesChecked: 0, failures: [reason])
    }
}
