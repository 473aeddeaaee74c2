import Foundation

/// A number member of a control API body as `JSONSerialization` reads it: absent (or `null`), a
/// number, or something else.
///
/// JSON `true` and `false` come out of `JSONSerialization` as `NSNumber`s of 1 and 0, so
/// `as? NSNumber` alone took `"count": true` for a count of 1. They are "something else" here.
enum ControlNumber {
    case absent
    case number(Double)
    case notANumber

    init(_ value: Any?) {
        guard let value, !(value is NSNull) else {
            self = .absent
            return
        }
        guard let number = value as? NSNumber, ObjectIdentifier(type(of: number)) != Self.booleanType else {
            self = .notANumber
            return
        }
        self = .number(number.doubleValue)
    }

    /// The class of the `NSNumber`s that stand for booleans (`__NSCFBoolean`); `JSONSerialization`
    /// makes its `true` and `false` of it, and no other number.
    private static let booleanType = ObjectIdentifier(type(of: NSNumber(value: true)))

    var isAbsent: Bool {
        if case .absent = self { true } else { false }
    }

    /// The number, or nil (absent, or not a number).
    var value: Double? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The value when it is a whole number in `range`, else nil (absent included).
    func wholeNumber(in range: ClosedRange<Int>) -> Int? {
        guard case .number(let value) = self, value == value.rounded(),
            value >= Double(range.lowerBound), value <= Double(range.upperBound)
        else { return nil }
        return Int(value)
    }
}
