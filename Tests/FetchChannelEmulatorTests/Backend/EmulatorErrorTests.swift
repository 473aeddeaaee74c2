import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

/// The emulator's errors follow the package's one style (docs/ARCHITECTURE.md, "Errors"): a stable
/// code beside the reason, equality on the code.
@Suite(.dedicatedThread) struct EmulatorErrorTests {
    @Test func refusedControlCallsSayWhichKind() throws {
        let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: 1_700_000_000_000)))
        defer { backend.stop() }
        #expect(throws: EmulatorError(code: .invalidFault, reason: "")) {
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .status, status: 99))
        }
        let refused = #expect(throws: EmulatorError.self) { try backend.dispatch(deviceId: "", channel: "link") }
        #expect(refused?.code == .dispatchRefused)
        #expect(refused?.reason.contains("deviceId must be a non-empty string") == true)
        #expect(refused?.description.hasPrefix("dispatchRefused: ") == true)
    }

    @Test func aParseErrorsCodeIsTheStatusItAnswers() {
        let error = HTTPRequestParseError(431, "header section exceeds 8 bytes")
        #expect(error.code == HTTPStatus(431) && error.status == 431)
        #expect(error == HTTPRequestParseError(431, "another reason"))
        #expect(error.description == "431: header section exceeds 8 bytes")
    }

    @Test func anUnknownTargetIsCountedAsSuchButAnsweredAsAnInvalidSignature() {
        let unknown = DeviceSignatureRejection.unknownDispatchTarget("t1")
        let refusal = DeviceRequestRefusal.rejected(unknown)
        #expect(refusal.code.rawValue == unknown.code)
        #expect(refusal.response == BackendResponses.rejection(.invalidSignature))
        let foreign = DeviceRequestRefusal.foreignDispatchTarget("not yours")
        #expect(foreign.code == .foreignDispatchTarget && foreign.reason == "not yours")
        #expect(foreign.response.status == HTTPStatus.unauthorized.code)
    }

    @Test func aRefusalsCodeIsItsStatus() {
        let refusal = BackendResponses.Refusal(BackendResponses.malformed("bad"))
        #expect(refusal.code == .badRequest)
        #expect(refusal.reason.contains(WireErrorCode.malformedRequest.rawValue))
    }
}
