import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannel

/// ``TLSTrust`` is validated when it is made: a pin libcurl could never match, or a bundle
/// without a certificate, is an error at configuration time, not a failed connection later.
@Suite(.dedicatedThread) struct TLSTrustTests {
    static let goodPin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()

    @Test func systemIsTheDefault() throws {
        #expect(TLSTrust.system.anchors == .system)
        #expect(TLSTrust.system.pins.isEmpty)
        #expect(try TLSTrust() == .system)
        #expect(TLSTrust.system.description == "the system CAs")
        let registration = FetchRegistration(
            server: URL(string: "https://backend.example")!, deviceId: "d",
            dispatchTargetId: "t", key: try P256.Signing.PrivateKey())
        #expect(registration.trust == .system)
    }

    @Test func wellFormedPinsAreKeptInOrder() throws {
        let other = "sha256//" + Data(repeating: 9, count: 32).base64EncodedString()
        let trust = try TLSTrust(anchors: .pemFile(path: "/etc/backend-ca.pem"), pins: [Self.goodPin, other])
        #expect(trust.pins == [Self.goodPin, other])
        #expect(trust.description == "the CA file /etc/backend-ca.pem, pinned to \(Self.goodPin), \(other)")
    }

    @Test(arguments: [
        "", "sha256//", "sha1//" + Data(count: 20).base64EncodedString(),
        "SHA256//" + Data(count: 32).base64EncodedString(),
        "sha256//" + Data(count: 31).base64EncodedString(), "sha256//" + Data(count: 33).base64EncodedString(),
        "sha256//" + Data(count: 32).base64EncodedString().dropLast(),
        "sha256// " + Data(count: 32).base64EncodedString(),
        "sha256//" + Data(count: 32).base64EncodedString() + ";sha256//x",
        // Not canonical: the last character carries bits that a 32-byte value cannot have.
        "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=",
        "sha256//" + Data(count: 32).base64EncodedString().replacingOccurrences(of: "A", with: "-"),
    ])
    func malformedPinsAreRefused(_ pin: String) {
        #expect(throws: TLSTrustError(.invalidPin, reason: "")) { try TLSTrust(pins: [pin]) }
        #expect(!TLSTrust.isValidPin(pin))
    }

    @Test func tooManyPinsAreRefused() {
        let pins = Array(repeating: Self.goodPin, count: TLSTrust.maximumPinCount + 1)
        #expect(throws: TLSTrustError(.invalidPin, reason: "")) { try TLSTrust(pins: pins) }
    }

    @Test func bundlesMustHoldACertificateAndBeBounded() throws {
        #expect(throws: Self.invalidBundle) { try TLSTrust(anchors: .pemBundle(Data("not a certificate".utf8))) }
        let huge = Data("-----BEGIN CERTIFICATE-----\n".utf8) + Data(count: TLSTrust.maximumBundleBytes)
        #expect(throws: Self.invalidBundle) { try TLSTrust(anchors: .pemBundle(huge)) }
        let pem = Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8)
        #expect(try TLSTrust(anchors: .pemBundle(pem)).anchorsDescription == "the backend's CA bundle")
    }

    /// Errors compare by code only, so the reason given here does not matter.
    static let invalidBundle = TLSTrustError(.invalidCABundle, reason: "")
    static let invalidFile = TLSTrustError(.invalidCAFile, reason: "")

    @Test func caFilePathsMustBeCStrings() {
        #expect(throws: Self.invalidFile) { try TLSTrust.caFile("") }
        #expect(throws: Self.invalidFile) { try TLSTrust.caFile("/tmp/a\u{0}b") }
    }

    @Test func theErrorSaysHowToWriteAPin() {
        do {
            _ = try TLSTrust(pins: ["sha256//tooshort\r\n"])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidPin)
            #expect(error.reason.contains("sha256//"))
            #expect(!error.reason.contains("\r\n"), "control characters are not echoed")
        }
    }
}
