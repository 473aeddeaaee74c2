/// One line of the benchmark report. The JSON field names and row names are a contract that
/// checks outside the test suite read: keep them stable. Rows are made only by the benchmarks in
/// this module (with the memberwise initialiser); the CLI reads them.
package struct BenchmarkRow: Sendable, Codable, Equatable {
    package let name: String
    package let value: Double
    package let unit: String
    /// The same quantity measured for the baseline in the same process (nil when none applies).
    package let baseline: Double?
    /// value / baseline (nil without a baseline).
    package let ratio: Double?
    /// A human-readable goal, e.g. ">= 0.95".
    package let target: String
    package let met: Bool

    /// Every member is always present: a row without a baseline has `"baseline": null` and
    /// `"ratio": null`, so each row of `--json` has exactly the same seven keys.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(value, forKey: .value)
        try container.encode(unit, forKey: .unit)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(target, forKey: .target)
        try container.encode(met, forKey: .met)
    }
}
