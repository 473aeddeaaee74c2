import FetchChannelVectors
import Foundation

enum FetchTestSupport {
    /// The package root: the nearest directory above this file that holds Package.swift.
    static let packageRoot: URL = VectorSuite.packageRoot(from: URL(fileURLWithPath: #filePath))
        ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
}
