/// What ``StrictJSONReader`` tells as it reads: containers opening and closing, member names, and
/// (for a sink that ``readsValues``) every scalar value. A sink throws to refuse the text.
///
/// `package` so that the reader of one document shape (FetchChannel's operations answer) takes
/// what it needs while the text is read, with ``JSONValueBuilder`` for the parts it keeps whole.
package protocol StrictJSONSink {
    /// Whether the reader materialises values for ``scalar(_:)``; when false, strings that are
    /// values are checked in place and never copied, and ``scalar(_:)`` is not called.
    static var readsValues: Bool { get }

    mutating func beginObject()
    mutating func beginArray()
    /// The name of the next member of the innermost object.
    mutating func memberName(_ name: String) throws(StrictJSON.Violation)
    /// A string, number, boolean or null (only when ``readsValues``).
    mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation)
    mutating func endObject() throws(StrictJSON.Violation)
    mutating func endArray() throws(StrictJSON.Violation)

    /// Whether the reader hands over member names that are ASCII without escapes as their bytes
    /// (``memberName(ascii:)``), so that a sink that knows its names recognises them without
    /// making a string of each. Other names still come as strings.
    static var readsASCIIMemberNames: Bool { get }
    /// The name of the next member of the innermost object: ASCII, no escapes, in the text.
    mutating func memberName(ascii name: UnsafeRawBufferPointer) throws(StrictJSON.Violation)

    /// Whether the reader keeps the last few long strings to hand out again when the text repeats
    /// them (``RepeatedStrings``); a sink whose long strings are unique saves the bookkeeping.
    static var remembersRepeatedStrings: Bool { get }

    /// Whether the reader materialises the next scalar value for ``scalar(_:)`` (only asked of a
    /// sink that ``readsValues``): a sink that keeps a few members of a document it otherwise
    /// ignores says no for the rest, whose strings are then checked in place and whose numbers for
    /// syntax only (a number beyond `Double` then refuses nothing).
    var wantsNextValue: Bool { get }

    /// Whether a lone surrogate escape (`"\ud800"`) reads as U+FFFD instead of refusing the text:
    /// for a sink that reads what others wrote leniently, as Foundation's decoders do.
    static var replacesLoneSurrogates: Bool { get }

    /// Whether a number written with a fraction or an exponent whose value is exactly an integer
    /// in 64 bits (`1.0`, `1e3`, `12.50e1`) is read as that `.integer`, decided on its digits
    /// (``ExactIntegerLiteral``), not on a rounded `Double`; other such numbers stay `.number`.
    static var readsIntegralLiteralsAsIntegers: Bool { get }

    /// Whether some string values are secrets (a JWK's `d`) that the sink takes as their raw
    /// bytes in the text (``secretString(raw:isEscaped:)``) rather than as a `String`, which could
    /// never be zeroed. Only such a sink is asked ``nextStringIsSecret``.
    static var readsSecretStrings: Bool { get }
    /// Whether the string value about to be read is a secret.
    var nextStringIsSecret: Bool { get }
    /// A secret string value: its bytes between the quotes, checked as every JSON string is but
    /// not unescaped (`isEscaped` says whether there are escapes). Valid only during the call.
    mutating func secretString(raw: UnsafeRawBufferPointer, isEscaped: Bool) throws(StrictJSON.Violation)
}

extension StrictJSONSink {
    package static var readsASCIIMemberNames: Bool { false }
    package static var remembersRepeatedStrings: Bool { true }
    package static var readsIntegralLiteralsAsIntegers: Bool { false }
    package static var readsSecretStrings: Bool { false }
    package var wantsNextValue: Bool { true }
    package static var replacesLoneSurrogates: Bool { false }
    package var nextStringIsSecret: Bool { false }
    package mutating func secretString(raw: UnsafeRawBufferPointer, isEscaped: Bool) throws(StrictJSON.Violation) {}

    package mutating func memberName(ascii name: UnsafeRawBufferPointer) throws(StrictJSON.Violation) {
        try memberName(String(decoding: name, as: UTF8.self))
    }
}

/// The sink of ``StrictJSON/requireUniqueMemberNames(_:)``: the names seen in each open object,
/// innermost last; nothing else is kept.
package struct UniqueMemberNames: StrictJSONSink {
    package static let readsValues = false

    private var names: [Set<String>] = []

    package init() {}

    package mutating func beginObject() {
        names.append([])
    }

    package mutating func beginArray() {}

    package mutating func memberName(_ name: String) throws(StrictJSON.Violation) {
        guard names[names.count - 1].insert(name).inserted else { throw .duplicateMemberName(name) }
    }

    package mutating func scalar(_ value: JSONValue) {}

    package mutating func endObject() {
        names.removeLast()
    }

    package mutating func endArray() {}
}
