import DeviceSigning
import Foundation

/// Decodes a backend's `{"operations":[Op…]}` answer, strictly: the package's JSON reader
/// (`StrictJSON.read`) reads the text (duplicate member names, depth, numbers and UTF-8 refused as
/// it says) while ``PendingOperationsAnswerReader`` takes the operations out of it.
///
/// Any field of the wrong type, a missing required field (creation time, channel, payload,
/// content type, version, token, redeem URL), an empty token, a token over 1 KiB or a redeem URL
/// over 8 KiB (``PendingOutOfBandOperation/RedeemData``), non-JSON, a truncated body or a body
/// above the size limit makes the whole answer invalid: a half-understood answer is not trusted.
/// Unknown fields are ignored and unknown channels kept, so a newer backend keeps working.
public enum PendingOperationsDecoder {
    /// The largest answer accepted (1 MiB): a larger one is cut off by the transport and invalid.
    public static let maximumBodyBytes = 1 << 20

    /// The operations in the order the backend sent them, each tagged with `server`.
    public static func decode(_ body: Data, server: String) throws(InvalidResponse) -> [PendingOutOfBandOperation] {
        guard body.count <= maximumBodyBytes else {
            throw InvalidResponse(.tooLarge, reason: "The answer is larger than \(maximumBodyBytes) bytes.")
        }
        var reader = PendingOperationsAnswerReader(server: server)
        let limits = StrictJSON.Limits(maximumBytes: maximumBodyBytes)
        let violation = body.withUnsafeBytes { bytes -> StrictJSON.Violation? in
            do throws(StrictJSON.Violation) {
                try StrictJSON.read(bytes: bytes, into: &reader, limits: limits)
                return nil
            } catch {
                return error
            }
        }
        if let violation { throw InvalidResponse("The answer is not valid JSON: \(violation).") }
        if let problem = reader.problem { throw problem }
        return reader.operations
    }

    /// Why an answer was not accepted (`tooLarge`, or `malformed` with words that name the
    /// offending field): the same type as the fetch error's cause.
    public typealias InvalidResponse = FetchChannel.InvalidResponse
}
