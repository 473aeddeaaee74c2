/// Takes the operations out of a parsed answer `{"operations":[Op…]}`: each required member present
/// and of its type, or the whole answer is invalid, with the offending member's path in the reason.
/// `payload.data` and `additionalInformation` are kept as sent; `null` there is absent; unknown
/// members are ignored (``PendingOperationsDecoder`` states the rules).
enum PendingOperationsAnswerReader {
    typealias InvalidResponse = PendingOperationsDecoder.InvalidResponse

    static func operations(in root: JSONValue, server: String) throws(InvalidResponse) -> [PendingOutOfBandOperation] {
        guard case .object(let members) = root else {
            throw InvalidResponse("The answer is not a JSON object.")
        }
        guard case .array(let elements) = try required(members, "operations", in: nil) else {
            throw wrongType("operations", "an array")
        }
        var operations: [PendingOutOfBandOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try operation(element, path: "operations[\(index)]", server: server))
        }
        return operations
    }

    private static func operation(_ value: JSONValue, path: String, server: String)
        throws(InvalidResponse) -> PendingOutOfBandOperation
    {
        guard case .object(let members) = value else { throw wrongType(path, "an object") }
        guard case .integer(let creation) = try required(members, "creationTimeInEpochMillis", in: path) else {
            throw wrongType(path + ".creationTimeInEpochMillis", "an integer")
        }
        let channel = try string(members, "dispatchChannel", in: path)
        let payloadPath = path + ".payload"
        guard case .object(let payload) = try required(members, "payload", in: path) else {
            throw wrongType(payloadPath, "an object")
        }
        let contentType = try string(payload, "contentType", in: payloadPath)
        let version = try string(payload, "version", in: payloadPath)
        let redeemPath = payloadPath + ".redeemData"
        guard case .object(let redeemData) = try required(payload, "redeemData", in: payloadPath) else {
            throw wrongType(redeemPath, "an object")
        }
        let token = try string(redeemData, "token", in: redeemPath)
        guard !token.isEmpty else { throw InvalidResponse("\(redeemPath).token is empty.") }
        let redeemUrl = try string(redeemData, "redeemUrl", in: redeemPath)
        return PendingOutOfBandOperation(
            creationTimeInEpochMillis: creation,
            dispatchChannel: DispatchChannel(wireValue: channel),
            payload: .init(
                contentType: contentType, version: version,
                redeemData: .init(token: token, redeemUrl: redeemUrl), data: optional(payload["data"])),
            additionalInformation: optional(members["additionalInformation"]),
            server: server
        )
    }

    /// The member `name`; missing and `null` are both "missing".
    private static func required(_ members: [String: JSONValue], _ name: String, in path: String?)
        throws(InvalidResponse) -> JSONValue
    {
        guard let value = members[name], value != .null else {
            throw InvalidResponse("\(path.map { $0 + "." } ?? "")\(name) is missing.")
        }
        return value
    }

    private static func string(_ members: [String: JSONValue], _ name: String, in path: String)
        throws(InvalidResponse) -> String
    {
        guard case .string(let text) = try required(members, name, in: path) else {
            throw wrongType(path + "." + name, "a string")
        }
        return text
    }

    /// A kept value: absent when missing or `null`, as `decodeIfPresent` read it.
    private static func optional(_ value: JSONValue?) -> JSONValue? {
        value == .null ? nil : value
    }

    private static func wrongType(_ path: String, _ expected: String) -> InvalidResponse {
        InvalidResponse("\(path) has the wrong type; \(expected) was expected.")
    }
}
