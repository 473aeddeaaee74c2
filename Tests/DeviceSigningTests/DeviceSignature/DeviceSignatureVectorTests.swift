import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Vectors/device-signature.json: known answers derived independently (Python), checked through
/// `DeviceSignatureVectors` (also run by `fetchchannel vectors verify`): the fixture key is the
/// RFC 7515 A.3 key marked TEST ONLY; the signer reproduces every positive case byte for byte;
/// the verifier accepts them and gives every verification case its expected outcome. Each
/// failure names the case.
@Suite struct DeviceSignatureVectorTests {
    typealias F = DeviceSignatureFixtures

    @Test func everyCaseHolds() throws {
        let data = try F.vectorData()
        let report = DeviceSignatureVectors.check(data)
        report.recordFailures()
        let vectors = try DeviceSignatureVectors.decode(data)
        #expect(vectors.positive.count >= DeviceSignatureVectors.minimumPositiveCases)
        #expect(
            vectors.verification.filter { $0.expected != "ACCEPT" }.count >= DeviceSignatureVectors.minimumRejections)
        #expect(report.casesChecked == vectors.positive.count + vectors.verification.count)
    }

    @Test func fixtureKeyIsTheRFC7515ExampleKey() throws {
        let vectors = try F.loadVectors()
        #expect(vectors.key.x == "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
        #expect(vectors.key.y == "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        let key = try F.fixtureKey()
        #expect(key.publicKey.jwk.x == vectors.key.x && key.publicKey.jwk.y == vectors.key.y)
    }
}
