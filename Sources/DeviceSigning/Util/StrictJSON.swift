import Foundation

/// The package's one reader of JSON text, strict where Foundation's decoders are lenient
/// (docs/ARCHITECTURE.md, "Invariants"): every JSON text the package verifies, stores or receives
/// passes through it.
///
/// What it accepts is RFC 8259 JSON text in UTF-8 and nothing more: no BOM, comments, trailing
/// commas, single quotes, leading zeros, `+`, `NaN` or trailing bytes; no unescaped control
/// character; well-formed UTF-8 only. Beyond the syntax, no object may have two members of the
/// same name (RFC 8259 §4 leaves duplicates to the parser; RFC 7515 §5.2 and §10.12 require a JWS
/// header with them to be rejected): `JSONSerialization` keeps the last of two duplicates and
/// `JSONDecoder` the first, so `{"alg":"none","alg":"ES256"}` would mean one thing to one decoder
/// and another to the next. Names are compared after unescaping (`"\u0061lg"` is `"alg"`) and as
/// Swift strings, that is up to canonical equivalence, which is how Swift dictionaries key them:
/// two names a decoder could take for one another are always refused, at every depth.
///
/// The duplicate-name rule is kept by the sinks (``UniqueMemberNames``, ``JSONValueBuilder``, the
/// operations answer's reader); a sink that reads a text leniently for a few members (a
/// backend's error body) skips the values it does not want and may let the rest repeat names.
///
/// Two uses, one reader (``StrictJSONReader``), iterative (no recursion):
/// - ``requireUniqueMemberNames(_:)`` checks a text that Foundation decodes next (the
///   Device-Signature payload, key store metadata). Values are read in place and never copied;
///   only member names are materialised. A lone surrogate escape counts as U+FFFD here (Foundation,
///   which reads the text next, refuses it), numbers are checked for syntax only, and nesting is
///   bounded by the text's length only.
/// - ``parse(_:limits:)`` builds the ``JSONValue`` (JWS and JWE protected headers and JWKs, through
///   `JOSEJSON`); ``read(_:into:limits:)`` tells a sink of the caller's instead, as the operations
///   answer's reader does. Both refuse a lone surrogate escape; nesting stops at
///   ``Limits/maximumDepth``, the text at ``Limits/maximumBytes``; a number without fraction or
///   exponent that fits in 64 bits is `.integer` (exact), every other number `.number` and must be
///   finite as a `Double`.
package enum StrictJSON {
    /// Why a text was refused.
    package enum Violation: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not RFC 8259 JSON text in UTF-8; `offset` is the first byte where it stops being JSON.
        case notJSON(offset: Int)
        /// An object has two members with this (unescaped) name.
        case duplicateMemberName(String)
        /// Arrays and objects nested deeper than the limit (``parse(_:limits:)`` only).
        case tooDeep(offset: Int, limit: Int)
        /// A number that is not finite as a `Double` (``parse(_:limits:)`` only).
        case numberOutOfRange(offset: Int)
        /// More bytes than the limit (``parse(_:limits:)`` only).
        case tooLarge(bytes: Int, limit: Int)

        /// For error messages: a name shortened and with control characters replaced.
        package var description: String {
            switch self {
            case .notJSON(let offset):
                return "not JSON text (byte \(offset))"
            case .duplicateMemberName(let name):
                let printable = String(
                    String.UnicodeScalarView(
                        name.unicodeScalars.prefix(64).map {
                            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0
                        }))
                return "the member \"\(printable)\" appears more than once in one object"
            case .tooDeep(let offset, let limit):
                return "nested deeper than \(limit) arrays and objects (byte \(offset))"
            case .numberOutOfRange(let offset):
                return "a number too large for a 64-bit floating point value (byte \(offset))"
            case .tooLarge(let bytes, let limit):
                return "\(bytes) bytes, more than \(limit)"
            }
        }
    }

    /// What ``parse(_:limits:)`` accepts at most.
    package struct Limits: Sendable, Hashable {
        /// The deepest nesting of arrays and objects (Foundation's `JSONDecoder` stops at 512 too).
        package var maximumDepth: Int
        package var maximumBytes: Int

        package init(maximumDepth: Int = 512, maximumBytes: Int = 1 << 20) {
            self.maximumDepth = maximumDepth
            self.maximumBytes = maximumBytes
        }

        /// 512 levels, 1 MiB.
        package static let standard = Limits()
    }

    /// Throws the first violation in `json`: a syntax error, or an object with a duplicate member name.
    package static func requireUniqueMemberNames<Bytes: ContiguousBytes>(_ json: Bytes) throws(Violation) {
        let outcome = json.withUnsafeBytes { bytes -> Violation? in
            var reader = StrictJSONReader(
                bytes: bytes, sink: UniqueMemberNames(), maximumDepth: .max, loneSurrogates: .replaced)
            do throws(Violation) {
                try reader.read()
                return nil
            } catch {
                return error
            }
        }
        if let outcome { throw outcome }
    }

    /// The one value that `json` holds.
    package static func parse<Bytes: ContiguousBytes>(_ json: Bytes, limits: Limits = .standard)
        throws(Violation) -> JSONValue
    {
        var builder = JSONValueBuilder()
        try read(json, into: &builder, limits: limits)
        guard let value = builder.value else { throw .notJSON(offset: 0) }
        return value
    }

    /// ``parse(_:limits:)``, but a number written with a fraction or an exponent whose value is
    /// exactly a 64-bit integer (`1.0`, `1e3`) is that `.integer` (``ExactIntegerLiteral``): for
    /// a member that must be an integer and may be written so, judged on its digits.
    package static func parseIntegralLiteralsAsIntegers<Bytes: ContiguousBytes>(
        _ json: Bytes, limits: Limits = .standard
    ) throws(Violation) -> JSONValue {
        var builder = IntegralLiteralsBuilder()
        try read(json, into: &builder, limits: limits)
        guard let value = builder.values.value else { throw .notJSON(offset: 0) }
        return value
    }

    /// A ``JSONValueBuilder`` that reads integral literals as integers.
    private struct IntegralLiteralsBuilder: StrictJSONSink {
        static var readsValues: Bool { true }
        static var readsIntegralLiteralsAsIntegers: Bool { true }
        var values = JSONValueBuilder()

        mutating func beginObject() { values.beginObject() }
        mutating func beginArray() { values.beginArray() }
        mutating func memberName(_ name: String) throws(Violation) { values.memberName(name) }
        mutating func scalar(_ value: JSONValue) throws(Violation) { try values.scalar(value) }
        mutating func endObject() throws(Violation) { try values.endObject() }
        mutating func endArray() throws(Violation) { try values.endArray() }
    }

    /// Reads `json` as ``parse(_:limits:)`` does, telling `sink` what it reads instead of building
    /// the value: for a reader of one document shape that keeps only what it needs.
    package static func read<Bytes: ContiguousBytes, Sink: StrictJSONSink>(
        _ json: Bytes, into sink: inout Sink, limits: Limits = .standard
    ) throws(Violation) {
        let outcome = json.withUnsafeBytes { bytes -> Result<Sink, Violation> in
            var copy = sink
            do throws(Violation) {
                try read(bytes: bytes, into: &copy, limits: limits)
                return .success(copy)
            } catch {
                return .failure(error)
            }
        }
        sink = try outcome.get()
    }

    /// ``read(_:into:limits:)`` over bytes already in memory.
    package static func read<Sink: StrictJSONSink>(
        bytes: UnsafeRawBufferPointer, into sink: inout Sink, limits: Limits = .standard
    ) throws(Violation) {
        guard bytes.count <= limits.maximumBytes else {
            throw .tooLarge(bytes: bytes.count, limit: limits.maximumBytes)
        }
        var reader = StrictJSONReader(
            bytes: bytes, sink: sink, maximumDepth: limits.maximumDepth,
            loneSurrogates: Sink.replacesLoneSurrogates ? .replaced : .refused)
        try reader.read()
        reader.swapSink(with: &sink)
    }
}
