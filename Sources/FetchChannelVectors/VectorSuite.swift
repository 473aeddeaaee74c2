import DeviceSigning
import Foundation

/// Every vector file of `Vectors/` and the code that checks it: one place that both the test
/// suite and `fetchchannel vectors verify` run.
///
/// A file in the directory without a checker is reported as failed ("no checker"), so a vector
/// file cannot be added without the code that checks it. `README.md` (the documentation of the
/// files) and hidden files are not vector files.
public enum VectorSuite: Sendable {
    /// A vector file this package knows how to check.
    public struct Checker: Sendable {
        public let fileName: String
        /// One line: what the file pins down.
        public let summary: String
        public let check: @Sendable (Data) -> VectorFileReport

        init<C: VectorFileChecker>(_ checker: C.Type) {
            fileName = C.fileName
            summary = C.summary
            check = { C.check($0) }
        }
    }

    public static let checkers: [Checker] = [
        Checker(ClockSkewVectors.self),
        Checker(ErrorMappingVectors.self),
        Checker(DeviceSignatureVectors.self),
        Checker(JWSVectors.self),
        Checker(JWEVectors.self),
        Checker(PendingOperationsVectors.self),
        Checker(RFC6979Vectors.self),
    ]

    /// Files in the vector directory that are not vectors.
    public static let documentationFiles: Set<String> = ["README.md"]

    /// The largest vector file read (the largest, a Wycheproof suite, is about 330 KB): a bigger
    /// one is refused before it is loaded into memory.
    public static let maximumFileBytes = 16 << 20

    /// The checker for a file name, if there is one.
    public static func checker(for fileName: String) -> Checker? {
        checkers.first { $0.fileName == fileName }
    }

    /// Checks `data` as the file `fileName`; a name without a checker fails with "no checker".
    public static func check(fileName: String, data: Data) -> VectorFileReport {
        guard let checker = checker(for: fileName) else {
            return .unusable(
                fileName,
                "no checker: \(fileName) is not a vector file this package knows; add a checker to FetchChannelVectors or remove the file"
            )
        }
        return checker.check(data)
    }

    /// Checks every file in `directory`, sorted by name, and every checker's file: one that is
    /// missing is reported as failed (a directory with a file deleted, or the wrong directory,
    /// must not pass). Throws when the directory cannot be listed. Subdirectories are reported as
    /// failed like any unknown entry. A vector file must be a regular file (``VectorFileRead``): a
    /// FIFO in its place fails unread instead of blocking the run.
    public static func verify(directory: URL) throws -> [VectorFileReport] {
        let present = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") && !documentationFiles.contains($0) }
        let names = Set(present).union(checkers.map(\.fileName)).sorted()
        return names.map { name in
            guard present.contains(name) else {
                return .unusable(name, "missing: \(directory.appendingPathComponent(name).path) does not exist")
            }
            let url = directory.appendingPathComponent(name)
            guard checker(for: name) != nil else { return check(fileName: name, data: Data()) }
            switch VectorFileRead.contents(of: url.path, maximumBytes: maximumFileBytes) {
            case .success(let data): return check(fileName: name, data: data)
            case .failure(let failure): return .unusable(name, "\(url.path) cannot be read (\(failure))")
            }
        }
    }

    /// The package root: the nearest directory at or above `start` that holds Package.swift and
    /// Vectors/ (for tests, which start from `#filePath`).
    public static func packageRoot(from start: URL) -> URL? {
        var directory = start.standardizedFileURL
        let fileManager = FileManager.default
        while true {
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
                fileManager.fileExists(
                    atPath: directory.appendingPathComponent("Vectors").path, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                return directory
            }
            if directory.path == "/" { return nil }
            directory.deleteLastPathComponent()
        }
    }
}
