import Foundation

/// An HTTP answer as the transport received it.
public struct HTTPAnswer: Sendable, Hashable {
    /// The largest body kept (1 MiB); the transport stops reading after it and sets ``bodyWasCutOff``.
    public static let maximumBodyBytes = PendingOperationsDecoder.maximumBodyBytes
    /// The largest answer head read (64 KiB, interim heads included): a backend's answers carry a
    /// few short fields. A longer head is refused as not HTTP.
    public static let maximumHeadBytes = 64 * 1024

    public let status: Int
    /// Header fields with lowercased names (HTTP field names are case-insensitive); a repeated
    /// field is joined with ", " as RFC 9110 §5.3 allows.
    public let headers: [String: String]
    /// The body, at most ``maximumBodyBytes`` bytes.
    public let body: Data
    /// The body was longer than ``maximumBodyBytes`` and was not read to its end.
    public let bodyWasCutOff: Bool

    public init(status: Int, headers: [String: String] = [:], body: Data = Data(), bodyWasCutOff: Bool = false) {
        self.status = status
        var normalized: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            normalized[key] = normalized[key].map { $0 + ", " + value } ?? value
        }
        self.headers = normalized
        self.body = body.count > Self.maximumBodyBytes ? body.prefix(Self.maximumBodyBytes) : body
        self.bodyWasCutOff = bodyWasCutOff || body.count > Self.maximumBodyBytes
    }

    /// The transport's fast path: `headers` already have lowercased names with repeated fields
    /// joined (as the public initialiser would make them), so they are kept as they are.
    package init(status: Int, lowercasedHeaders headers: [String: String], body: Data, bodyWasCutOff: Bool) {
        self.status = status
        self.headers = headers
        self.body = body.count > Self.maximumBodyBytes ? body.prefix(Self.maximumBodyBytes) : body
        self.bodyWasCutOff = bodyWasCutOff || body.count > Self.maximumBodyBytes
    }

    /// The value of the header field `name` (any case), or nil.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
