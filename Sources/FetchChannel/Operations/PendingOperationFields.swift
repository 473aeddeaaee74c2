/// The members of one operation as ``PendingOperationsAnswerReader`` read them (a container whose
/// type is all that matters is an empty placeholder), and the operation they make: the checks,
/// their order and their reasons are those of the operation's ``PendingOperationsDecoder`` rules.
struct OperationFields {
    var creationTime: JSONValue?
    var dispatchChannel: JSONValue?
    var payload: JSONValue?
    var additionalInformation: JSONValue?
    var contentType: JSONValue?
    var version: JSONValue?
    var redeemData: JSONValue?
    var data: JSONValue?
    var token: JSONValue?
    var redeemUrl: JSONValue?

    typealias Reader = PendingOperationsAnswerReader

    /// The operation at `index` of the answer, or why it is not one.
    func operation(at index: Int, server: String) throws(Reader.InvalidResponse) -> PendingOutOfBandOperation {
        let path = Reader.Path(index: index)
        guard case .integer(let creation) = try Reader.required(creationTime, "creationTimeInEpochMillis", in: path)
        else {
            throw Reader.wrongType(path.appending("creationTimeInEpochMillis"), "an integer")
        }
        let channel = try Self.string(dispatchChannel, "dispatchChannel", in: path)
        let payloadPath = path.appending("payload")
        guard case .object = try Reader.required(payload, "payload", in: path) else {
            throw Reader.wrongType(payloadPath, "an object")
        }
        let contentType = try Self.string(contentType, "contentType", in: payloadPath)
        let version = try Self.string(version, "version", in: payloadPath)
        let redeemPath = payloadPath.appending("redeemData")
        guard case .object = try Reader.required(redeemData, "redeemData", in: payloadPath) else {
            throw Reader.wrongType(redeemPath, "an object")
        }
        let token = try Self.string(token, "token", in: redeemPath)
        guard !token.isEmpty else {
            throw Reader.InvalidResponse("\(redeemPath.appending("token").text) is empty.")
        }
        let redeemUrl = try Self.string(redeemUrl, "redeemUrl", in: redeemPath)
        let redeemData = PendingOutOfBandOperation.RedeemData(token: token, redeemUrl: redeemUrl)
        if let problem = redeemData.sizeProblem(at: redeemPath.text) { throw Reader.InvalidResponse(problem) }
        return PendingOutOfBandOperation(
            creationTimeInEpochMillis: creation,
            dispatchChannel: DispatchChannel(wireValue: channel),
            payload: .init(
                contentType: contentType, version: version, redeemData: redeemData, data: Self.optional(data)),
            additionalInformation: Self.optional(additionalInformation),
            server: server
        )
    }

    private static func string(_ value: JSONValue?, _ name: StaticString, in path: Reader.Path)
        throws(Reader.InvalidResponse) -> String
    {
        guard case .string(let text) = try Reader.required(value, name, in: path) else {
            throw Reader.wrongType(path.appending(name), "a string")
        }
        return text
    }

    /// A kept value: absent when missing or `null`, as `decodeIfPresent` read it.
    private static func optional(_ value: JSONValue?) -> JSONValue? {
        value == .null ? nil : value
    }
}
