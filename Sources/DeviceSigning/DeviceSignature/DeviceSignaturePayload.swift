import Foundation

/// The payload of a Device-Signature, decoded with `JSONDecoder`.
///
/// `creationTimeInEpochMillis` decodes into `Int64`, which refuses strings, booleans, `null`,
/// non-integral numbers (1.5) and numbers outside the Int64 range. A number with an integral
/// value written with a fraction or exponent (`1.0`, `1e3`) is accepted with that value: JSON has
/// one number type (RFC 8259 §6). Unknown members are ignored. Duplicate member names, in any
/// object of the payload, are refused (`StrictJSON`): decoders disagree on which one counts.
struct DeviceSignaturePayload: Decodable {
    let dispatchTargetId: String
    let requestId: String
    let creationTimeInEpochMillis: Int64

    private enum CodingKeys: String, CodingKey {
        case dispatchTargetId, requestId, creationTimeInEpochMillis
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        dispatchTargetId = try container.decode(String.self, forKey: .dispatchTargetId)
        requestId = try container.decode(String.self, forKey: .requestId)
        do {
            creationTimeInEpochMillis = try container.decode(Int64.self, forKey: .creationTimeInEpochMillis)
        } catch let error as DecodingError {
            guard case .dataCorrupted = error else { throw error }
            throw Self.notAnInt64(container)
        } catch {
            // JSONDecoder reports a number that is not an Int64 (1.5, 2^63) with an internal
            // error type and no coding path; the document itself was already parsed, so the
            // problem is this member's value.
            throw Self.notAnInt64(container)
        }
    }

    private static func notAnInt64(_ container: KeyedDecodingContainer<CodingKeys>) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: .creationTimeInEpochMillis, in: container,
            debugDescription: "Not an integer in the 64-bit range.")
    }

    /// Decodes `json`, or explains what is wrong with it.
    static func decode(_ json: Data) -> Result<DeviceSignaturePayload, DeviceSignatureRejection> {
        do throws(StrictJSON.Violation) {
            try StrictJSON.requireUniqueMemberNames(json)
        } catch .notJSON {
            return .failure(.malformed(reason: "The Device-Signature payload is not valid JSON."))
        } catch {
            return .failure(.malformed(reason: "The Device-Signature payload is ambiguous: \(error)."))
        }
        do {
            return .success(try JSONDecoder().decode(DeviceSignaturePayload.self, from: json))
        } catch let error as DecodingError {
            return .failure(.malformed(reason: explain(error)))
        } catch {
            return .failure(.malformed(reason: "The Device-Signature payload is not valid JSON."))
        }
    }

    private static func explain(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, _):
            return "The Device-Signature payload has no \(key.stringValue)."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return describeWrongValue(at: path(context.codingPath))
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "The Device-Signature payload is not valid JSON."
                : describeWrongValue(at: path(context.codingPath))
        @unknown default:
            return "The Device-Signature payload could not be decoded."
        }
    }

    private static func describeWrongValue(at path: String) -> String {
        switch path {
        case "":
            return "The Device-Signature payload is not a JSON object."
        case "creationTimeInEpochMillis":
            return
                "The Device-Signature payload's creationTimeInEpochMillis must be an integer number of milliseconds (not a string, boolean, fraction or out of the 64-bit range)."
        default:
            return "The Device-Signature payload's \(path) must be a string."
        }
    }
}
