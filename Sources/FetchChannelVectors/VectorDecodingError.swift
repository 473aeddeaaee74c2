import DeviceSigning

/// Why a vector file (or a part of it) cannot be read; the reason names the JSON path. Equal when
/// the codes are.
struct VectorDecodingError: CodedError {
    struct Code: ErrorCode {
        let rawValue: String

        /// Not JSON at all.
        static let notJSON = Code(rawValue: "notJSON")
        /// A required member is missing.
        static let missingMember = Code(rawValue: "missingMember")
        /// A member has the wrong JSON type, or is null.
        static let wrongType = Code(rawValue: "wrongType")
        /// A member's value is not one the format allows.
        static let invalidValue = Code(rawValue: "invalidValue")
        /// An object has two members of the same name (decoders disagree on which one counts).
        static let duplicateMember = Code(rawValue: "duplicateMember")
        /// A member that no checker reads (``UnreadVectorMembers``).
        static let unreadMember = Code(rawValue: "unreadMember")
        /// A case names a key the file does not hold.
        static let unknownKey = Code(rawValue: "unknownKey")
    }

    let code: Code
    let reason: String
}
