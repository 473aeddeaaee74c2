import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A device for backend tests: a key, a registered dispatch target, and a signer on a shared clock.
struct TestDevice {
    let deviceId: String
    let key: P256.Signing.PrivateKey
    let dispatchTargetId: String
    let signer: DeviceSignatureSigner

    init(deviceId: String, key: P256.Signing.PrivateKey, dispatchTargetId: String, signer: DeviceSignatureSigner) {
        self.deviceId = deviceId
        self.key = key
        self.dispatchTargetId = dispatchTargetId
        self.signer = signer
    }

    init(backend: ReferenceBackend, clock: any WallClock, deviceId: String = "device-\(UUID().uuidString.prefix(8))")
        throws
    {
        self.deviceId = deviceId
        key = try P256.Signing.PrivateKey()
        dispatchTargetId = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
        signer = try DeviceSignatureSigner(key: key, dispatchTargetId: dispatchTargetId, clock: clock)
    }
}

/// A small HTTP client over URLSession for the backend tests.
enum BackendClient {
    struct Answer {
        let status: Int
        let headers: [String: String]
        let body: Data

        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        var errorCode: String? { json["errorCode"] as? String }
        var operations: [[String: Any]] { (json["operations"] as? [[String: Any]]) ?? [] }
        var tokens: [String] {
            operations.compactMap {
                (($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String
            }
        }
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// A bound against a hang only, not a measure: under ThreadSanitizer on a two-core machine
    /// loaded by other builds, a request of `controlAPIFaultsAndStatistics` ran past 10 s.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        return URLSession(configuration: configuration)
    }()

    /// `POST /_emulator/dispatch` with `body`.
    static func dispatch(_ backend: ReferenceBackend, _ body: [String: Any]) async throws -> Answer {
        try await send("POST", backend.baseURL.appendingPathComponent("_emulator/dispatch"), json: body)
    }

    static func send(_ method: String, _ url: URL, json: Any? = nil, headers: [String: String] = [:]) async throws
        -> Answer
    {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    /// Where a dispatch target is rotated (PATCH).
    static func dispatchTargetURL(_ backend: ReferenceBackend, _ id: String) -> URL {
        backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets").appendingPathComponent(id)
    }

    static func fetch(_ backend: ReferenceBackend, _ device: TestDevice, signature: String? = nil) async throws
        -> Answer
    {
        let header = try signature ?? device.signer.headerValue()
        return try await send(
            "GET", backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)"),
            headers: [DeviceSignatureSigner.headerName: header])
    }

    /// Sends `request` exactly as written on a fresh connection and reads one answer.
    static func raw(_ backend: ReferenceBackend, _ request: String) async throws -> RawHTTPResponse {
        let port = backend.baseURL.port ?? 0
        return try await DedicatedThreads.run {
            let client = try RawHTTPClient(port: port)
            defer { client.close() }
            return try client.roundTrip(request)
        }
    }

    /// `POST path` with a body and the given header lines (each ending in CRLF), on a fresh connection.
    static func rawPost(
        _ backend: ReferenceBackend, _ path: String, body: String,
        headers: String
    ) async throws -> RawHTTPResponse {
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\(headers)\r\n"
        return try await raw(backend, head + body)
    }

    static func redeem(_ redeemURL: String, token: String) async throws -> Answer {
        guard let url = URL(string: redeemURL) else { throw URLError(.badURL) }
        return try await send("POST", url, json: ["token": token])
    }
}
