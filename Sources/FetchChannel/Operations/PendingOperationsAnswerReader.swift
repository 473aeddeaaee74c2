import DeviceSigning
import Foundation

/// Takes the operations out of an answer `{"operations":[Op…]}` while the package's JSON reader
/// reads it (a `StrictJSONSink` of `StrictJSON.read`): each required member present and of its
/// type, or the whole answer is invalid, with the offending member's path in the reason.
/// `payload.data` and `additionalInformation` are kept as sent (``JSONValue``); `null` there is
/// absent; unknown members are ignored (``PendingOperationsDecoder`` states the rules).
///
/// Why not a value tree first: building a dictionary per object, and looking each member up in it
/// again, was most of the cost of decoding an answer. Here the known objects (the answer, each
/// operation, its payload and redeem data) are never built: their members go straight into the
/// operation. Everything else is still read strictly: duplicate names are refused in every object
/// (known ones by name, the rest as the reader's `UniqueMemberNames` does), and what is checked
/// and in which order is what a check of the finished tree would do: the first problem is kept
/// until the end, since text that is not JSON anywhere is reported before it.
struct PendingOperationsAnswerReader: StrictJSONSink {
    typealias InvalidResponse = PendingOperationsDecoder.InvalidResponse

    static var readsValues: Bool { true }

    let server: String
    /// The operations, in the order sent; meaningful only without a ``problem``.
    private(set) var operations: [PendingOutOfBandOperation] = []
    /// The first reason the answer is not usable.
    private(set) var problem: InvalidResponse?

    /// The known objects and the operations array that are open, innermost last.
    private var frames: [Frame] = []
    /// The root's `operations` member, as far as its type goes (a placeholder for a container).
    private var operationsMember: JSONValue?
    /// The position of the operations array's current element.
    private var index = -1
    /// The members of the operation being read.
    private var fields = OperationFields()
    /// A value read whole (`data`, `additionalInformation`) or only checked (anything else that is
    /// not a known object), and how deep the reader is inside it.
    private var keeping = false
    /// Builds a kept value; one for the whole answer, so that its stacks are allocated once.
    private var kept = JSONValueBuilder()
    private var ignored: UniqueMemberNames?
    private var subtreeDepth = 0

    init(server: String) {
        self.server = server
    }

    // MARK: Events

    mutating func beginObject() {
        if enterSubtree() {
            if keeping { kept.beginObject() }
            ignored?.beginObject()
        } else {
            start(object: true)
        }
    }

    mutating func beginArray() {
        if enterSubtree() {
            if keeping { kept.beginArray() }
            ignored?.beginArray()
        } else {
            start(object: false)
        }
    }

    static var readsASCIIMemberNames: Bool { true }

    /// A name without escapes: a known one is recognised by its bytes, no string is made of it.
    mutating func memberName(ascii name: UnsafeRawBufferPointer) throws(StrictJSON.Violation) {
        guard subtreeDepth == 0 else { return try memberName(String(decoding: name, as: UTF8.self)) }
        let member = Member(name, in: frames[frames.count - 1].role)
        guard member != .unknown else { return try memberName(String(decoding: name, as: UTF8.self)) }
        try recordKnown(member, spelled: { String(decoding: name, as: UTF8.self) })
    }

    mutating func memberName(_ name: String) throws(StrictJSON.Violation) {
        if subtreeDepth > 0 {
            if keeping { kept.memberName(name) }
            try ignored?.memberName(name)
            return
        }
        let last = frames.count - 1
        var utf8 = name
        let member = utf8.withUTF8 { Member(UnsafeRawBufferPointer($0), in: frames[last].role) }
        guard member != .unknown else {
            guard frames[last].otherNames.insert(name).inserted else { throw .duplicateMemberName(name) }
            frames[last].pending = .unknown
            return
        }
        try recordKnown(member, spelled: { name })
    }

    /// A known member's name in the innermost known object: refused when it is there already.
    private mutating func recordKnown(_ member: Member, spelled name: () -> String) throws(StrictJSON.Violation) {
        let last = frames.count - 1
        let bit: UInt16 = 1 << member.rawValue
        guard frames[last].knownNames & bit == 0 else { throw .duplicateMemberName(name()) }
        frames[last].knownNames |= bit
        frames[last].pending = member
    }

    mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation) {
        if subtreeDepth > 0 {
            if keeping { try kept.scalar(value) }
            return
        }
        guard let frame = frames.last else {
            record(InvalidResponse("The answer is not a JSON object."))
            return
        }
        if frame.role == .operations {
            index += 1
            record(Self.wrongType(Path(index: index), "an object"))
        } else {
            store(value, for: frame.pending)
        }
    }

    mutating func endObject() throws(StrictJSON.Violation) {
        if subtreeDepth > 0 {
            if keeping { try kept.endObject() }
            ignored?.endObject()
            leaveSubtree()
            return
        }
        switch frames.removeLast().role {
        case .operation:
            guard problem == nil else { return }
            do throws(InvalidResponse) {
                operations.append(try fields.operation(at: index, server: server))
            } catch {
                record(error)
            }
        case .root:
            // Before any operation's problem in the checks' order; there is none unless this passes.
            do throws(InvalidResponse) {
                guard case .array = try Self.required(operationsMember, "operations", in: nil) else {
                    throw Self.wrongType("operations", "an array")
                }
            } catch {
                record(error)
            }
        case .operations, .payload, .redeemData:
            break
        }
    }

    mutating func endArray() throws(StrictJSON.Violation) {
        if subtreeDepth > 0 {
            if keeping { try kept.endArray() }
            ignored?.endArray()
            leaveSubtree()
            return
        }
        frames.removeLast()  // the operations array
    }

    // MARK: Where a container goes

    /// A container starts outside any subtree: a known object, the operations array, a kept
    /// value or an ignored one. A placeholder stands for it where only its type matters.
    private mutating func start(object isObject: Bool) {
        guard let frame = frames.last else {
            if isObject {
                frames.append(Frame(role: .root))
            } else {
                record(InvalidResponse("The answer is not a JSON object."))
                beginSubtree(keeping: false, object: false)
            }
            return
        }
        if frame.role == .operations {
            index += 1
            if isObject {
                fields = OperationFields()
                frames.append(Frame(role: .operation))
            } else {
                record(Self.wrongType(Path(index: index), "an object"))
                beginSubtree(keeping: false, object: false)
            }
            return
        }
        let member = frame.pending
        store(isObject ? .object([:]) : .array([]), for: member)
        switch (member, isObject) {
        case (.operations, false):
            frames.append(Frame(role: .operations))
            index = -1
        case (.payload, true):
            frames.append(Frame(role: .payload))
        case (.redeemData, true):
            frames.append(Frame(role: .redeemData))
        case (.data, _), (.additionalInformation, _):
            beginSubtree(keeping: true, object: isObject)
        default:
            beginSubtree(keeping: false, object: isObject)
        }
    }

    private mutating func beginSubtree(keeping isKept: Bool, object: Bool) {
        subtreeDepth = 1
        keeping = isKept
        if keeping {
            if object { kept.beginObject() } else { kept.beginArray() }
        } else {
            var names = UniqueMemberNames()
            if object { names.beginObject() } else { names.beginArray() }
            ignored = names
        }
    }

    /// True (and one level deeper) when a container opens inside a subtree.
    private mutating func enterSubtree() -> Bool {
        guard subtreeDepth > 0 else { return false }
        subtreeDepth += 1
        return true
    }

    /// A container inside a subtree closed; at the subtree's end, a kept value goes to its member.
    private mutating func leaveSubtree() {
        subtreeDepth -= 1
        guard subtreeDepth == 0 else { return }
        if keeping, let value = kept.takeValue(), let frame = frames.last { store(value, for: frame.pending) }
        keeping = false
        ignored = nil
    }

    private mutating func store(_ value: JSONValue, for member: Member) {
        switch member {
        case .operations: operationsMember = value
        case .creationTime: fields.creationTime = value
        case .dispatchChannel: fields.dispatchChannel = value
        case .payload: fields.payload = value
        case .additionalInformation: fields.additionalInformation = value
        case .contentType: fields.contentType = value
        case .version: fields.version = value
        case .redeemData: fields.redeemData = value
        case .data: fields.data = value
        case .token: fields.token = value
        case .redeemUrl: fields.redeemUrl = value
        case .unknown: break
        }
    }

    private mutating func record(_ reason: InvalidResponse) {
        if problem == nil { problem = reason }
    }

    // MARK: The answer's shape

    private enum Role {
        case root, operations, operation, payload, redeemData
    }

    /// The members this reader knows, by the object they belong to.
    private enum Member: UInt16 {
        case operations, creationTime, dispatchChannel, payload, additionalInformation
        case contentType, version, redeemData, data, token, redeemUrl, unknown

        init(_ name: UnsafeRawBufferPointer, in role: Role) {
            self = .unknown
            for (spelling, member) in Self.names(in: role) where spelling.utf8CodeUnitCount == name.count {
                if let base = name.baseAddress, memcmp(base, spelling.utf8Start, name.count) == 0 {
                    self = member
                    return
                }
            }
        }

        /// The names this reader knows in an object of `role`, as they are spelled on the wire.
        private static func names(in role: Role) -> [(StaticString, Member)] {
            switch role {
            case .root: rootNames
            case .operation: operationNames
            case .payload: payloadNames
            case .redeemData: redeemDataNames
            case .operations: []
            }
        }

        private static let rootNames: [(StaticString, Member)] = [("operations", .operations)]
        private static let operationNames: [(StaticString, Member)] = [
            ("creationTimeInEpochMillis", .creationTime), ("dispatchChannel", .dispatchChannel),
            ("payload", .payload), ("additionalInformation", .additionalInformation),
        ]
        private static let payloadNames: [(StaticString, Member)] = [
            ("contentType", .contentType), ("version", .version), ("redeemData", .redeemData), ("data", .data),
        ]
        private static let redeemDataNames: [(StaticString, Member)] = [("token", .token), ("redeemUrl", .redeemUrl)]
    }

    /// An open known object (or the operations array) and the names seen in it.
    private struct Frame {
        let role: Role
        /// Bits of ``Member`` raw values.
        var knownNames: UInt16 = 0
        var otherNames: Set<String> = []
        var pending = Member.unknown
    }

    // MARK: Checks

    /// Where a member is, for a reason: `operations[3].payload.token`; its text is made only for a
    /// reason. The names are the reader's own literals, so a path is copied without reference
    /// counting: every operation of every answer makes a few.
    struct Path {
        let index: Int
        var members: (StaticString?, StaticString?, StaticString?) = (nil, nil, nil)

        func appending(_ name: StaticString) -> Path {
            var path = self
            if path.members.0 == nil {
                path.members.0 = name
            } else if path.members.1 == nil {
                path.members.1 = name
            } else {
                path.members.2 = name
            }
            return path
        }

        var text: String {
            let names = [members.0, members.1, members.2].compactMap { $0.map { "\($0)" } }
            return (["operations[\(index)]"] + names).joined(separator: ".")
        }
    }

    /// The member `name`'s value; missing and `null` are both "missing".
    static func required(_ value: JSONValue?, _ name: StaticString, in path: Path?) throws(InvalidResponse) -> JSONValue
    {
        guard let value, value != .null else {
            throw InvalidResponse("\(path.map { $0.text + "." } ?? "")\(name) is missing.")
        }
        return value
    }

    static func wrongType(_ path: Path, _ expected: String) -> InvalidResponse {
        wrongType(path.text, expected)
    }

    static func wrongType(_ path: String, _ expected: String) -> InvalidResponse {
        InvalidResponse("\(path) has the wrong type; \(expected) was expected.")
    }
}
