import Foundation

/// The payload of a Device-Signature, read with the package's strict JSON reader.
///
/// `creationTimeInEpochMillis` must be an integer in the Int64 range: strings, booleans, `null`,
/// numbers with a fractional part (`1.5`, also `1767225600000.0001`, which a `Double` would round
/// to an integer) and numbers outside the range are refused. A number written with a fraction or
/// exponent whose digits make an integer (`1.0`, `1e3`) is accepted with that value: JSON has one
/// number type (RFC 8259 §6). Unknown members are ignored. Duplicate member names, in any object
/// of the payload, are refused: decoders disagree on which one counts.
struct DeviceSignaturePayload {
    let dispatchTargetId: String
    let requestId: String
    let creationTimeInEpochMillis: Int64

    /// Decodes `json`, or explains what is wrong with it.
    static func decode(_ json: Data) -> Result<DeviceSignaturePayload, DeviceSignatureRejection> {
        let value: JSONValue
        do throws(StrictJSON.Violation) {
            // The payload is at most 4 KiB (checked before): far inside the reader's limits.
            value = try StrictJSON.parseIntegralLiteralsAsIntegers(json)
        } catch .duplicateMemberName(let name) {
            let violation = StrictJSON.Violation.duplicateMemberName(name)
            return .failure(.malformed(reason: "The Device-Signature payload is ambiguous: \(violation)."))
        } catch .numberOutOfRange {
            return .failure(
                .malformed(
                    reason: "The Device-Signature payload holds a number beyond any 64-bit value; its "
                        + "creationTimeInEpochMillis must be an integer number of milliseconds in the 64-bit range."))
        } catch {
            return .failure(.malformed(reason: "The Device-Signature payload is not valid JSON."))
        }
        guard case .object(let members) = value else {
            return .failure(.malformed(reason: "The Device-Signature payload is not a JSON object."))
        }
        func member(_ name: String) -> Result<JSONValue, DeviceSignatureRejection> {
            guard let value = members[name] else {
                return .failure(.malformed(reason: "The Device-Signature payload has no \(name)."))
            }
            return .success(value)
        }
        func string(_ name: String) -> Result<String, DeviceSignatureRejection> {
            member(name).flatMap { value in
                guard case .string(let text) = value else {
                    return .failure(.malformed(reason: "The Device-Signature payload's \(name) must be a string."))
                }
                return .success(text)
            }
        }
        return string("dispatchTargetId").flatMap { dispatchTargetId in
            string("requestId").flatMap { requestId in
                member("creationTimeInEpochMillis").flatMap { creation in
                    guard case .integer(let millis) = creation else {
                        return .failure(
                            .malformed(
                                reason:
                                    "The Device-Signature payload's creationTimeInEpochMillis must be an integer "
                                    + "number of milliseconds (not a string, boolean, fraction or out of the 64-bit range)."
                            ))
                    }
                    return .success(
                        DeviceSignaturePayload(
                            dispatchTargetId: dispatchTargetId, requestId: requestId, creationTimeInEpochMillis: millis)
                    )
                }
            }
        }
    }
}
