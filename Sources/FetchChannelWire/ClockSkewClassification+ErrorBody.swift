import DeviceSigning
import Foundation

extension ClockSkewClassification {
    /// The two fields of a backend error body that matter for clock skew, read leniently.
    ///
    /// Error bodies come from proxies and load balancers as often as from the backend, so anything
    /// that is not a JSON object, is larger than ``maximumBytes``, or has a field of the wrong type
    /// simply lacks that field: classification must never fail because of a body.
    struct ErrorBody: Decodable {
        /// Larger bodies are not parsed at all: a real error body is tiny.
        static let maximumBytes = 64 * 1_024

        var errorCode: String?
        var serverTimeInEpochMillis: Int64?

        private enum CodingKeys: String, CodingKey {
            case errorCode
            case serverTimeInEpochMillis
        }

        init(errorCode: String? = nil, serverTimeInEpochMillis: Int64? = nil) {
            self.errorCode = errorCode
            self.serverTimeInEpochMillis = serverTimeInEpochMillis
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            errorCode = try? container.decodeIfPresent(String.self, forKey: .errorCode)
            if let integer = try? container.decodeIfPresent(Int64.self, forKey: .serverTimeInEpochMillis) {
                serverTimeInEpochMillis = integer
            } else if let number = try? container.decodeIfPresent(Double.self, forKey: .serverTimeInEpochMillis),
                let integer = Int64(exactly: number)
            {
                serverTimeInEpochMillis = integer  // written as 1.7E12 or 1700000000000.0
            }
        }

        /// The body's fields, or an empty body when it is too large or not a JSON object. A member
        /// name twice is not JSON here (the package's strict reader): with `errorCode` twice, which
        /// one decides would be a parser's choice.
        static func parse(_ body: some Collection<UInt8>) -> ErrorBody {
            guard !body.isEmpty, body.count <= maximumBytes else { return ErrorBody() }
            let data = Data(body)
            guard (try? StrictJSON.requireUniqueMemberNames(data)) != nil,
                let parsed = try? JSONDecoder().decode(ErrorBody.self, from: data)
            else { return ErrorBody() }
            return parsed
        }
    }
}
