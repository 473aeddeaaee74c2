import FetchChannelVectors
import Foundation

enum TestPaths {
    /// The package root (the directory with Package.swift and Vectors/ above this file).
    static let packageRoot: URL = VectorSuite.packageRoot(from: URL(fileURLWithPath: #filePath))
        ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)

    static var vectors: URL { packageRoot.appendingPathComponent("Vectors", isDirectory: true) }
    static var keys: URL { packageRoot.appendingPathComponent("Keys", isDirectory: true) }

    /// The Wycheproof directory the vector tests use: `$WYCHEPROOF_DIR` only (.ci/run sets it).
    static var wycheproof: URL? {
        WycheproofVectors.directory()
    }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// File permission bits of `url`.
    static func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
