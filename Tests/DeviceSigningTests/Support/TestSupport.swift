import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Locations and decoders shared by the tests.
enum TestSupport {
    static func vectorFile(_ name: String) throws -> Data {
        try Data(contentsOf: PackageLocations.vectors.appendingPathComponent(name))
    }

    static func keyFile(_ name: String) throws -> String {
        try String(contentsOf: PackageLocations.keys.appendingPathComponent(name), encoding: .utf8)
    }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The Wycheproof folder: `$WYCHEPROOF_DIR` only (.ci/run sets it), nil when it is not set.
    static var wycheproofDirectory: URL? {
        WycheproofVectors.directory()
    }

    /// Loads a Wycheproof file, or returns nil after saying loudly that it was skipped.
    /// Under `CI=true` a missing file is a test failure, not a skip.
    static func wycheproofFile(_ name: String) throws -> Data? {
        guard let url = wycheproofDirectory?.appendingPathComponent(name),
            FileManager.default.fileExists(atPath: url.path)
        else {
            if isCI {
                Issue.record(
                    "Wycheproof file \(name) is missing and CI=true: set WYCHEPROOF_DIR to the suites' directory.")
            } else {
                print("⚠️  SKIPPED: Wycheproof file \(name) not found (set WYCHEPROOF_DIR). These cases did NOT run.")
            }
            return nil
        }
        return try Data(contentsOf: url)
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = nibble(high), let l = nibble(low) else { return [] }
            bytes.append(h << 4 | l)
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func hexString<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func base64url(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
