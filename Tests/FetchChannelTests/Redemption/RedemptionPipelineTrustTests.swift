import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

extension Practices {
    /// The pipeline redeems with the trust of the backend an operation came from: a backend
    /// registered with a private CA and pins is redeemed against them, as it is fetched from
    /// (docs/ARCHITECTURE.md, "Transport and trust"). Real handshakes with the reference backend
    /// over TLS on loopback.
    @Suite(.dedicatedThread) struct RedemptionPipelineTrustTests {
        /// A pin of no key the backend has: 32 zero bytes.
        static let wrongPin = "sha256//" + Data(count: 32).base64EncodedString()

        /// A device registered on `backend` (over TLS) whose registration trusts its generated CA
        /// and `pins` (the backend's own pin when nil).
        static func registration(
            on backend: ReferenceBackend, deviceId: String,
            pins: [String]? = nil
        ) throws -> FetchRegistration {
            let authority = try #require(backend.tlsCertificateAuthorityPEM)
            let pin = try #require(backend.tlsPin)
            let trust = try TLSTrust(anchors: .pemBundle(Data(authority.utf8)), pins: pins ?? [pin])
            let key = try P256.Signing.PrivateKey()
            let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
            return FetchRegistration(
                server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key,
                trust: trust)
        }

        @Test func anOperationOfABackendOnAPrivateCAIsRedeemedThroughThePipeline() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let registration = try Self.registration(on: backend, deviceId: "private-ca-device")
            let pushed = try backend.dispatch(
                deviceId: registration.deviceId,
                channel: DispatchChannel.pushNotification.wireValue)
            let linked = try backend.dispatch(deviceId: registration.deviceId, channel: DispatchChannel.link.wireValue)
            let pipeline = RedemptionPipeline(redeemer: RedemptionClient(registrations: [registration]))

            // Fetched over TLS with the registration's trust, then redeemed through the pipeline.
            let fetched = await FetchClient().pendingOutOfBandOperations([registration])
            #expect(fetched.errors.isEmpty, "\(fetched.errors.map(\.message))")
            let operation = try #require(fetched.operations.first { $0.token == pushed.token })
            let report = await pipeline.redeem(operation)
            #expect(report.code == "redeemed", "\(report)")

            // An operation that arrives by a link, never fetched: the same backend, the same trust.
            let payload = PendingOutOfBandOperation.Payload(
                contentType: "application/json", version: "1",
                redeemData: .init(token: linked.token, redeemUrl: linked.redeemURL))
            let linkReport = await pipeline.redeem(payload)
            #expect(linkReport.code == "redeemed", "\(linkReport)")
            #expect(backend.statistics.redemptions[pushed.token] == 1)
            #expect(backend.statistics.redemptions[linked.token] == 1)
        }

        @Test func aPinMismatchAtRedeemIsATypedErrorAndReleasesTheOperation() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let registration = try Self.registration(on: backend, deviceId: "wrong-pin-device", pins: [Self.wrongPin])
            let dispatched = try backend.dispatch(
                deviceId: registration.deviceId,
                channel: DispatchChannel.pushNotification.wireValue)
            let payload = PendingOutOfBandOperation.Payload(
                contentType: "application/json", version: "1",
                redeemData: .init(token: dispatched.token, redeemUrl: dispatched.redeemURL))
            let pipeline = RedemptionPipeline(redeemer: RedemptionClient(registrations: [registration]))

            let report = await pipeline.redeem(payload)
            guard case .released(let identity, .networkError(_, let cause)) = report else {
                Issue.record("expected released with a networkError, got \(report)")
                return
            }
            #expect(cause.kind == .tlsPinMismatch, "\(cause)")
            #expect(cause.detail.contains(Self.wrongPin), "the message names the pins to check: \(cause.detail)")
            #expect(await pipeline.state(of: identity) == .unseen, "released: the person can try again")
            #expect(backend.statistics.redemptions[dispatched.token] == nil, "the token never reached the backend")
        }
    }
}
