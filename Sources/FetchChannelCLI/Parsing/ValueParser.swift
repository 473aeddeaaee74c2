import DeviceSigning
import Foundation

/// How an option's value is read from the command line: a function of the text and the option's
/// name that returns the value or throws a `UsageError` naming the option and what it expects.
package struct ValueParser<Value: Sendable>: Sendable {
    package let read: @Sendable (_ text: String, _ option: String) throws(UsageError) -> Value

    package init(_ read: @escaping @Sendable (_ text: String, _ option: String) throws(UsageError) -> Value) {
        self.read = read
    }

    /// This parser's value turned into another (which may refuse it with its own message).
    package func map<Other>(
        _ transform: @escaping @Sendable (Value, _ option: String) throws(UsageError) -> Other
    ) -> ValueParser<Other> {
        ValueParser<Other> { text, option throws(UsageError) in try transform(read(text, option), option) }
    }
}

extension ValueParser where Value == String {
    /// The text as typed.
    package static var text: ValueParser<String> { ValueParser { text, _ in text } }

    /// A non-empty text.
    package static var nonEmpty: ValueParser<String> {
        ValueParser { text, option throws(UsageError) in
            guard !text.isEmpty else {
                throw UsageError(.invalidValue, "option '--\(option)' needs a non-empty value")
            }
            return text
        }
    }

    /// One of `choices`, as typed.
    package static func choice(_ choices: [String]) -> ValueParser<String> {
        choice(pairs: choices.map { ($0, $0) })
    }
}

extension ValueParser where Value == Int64 {
    /// An integer within `range`.
    package static func integer(in range: ClosedRange<Int64>) -> ValueParser<Int64> {
        ValueParser { text, option throws(UsageError) in
            guard let number = Int64(text), range.contains(number) else {
                throw UsageError(
                    .invalidValue,
                    "invalid value '\(ArgumentParser.shown(text))' for '--\(option)': expected an integer in "
                        + "\(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
    }
}

extension ValueParser where Value == Double {
    /// A finite decimal within `range`. Accepts `12`, `-0.5`, `1e3`; not the other spellings
    /// `Double(_:)` reads (`0x1p3`, `inf`, `nan`), which a person does not mean as a number of seconds.
    package static func decimal(in range: ClosedRange<Double>) -> ValueParser<Double> {
        ValueParser { text, option throws(UsageError) in
            guard let number = DecimalLiteral.value(of: text), range.contains(number) else {
                throw UsageError(
                    .invalidValue,
                    "invalid value '\(ArgumentParser.shown(text))' for '--\(option)': expected a number from "
                        + "\(DecimalText.format(range.lowerBound)) to \(DecimalText.format(range.upperBound))")
            }
            return number
        }
    }
}

extension ValueParser {
    /// One of `choices` (each spelled as the command line spells it), read as the value it names.
    package static func choice(_ choices: KeyValuePairs<String, Value>) -> ValueParser<Value> {
        choice(pairs: choices.map { ($0.key, $0.value) })
    }

    private static func choice(pairs: [(String, Value)]) -> ValueParser<Value> {
        ValueParser { text, option throws(UsageError) in
            guard let value = pairs.first(where: { $0.0 == text })?.1 else {
                throw UsageError(
                    .invalidValue,
                    "invalid value '\(ArgumentParser.shown(text))' for '--\(option)': expected one of "
                        + pairs.map(\.0).joined(separator: ", "))
            }
            return value
        }
    }
}

extension ValueParser where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of the cases of a string-backed enumeration, spelled as its raw value.
    package static var cases: ValueParser<Value> {
        choice(pairs: Value.allCases.map { ($0.rawValue, $0) })
    }
}

/// A decimal as messages and notes print it: `60`, not `60.0`.
enum DecimalText {
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
