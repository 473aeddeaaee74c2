import DeviceSigning
import Foundation

/// Small decoders shared by the checkers. JSON and base64 go through Foundation, not the package's
/// own codecs, so a bug in `DeviceSigning`'s base64 cannot hide itself.
enum VectorDecoding {
    /// Decodes `type` from `data`, or describes why not (the JSON path where decoding stopped).
    ///
    /// The text is first read by the package's strict reader (`StrictJSON`): a file with two
    /// members of one name in an object, at any depth, is refused, naming the member. `JSONDecoder`
    /// keeps the first of the two and `JSONSerialization` (which ``UnreadVectorMembers`` walks) the
    /// last, so `{"expected":{"code":"A"},"expected":{"code":"B"}}` would be checked against A
    /// while a person reading the file sees B.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) -> Result<T, VectorDecodingError> {
        do throws(StrictJSON.Violation) {
            try StrictJSON.requireUniqueMemberNames(data)
        } catch {
            let code: VectorDecodingError.Code
            if case .duplicateMemberName = error { code = .duplicateMember } else { code = .notJSON }
            return .failure(VectorDecodingError(code: code, reason: error.description))
        }
        do {
            return .success(try JSONDecoder().decode(type, from: data))
        } catch let error as DecodingError {
            return .failure(describe(error))
        } catch {
            return .failure(VectorDecodingError(code: .notJSON, reason: "not valid JSON"))
        }
    }

    /// ``decode(_:from:)`` for one of the package's own vector files: a member that no checker
    /// reads is refused too, naming its path (``UnreadVectorMembers``). Not for the Wycheproof
    /// suites, whose many members this package has no use for.
    static func decodeVectorFile<T: Decodable>(_ type: T.Type, from data: Data) -> Result<T, VectorDecodingError> {
        let decoded = decode(type, from: data)
        guard case .success(let file) = decoded else { return decoded }
        guard let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            // Never seen: JSONDecoder read it. Not walked, it would pass unchecked.
            return .failure(
                VectorDecodingError(
                    code: .notJSON, reason: "not JSON that can be searched for members no checker reads"))
        }
        if let path = UnreadVectorMembers.first(in: json, readAs: file) {
            return .failure(VectorDecodingError(code: .unreadMember, reason: "a member no checker reads at \(path)"))
        }
        return decoded
    }

    private static func describe(_ error: DecodingError) -> VectorDecodingError {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the top level" : String(text.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context):
            let reason = "missing member \(key.stringValue) at \(path(context.codingPath))"
            return VectorDecodingError(code: .missingMember, reason: reason)
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return VectorDecodingError(code: .wrongType, reason: "wrong type at \(path(context.codingPath))")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return VectorDecodingError(code: .notJSON, reason: "not valid JSON")
        case .dataCorrupted(let context):
            return VectorDecodingError(code: .invalidValue, reason: "invalid value at \(path(context.codingPath))")
        @unknown default:
            return VectorDecodingError(code: .invalidValue, reason: "cannot be decoded")
        }
    }

    /// Hex to bytes; nil for an odd length or a non-hex character. Each digit is read by the
    /// package's one `HexDigit`, the same the JSON and URL parsers use.
    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = HexDigit.value(digits[index]), let low = HexDigit.value(digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// base64url (padding optional) through Foundation; nil when it is not base64url.
    static func base64url(_ text: some StringProtocol) -> Data? {
        guard !text.contains("+"), !text.contains("/") else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
