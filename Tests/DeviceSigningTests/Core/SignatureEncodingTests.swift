import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

@Suite struct SignatureEncodingTests {
    @Test func rawAndDERRoundTrip() throws {
        let key = try P256.Signing.PrivateKey()
        for _ in 0..<50 {
            let signature = try key.signature(for: [1, 2, 3])
            let der = signature.derRepresentation
            let back = try P256.Signing.ECDSASignature(derRepresentation: der)
            #expect(back == signature)
            #expect(key.publicKey.isValidSignature(back, for: [1, 2, 3]))
        }
    }

    @Test(arguments: [0, 1, 63, 65, 128])
    func rawMustBeExactly64Bytes(_ length: Int) {
        #expect(throws: DeviceSigningError(.malformedSignature, "")) {
            try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 1, count: length))
        }
    }

    @Test func derMustBeStrict() throws {
        // A fixed signature with a 32-byte r whose top bit is clear (so that setting it makes r
        // negative): a random one is so about half of the time, and the negative-r case then ran
        // only in those runs.
        let rawSignature = [UInt8](repeating: 0x11, count: 32) + [UInt8](repeating: 0x22, count: 32)
        let der = Array(try P256.Signing.ECDSASignature(rawRepresentation: rawSignature).derRepresentation)
        try #require(der.count == 70 && der[3] == 0x20 && der[4] & 0x80 == 0, "\(der)")
        #expect(try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation == Data(rawSignature))
        var longLength = der
        longLength.insert(0x81, at: 1)  // BER long-form length for a short length
        var negativeR = der
        negativeR[4] |= 0x80  // top bit of r's first content byte: negative unless padded
        let cases: [(String, [UInt8])] = [
            ("trailing byte", der + [0]),
            ("truncated", Array(der.dropLast())),
            ("long-form length", longLength),
            ("indefinite length", [0x30, 0x80] + der.dropFirst(2) + [0, 0]),
            ("empty", []),
            ("sequence of one integer", [0x30, 0x03, 0x02, 0x01, 0x01]),
            ("padded integer", [0x30, 0x08, 0x02, 0x02, 0x00, 0x01, 0x02, 0x02, 0x00, 0x01]),
            ("33-byte r", [0x30, 0x26, 0x02, 0x21, 0x01] + [UInt8](repeating: 0x11, count: 32) + [0x02, 0x01, 0x01]),
        ]
        for (name, bytes) in cases + [("negative r", negativeR)] {
            #expect(throws: DeviceSigningError(.malformedSignature, ""), "\(name) must be refused") {
                try P256.Signing.ECDSASignature(derRepresentation: bytes)
            }
        }
    }

    /// Vectors/rfc6979-p256.json through `RFC6979Vectors` (also run by `fetchchannel vectors
    /// verify`): the RFC's point belongs to its scalar; each case verifies or not as it says.
    @Test func rfc6979VectorsVerify() throws {
        let data = try TestSupport.vectorFile(RFC6979Vectors.fileName)
        let report = RFC6979Vectors.check(data)
        report.recordFailures()
        let file = try RFC6979Vectors.decode(data)
        #expect(file.cases.count >= RFC6979Vectors.minimumCases)
        #expect(report.casesChecked == file.cases.count)
    }
}
