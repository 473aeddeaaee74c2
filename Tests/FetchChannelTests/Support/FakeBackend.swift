import DeviceSigning
import FetchChannelWire
import Foundation

@testable import FetchChannel

/// A backend in a closure: it checks the Device-Signature as the real backend does (the
/// project's `DeviceSignatureVerifier`, with the backend's own clock) and answers like the
/// emulator: 200 with the operations, or 401/400 with the rejection's `errorCode` (and
/// `serverTimeInEpochMillis` for clock skew); every answer has a `Date` from the backend's clock.
final class FakeBackend: Sendable {
    let base: String
    let serverClock: ManualWallClock
    let verifier: DeviceSignatureVerifier
    private let operations: Locked<[String]>

    init(
        base: String, key: P256.Signing.PublicKey, dispatchTargetId: String, serverMillis: Int64,
        toleranceMillis: Int64 = 60_000, operations: [String] = []
    ) throws {
        self.base = base
        serverClock = ManualWallClock(millis: serverMillis)
        verifier = try DeviceSignatureVerifier(toleranceMillis: toleranceMillis, clock: serverClock) { id in
            id == dispatchTargetId ? key : nil
        }
        self.operations = Locked(operations)
    }

    func answer(_ request: TransportRequest) -> TransportResult {
        let date = HTTPDate.format(millis: serverClock.nowMillis())
        guard let header = request.headers[DeviceSignatureSigner.headerName] else {
            return .answer(
                HTTPAnswer(status: 400, headers: ["Date": date], body: Data(#"{"errorCode":"MALFORMED_REQUEST"}"#.utf8))
            )
        }
        switch verifier.verify(header) {
        case .success:
            let body = #"{"operations":[\#(operations.withLock { $0.joined(separator: ",") })]}"#
            return .answer(
                HTTPAnswer(
                    status: 200, headers: ["Date": date, "Content-Type": "application/json"], body: Data(body.utf8)))
        case .failure(let rejection):
            var body = #"{"errorCode":"\#(rejection.code)""#
            if case .clockSkewTooBig(let serverTime, _) = rejection {
                body += #","serverTimeInEpochMillis":\#(serverTime)"#
            }
            body += "}"
            return .answer(
                HTTPAnswer(
                    status: rejection.httpStatus.code, headers: ["Date": date, "Content-Type": "application/json"],
                    body: Data(body.utf8)))
        }
    }

    static func operation(_ time: Int64, _ channel: String, _ token: String, server: String = "https://backend.example")
        -> String
    {
        #"{"creationTimeInEpochMillis":\#(time),"dispatchChannel":"\#(channel)","payload":{"contentType":"application/json","version":"1","redeemData":{"token":"\#(token)","redeemUrl":"\#(server)/nevisfido/token/redeem/authentication"}}}"#
    }
}
