import Foundation

/// Decodes a backend's `{"operations":[Op…]}` answer, strictly.
///
/// Any field of the wrong type, a missing required field (creation time, channel, payload,
/// content type, version, token, redeem URL), non-JSON, a truncated body or a body above the size
/// limit makes the whole answer invalid: a half-understood answer is not trusted. Unknown fields
/// are ignored and unknown channels kept, so a newer backend keeps working.
public enum PendingOperationsDecoder {
    /// The largest answer accepted (1 MiB): a larger one is cut off by the transport and invalid.
    public static let maximumBodyBytes = 1 << 20

    /// The operations in the order the backend sent them, each tagged with `server`.
    public static func decode(_ body: Data, server: String) throws(InvalidResponse) -> [PendingOutOfBandOperation] {
        guard body.count <= maximumBodyBytes else {
            throw InvalidResponse("The answer is larger than \(maximumBodyBytes) bytes.")
        }
        let wire: WireAnswer
        do {
            wire = try JSONDecoder().decode(WireAnswer.self, from: body)
        } catch let error as DecodingError {
            throw InvalidResponse(describe(error))
        } catch {
            throw InvalidResponse("The answer is not JSON.")
        }
        return try wire.operations.enumerated().map { index, operation throws(InvalidResponse) in
            guard !operation.payload.redeemData.token.isEmpty else {
                throw InvalidResponse("operations[\(index)].payload.redeemData.token is empty.")
            }
            return PendingOutOfBandOperation(
                creationTimeInEpochMillis: operation.creationTimeInEpochMillis,
                dispatchChannel: operation.dispatchChannel,
                payload: operation.payload,
                additionalInformation: operation.additionalInformation,
                server: server
            )
        }
    }

    /// Why an answer was not accepted, in words that name the offending field.
    public struct InvalidResponse: Error, Sendable, Hashable, CustomStringConvertible {
        public let reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    private struct WireAnswer: Decodable {
        let operations: [WireOperation]
    }

    private struct WireOperation: Decodable {
        let creationTimeInEpochMillis: Int64
        let dispatchChannel: DispatchChannel
        let payload: PendingOutOfBandOperation.Payload
        let additionalInformation: JSONValue?
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let components = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }
            let joined = components.joined()
            return joined.hasPrefix(".") ? String(joined.dropFirst()) : (joined.isEmpty ? "the answer" : joined)
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "\(parent == "the answer" ? "" : parent + ".")\(key.stringValue) is missing."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)) has the wrong type."
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "The answer is not valid JSON." : "\(path(context)) is invalid."
        @unknown default:
            return "The answer could not be decoded."
        }
    }
}
