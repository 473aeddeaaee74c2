import Foundation

/// Typed values of options, each refused with a `UsageError` that names the option and says
/// what is expected.
extension ParsedArguments {
    /// An integer option within `range`, or nil when absent.
    package func integer(_ name: String, in range: ClosedRange<Int64>) throws(UsageError) -> Int64? {
        guard let text = value(name) else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw UsageError(
                "invalid value '\(ArgumentParser.shown(text))' for '--\(name)': expected an integer in \(range.lowerBound)...\(range.upperBound)"
            )
        }
        return number
    }

    /// A finite decimal option within `range`, or nil when absent. Accepts `12`, `-0.5`, `1e3`.
    package func decimal(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError(
                "invalid value '\(ArgumentParser.shown(text))' for '--\(name)': expected a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
            )
        }
        return number
    }

    /// One of `choices`, or nil when absent.
    package func choice(_ name: String, from choices: [String]) throws(UsageError) -> String? {
        guard let text = value(name) else { return nil }
        guard choices.contains(text) else {
            throw UsageError(
                "invalid value '\(ArgumentParser.shown(text))' for '--\(name)': expected one of \(choices.joined(separator: ", "))"
            )
        }
        return text
    }

    /// The value of `--name` read as one of `choices` (each spelled as the command line spells it),
    /// or nil when absent.
    package func choice<Value>(_ name: String, from choices: KeyValuePairs<String, Value>) throws(UsageError) -> Value?
    {
        guard let text = try choice(name, from: choices.map(\.key)) else { return nil }
        return choices.first { $0.key == text }?.value
    }

    /// A non-empty string, or nil when absent.
    package func nonEmpty(_ name: String) throws(UsageError) -> String? {
        guard let text = value(name) else { return nil }
        guard !text.isEmpty else { throw UsageError("option '--\(name)' needs a non-empty value") }
        return text
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
