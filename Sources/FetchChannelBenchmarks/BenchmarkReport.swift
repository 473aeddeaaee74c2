import Foundation

/// Renders rows as an aligned table (people) or one JSON array (machines).
package enum BenchmarkReport {
    package static func table(_ rows: [BenchmarkRow]) -> String {
        var lines = [
            pad("name", 24) + pad("value", 16) + pad("baseline", 14) + pad("ratio", 8) + pad("target", 12) + "met  unit"
        ]
        for row in rows {
            lines.append(
                pad(row.name, 24) + pad(format(row.value), 16) + pad(row.baseline.map(format) ?? "-", 14)
                    + pad(row.ratio.map { String(format: "%.3f", $0) } ?? "-", 8) + pad(row.target, 12)
                    + (row.met ? "yes  " : "NO   ") + row.unit)
        }
        return lines.joined(separator: "\n")
    }

    package static func json(_ rows: [BenchmarkRow]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]  // as every --json of the CLI
        return String(decoding: try encoder.encode(rows), as: UTF8.self)
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3f", value)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
