/// Takes the members a JWE protected header is checked on while the package's JSON reader reads
/// it (a `StrictJSONSink` of `StrictJSON.read`), for `JWEHeader`, which checks them in its order.
///
/// Why not a value tree first: building a dictionary for the header and its `epk`, and looking
/// each member up in it again, was half the cost of the header, read for every encrypted answer.
/// Here the header object and its `epk` object are never built: their known members go straight
/// into fields, recognised by their bytes. Everything else is read as the tree was: any other
/// container whole (`JSONValueBuilder`), duplicate names refused in every object, each when its
/// value is complete as the tree refused it, so the same text gets the same error.
struct JWEHeaderReader: StrictJSONSink {
    static var readsValues: Bool { true }
    static var readsASCIIMemberNames: Bool { true }
    /// A header's long strings are its `epk` coordinates, each read once.
    static var remembersRepeatedStrings: Bool { false }

    /// Whether the text was one object; nothing else is read when it was not.
    private(set) var isObject = false
    /// The header's members the checks look at, as read (absent: nil).
    private(set) var members = Members()

    struct Members {
        var alg: JSONValue?
        var enc: JSONValue?
        var crit: JSONValue?
        var zip: JSONValue?
        var kid: JSONValue?
        var typ: JSONValue?
        var cty: JSONValue?
        var apu: JSONValue?
        var apv: JSONValue?
        var epk = EphemeralKeyMember.absent
        /// The members of `epk` when it is an object.
        var epkMembers = EphemeralKeyMembers()
    }

    /// What the `epk` member is.
    enum EphemeralKeyMember {
        case absent
        case notObject
        case object
    }

    struct EphemeralKeyMembers {
        var kty: JSONValue?
        var crv: JSONValue?
        var x: JSONValue?
        var y: JSONValue?
        /// Whether it has a `d` (of any value): a private key, refused.
        var hasPrivateMember = false
    }

    /// The open known objects: 0 before the header, 1 in it, 2 in its `epk`.
    private var depth = 0
    private var header = Frame()
    private var ephemeralKey = Frame()
    /// Builds any other container; how deep the reader is inside it.
    private var subtree = JSONValueBuilder()
    private var subtreeDepth = 0

    init() {}

    // MARK: Events

    mutating func beginObject() {
        if subtreeDepth > 0 {
            subtreeDepth += 1
            subtree.beginObject()
        } else if depth == 0 {
            depth = 1
            isObject = true
        } else if depth == 1, case .known(.epk, _) = header.pending {
            depth = 2
            // A second epk's members replace the first's, but it is refused as a duplicate when it ends.
            ephemeralKey = Frame()
            members.epkMembers = EphemeralKeyMembers()
        } else {
            subtreeDepth = 1
            subtree.beginObject()
        }
    }

    mutating func beginArray() {
        subtreeDepth += 1
        subtree.beginArray()
    }

    mutating func memberName(ascii name: UnsafeRawBufferPointer) throws(StrictJSON.Violation) {
        guard subtreeDepth == 0 else { return subtree.memberName(String(decoding: name, as: UTF8.self)) }
        if let member = Member(ascii: name, inEphemeralKey: depth == 2) {
            setPending(.known(member, spelled: nil))
        } else {
            setPending(.other(String(decoding: name, as: UTF8.self)))
        }
    }

    /// A name with escapes or not ASCII: known when it equals one as a Swift string, as a
    /// dictionary key would.
    mutating func memberName(_ name: String) throws(StrictJSON.Violation) {
        guard subtreeDepth == 0 else { return subtree.memberName(name) }
        if let member = Member(name, inEphemeralKey: depth == 2) {
            setPending(.known(member, spelled: name))
        } else {
            setPending(.other(name))
        }
    }

    mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation) {
        if subtreeDepth > 0 { return try subtree.scalar(value) }
        guard depth > 0 else { return }  // the text is one scalar: not an object
        try complete(value)
    }

    mutating func endObject() throws(StrictJSON.Violation) {
        if subtreeDepth > 0 {
            try subtree.endObject()
            return try leaveSubtree()
        }
        depth -= 1
        guard depth == 1 else { return }
        let member = try header.settle()
        if member == .epk { members.epk = .object }
    }

    mutating func endArray() throws(StrictJSON.Violation) {
        try subtree.endArray()
        try leaveSubtree()
    }

    // MARK: Members

    private mutating func setPending(_ pending: Pending) {
        if depth == 2 { ephemeralKey.pending = pending } else { header.pending = pending }
    }

    /// A container outside the known objects closed; at its end its value goes to its member.
    private mutating func leaveSubtree() throws(StrictJSON.Violation) {
        subtreeDepth -= 1
        guard subtreeDepth == 0, let value = subtree.takeValue(), depth > 0 else { return }
        try complete(value)
    }

    /// The value of the innermost known object's pending member is complete.
    private mutating func complete(_ value: JSONValue) throws(StrictJSON.Violation) {
        if depth == 2 {
            switch try ephemeralKey.settle() {
            case .kty: members.epkMembers.kty = value
            case .crv: members.epkMembers.crv = value
            case .x: members.epkMembers.x = value
            case .y: members.epkMembers.y = value
            case .d: members.epkMembers.hasPrivateMember = true
            default: break
            }
            return
        }
        switch try header.settle() {
        case .alg: members.alg = value
        case .enc: members.enc = value
        case .crit: members.crit = value
        case .zip: members.zip = value
        case .kid: members.kid = value
        case .typ: members.typ = value
        case .cty: members.cty = value
        case .apu: members.apu = value
        case .apv: members.apv = value
        case .epk: members.epk = .notObject
        default: break
        }
    }

    /// The names the checks look at: the header's, then its `epk`'s.
    enum Member: UInt8, CaseIterable {
        case alg, enc, epk, kid, typ, cty, apu, apv, crit, zip
        case kty, crv, x, y, d

        /// By raw value, as spelled on the wire.
        private static let names = [
            "alg", "enc", "epk", "kid", "typ", "cty", "apu", "apv", "crit", "zip", "kty", "crv", "x", "y", "d",
        ]
        /// Each name's length and bytes in one word, by raw value.
        private static let packedNames: [UInt64] = names.map { packed($0.utf8) }

        var name: String { Self.names[Int(rawValue)] }

        var isEphemeralKeyMember: Bool { rawValue >= Member.kty.rawValue }

        /// The member named by these bytes in the header (or in its `epk`), if any.
        init?(ascii name: UnsafeRawBufferPointer, inEphemeralKey: Bool) {
            guard name.count <= 4, let index = Self.packedNames.firstIndex(of: Self.packed(name)),
                let member = Member(rawValue: UInt8(index)), member.isEphemeralKeyMember == inEphemeralKey
            else { return nil }
            self = member
        }

        init?(_ name: String, inEphemeralKey: Bool) {
            let member = Self.allCases.first { $0.isEphemeralKeyMember == inEphemeralKey && $0.name == name }
            guard let member else { return nil }
            self = member
        }

        /// A name of at most 4 bytes as one word: its length, then its bytes.
        private static func packed(_ bytes: some Collection<UInt8>) -> UInt64 {
            bytes.reduce(0) { $0 << 8 | UInt64($1) } | UInt64(bytes.count) << 32
        }
    }

    /// What the next value completes.
    private enum Pending {
        case none
        /// `spelled`: the name as read when it was not plain ASCII, for the duplicate's error.
        case known(Member, spelled: String?)
        case other(String)
    }

    /// One known object: the names whose values are complete.
    private struct Frame {
        var seen: UInt16 = 0
        var otherNames: Set<String> = []
        var pending = Pending.none

        /// Records the pending member as complete: its known member, or nil; a name complete
        /// already is the duplicate.
        mutating func settle() throws(StrictJSON.Violation) -> Member? {
            switch pending {
            case .none:
                return nil
            case .known(let member, let spelled):
                let bit: UInt16 = 1 << member.rawValue
                guard seen & bit == 0 else { throw .duplicateMemberName(spelled ?? member.name) }
                seen |= bit
                return member
            case .other(let name):
                guard otherNames.insert(name).inserted else { throw .duplicateMemberName(name) }
                return nil
            }
        }
    }
}
