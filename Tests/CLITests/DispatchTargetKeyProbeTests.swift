import DeviceSigning
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelCLI

/// `rotate`'s key probe reads an encrypted answer by the rules `fetch` reads it with: the two
/// never disagree on whether a backend accepted a key.
@Suite struct DispatchTargetKeyProbeTests {
    private static let operations = Data(#"{"operations":[]}"#.utf8)

    private static func joseAnswer(_ body: Data, contentType: String = WireMediaType.joseUTF8)
        -> BackendHTTPClient.Answer
    {
        BackendHTTPClient.Answer(status: 200, body: body, headers: ["content-type": contentType])
    }

    @Test func anEncryptedAnswerEndedByALineEndIsAnOperationsAnswer() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Self.operations, to: key.publicKey)
        let answer = Self.joseAnswer(Data((compact + "\r\n").utf8))
        #expect(DispatchTargetKeyProbe.isOperationsAnswer(answer, decryptionKey: key))
    }

    @Test func aPlainAnswerToARequestForAnEncryptedOneIsNot() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let plain = BackendHTTPClient.Answer(
            status: 200, body: Self.operations, headers: ["content-type": WireMediaType.json])
        #expect(!DispatchTargetKeyProbe.isOperationsAnswer(plain, decryptionKey: key))
    }

    @Test func anAnswerForAnotherKeyIsNot() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Self.operations, to: try P256.KeyAgreement.PrivateKey().publicKey)
        #expect(!DispatchTargetKeyProbe.isOperationsAnswer(Self.joseAnswer(Data(compact.utf8)), decryptionKey: key))
    }

    @Test func aPlainAnswerToARequestForJSONIs() {
        let plain = BackendHTTPClient.Answer(
            status: 200, body: Self.operations, headers: ["content-type": WireMediaType.json])
        #expect(DispatchTargetKeyProbe.isOperationsAnswer(plain, decryptionKey: nil))
    }

    /// As `fetch`: without a JSON Content-Type (none, text, a JWE's) it is not an answer.
    @Test(arguments: [nil, "text/plain", WireMediaType.joseUTF8, "application/jose+json"])
    func anAnswerThatDoesNotSayJSONIsNot(contentType: String?) {
        let answer = BackendHTTPClient.Answer(
            status: 200, body: Self.operations, headers: contentType.map { ["content-type": $0] } ?? [:])
        #expect(!DispatchTargetKeyProbe.isOperationsAnswer(answer, decryptionKey: nil))
    }
}
