import FetchChannelVectors
import Foundation

/// Where the package's own files are, for tests that read Vectors/ and Keys/: the nearest
/// directory above this file that holds Package.swift. Nothing outside the package is read.
public enum PackageLocations {
    public static let root: URL =
        VectorSuite.packageRoot(from: URL(fileURLWithPath: #filePath))
        ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)

    public static var vectors: URL { root.appendingPathComponent("Vectors", isDirectory: true) }
    public static var keys: URL { root.appendingPathComponent("Keys", isDirectory: true) }
}
