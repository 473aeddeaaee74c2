import FetchChannelVectors
import Foundation

enum TestPaths {

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
