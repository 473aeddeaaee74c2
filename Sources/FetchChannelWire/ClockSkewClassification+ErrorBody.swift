import DeviceSigning

extension ClockSkewClassification {
    /// The two members of a backend error body that matter for clock skew, read leniently.
    ///
    /// Error bodies come from proxies and load balancers as often as from the backend, so anything
    /// that is not a JSON object, is larger than ``maximumBytes``, or has a member of the wrong
    /// type simply lacks that member: classification must never fail because of a body.
    ///
    /// The body is read by the package's strict reader into ``Members``, which keeps only the two
    /// top-level members: the rest of the body (nested as deep as its size allows, names twice in
    /// an object, numbers beyond `Double`, lone surrogate escapes) is checked as JSON syntax only
    /// and decides nothing. The time is judged on its digits: `1.7E12` is an integer,
    /// `1700000000000.0001` is not, and neither is a number beyond 64 bits.
    struct ErrorBody: Equatable {
        /// Larger bodies are not parsed at all: a real error body is tiny.
        static let maximumBytes = 64 * 1_024

        var errorCode: String?
        var serverTimeInEpochMillis: Int64?

        init(errorCode: String? = nil, serverTimeInEpochMillis: Int64? = nil) {
            self.errorCode = errorCode
            self.serverTimeInEpochMillis = serverTimeInEpochMillis
        }

        /// The body's members, or an empty body when it is too large or not a JSON object. A
        /// top-level member named twice is dropped: with `errorCode` twice, which one decides
        /// would be a parser's choice.
        static func parse(_ body: some Collection<UInt8>) -> ErrorBody {
            guard !body.isEmpty, body.count <= maximumBytes else { return ErrorBody() }
            var members = Members()
            let limits = StrictJSON.Limits(maximumDepth: maximumBytes, maximumBytes: maximumBytes)
            guard (try? StrictJSON.read(Array(body), into: &members, limits: limits)) != nil else { return ErrorBody() }
            return members.body
        }
    }

    /// The sink that reads an error body: the top-level object's `errorCode` (a string) and
    /// `serverTimeInEpochMillis` (an integer), each only when it appears once.
    struct Members: StrictJSONSink {
        static var readsValues: Bool { true }
        static var readsIntegralLiteralsAsIntegers: Bool { true }
        static var remembersRepeatedStrings: Bool { false }
        static var replacesLoneSurrogates: Bool { true }

        /// Only the value of one of the two members is read.
        var wantsNextValue: Bool { depth == 1 && pending != nil }

        private enum Member {
            case errorCode, serverTime
        }

        /// Open arrays and objects; the members that count are at depth 1 of an object at depth 0.
        private var depth = 0
        private var rootIsObject = false
        /// The top-level member whose value comes next, when it is one of the two.
        private var pending: Member?
        private var errorCode: (value: String?, count: Int) = (nil, 0)
        private var serverTime: (value: Int64?, count: Int) = (nil, 0)

        var body: ErrorBody {
            guard rootIsObject else { return ErrorBody() }
            return ErrorBody(
                errorCode: errorCode.count == 1 ? errorCode.value : nil,
                serverTimeInEpochMillis: serverTime.count == 1 ? serverTime.value : nil)
        }

        mutating func beginObject() {
            if depth == 0 { rootIsObject = true }
            pending = nil  // an object is no value of either member
            depth += 1
        }

        mutating func beginArray() {
            pending = nil
            depth += 1
        }

        mutating func memberName(_ name: String) throws(StrictJSON.Violation) {
            guard depth == 1, rootIsObject else { return }
            switch name {
            case WireErrorCode.Member.errorCode:
                errorCode.count += 1
                pending = .errorCode
            case WireErrorCode.Member.serverTimeInEpochMillis:
                serverTime.count += 1
                pending = .serverTime
            default:
                pending = nil
            }
        }

        mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation) {
            defer { pending = nil }
            guard depth == 1 else { return }
            switch (pending, value) {
            case (.errorCode, .string(let code)): errorCode.value = code
            case (.serverTime, .integer(let time)): serverTime.value = time
            default: break
            }
        }

        mutating func endObject() throws(StrictJSON.Violation) { depth -= 1 }
        mutating func endArray() throws(StrictJSON.Violation) { depth -= 1 }
    }
}
