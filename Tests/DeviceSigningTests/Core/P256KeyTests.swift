import Foundation
import Testing

@testable import DeviceSigning

@Suite struct P256KeyTests {
    let message = Array("device-signing core".utf8)

    func bytes(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    @Test func generatedKeySignsAndVerifies() throws {
        let key = try P256.Signing.PrivateKey()
        let signature = try key.signature(for: message)
        #expect(signature.rawRepresentation.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("other".utf8)))
        #expect(try !P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: message))
    }

    @Test func signaturesAreRandomized() throws {
        let key = try P256.Signing.PrivateKey()
        #expect(try key.signature(for: message) != key.signature(for: message))
    }

    @Test func privateKeyRoundTripsEveryRepresentation() throws {
        let key = try P256.Signing.PrivateKey()
        let raw = try bytes(key.rawRepresentation)
        #expect(raw.count == 32)
        let fromRaw = try P256.Signing.PrivateKey(rawRepresentation: raw)
        let fromX963 = try P256.Signing.PrivateKey(x963Representation: bytes(key.x963Representation))
        let fromDER = try P256.Signing.PrivateKey(derRepresentation: bytes(key.derRepresentation))
        let fromPEM = try P256.Signing.PrivateKey(
            pemRepresentation: String(decoding: bytes(key.pemRepresentation), as: UTF8.self))
        let fromPEMBytes = try P256.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
        let fromJWK = try P256.Signing.PrivateKey(
            jwkRepresentation: bytes(key.jwkRepresentation(includingPrivateKey: true)))
        for other in [fromRaw, fromX963, fromDER, fromPEM, fromPEMBytes, fromJWK] {
            #expect(other.publicKey == key.publicKey)
            #expect(try bytes(other.rawRepresentation) == raw)
            #expect(try other.publicKey.isValidSignature(key.signature(for: message), for: message))
        }
    }

    @Test func publicKeyRoundTripsEveryRepresentation() throws {
        let key = try P256.Signing.PrivateKey().publicKey
        #expect(key.rawRepresentation.count == 64)
        #expect(key.x963Representation.count == 65)
        #expect(key.compressedRepresentation.count == 33)
        let copies = try [
            P256.Signing.PublicKey(rawRepresentation: key.rawRepresentation),
            P256.Signing.PublicKey(x963Representation: key.x963Representation),
            P256.Signing.PublicKey(compressedRepresentation: key.compressedRepresentation),
            P256.Signing.PublicKey(derRepresentation: key.derRepresentation),
            P256.Signing.PublicKey(pemRepresentation: key.pemRepresentation),
            P256.Signing.PublicKey(jwk: key.jwk),
            JWK(jsonRepresentation: Array(key.jwk.jsonString.utf8)).publicKey(),
        ]
        for copy in copies { #expect(copy == key) }
    }

    /// Every `Data` a key or signature hands out is indexed from zero, as callers take `[0..<32]`
    /// for x (a slice of the 0x04 || x || y encoding starts at 1 and traps there).
    @Test func representationsAreIndexedFromZero() throws {
        let signing = try P256.Signing.PrivateKey()
        let agreement = try P256.KeyAgreement.PrivateKey()
        let signature = try signing.signature(for: message)
        let representations: [(String, Data)] = [
            ("signing raw", signing.publicKey.rawRepresentation),
            ("signing x963", signing.publicKey.x963Representation),
            ("signing compressed", signing.publicKey.compressedRepresentation),
            ("signing der", signing.publicKey.derRepresentation),
            ("agreement raw", agreement.publicKey.rawRepresentation),
            ("agreement x963", agreement.publicKey.x963Representation),
            ("agreement compressed", agreement.publicKey.compressedRepresentation),
            ("agreement der", agreement.publicKey.derRepresentation),
            ("signature raw", signature.rawRepresentation),
            ("signature der", signature.derRepresentation),
            (
                "signature from a slice",
                try P256.Signing.ECDSASignature(
                    rawRepresentation: (Data([0]) + signature.rawRepresentation).dropFirst()
                )
                .rawRepresentation
            ),
        ]
        for (name, data) in representations {
            #expect(data.startIndex == 0, "\(name)")
        }
    }

    @Test func sec1PrivateKeyImports() throws {
        // RFC 9421 test-key-ecc-p256 is SEC1 ("EC PRIVATE KEY").
        let key = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("rfc9421-test-key-ecc-p256.pem"))
        let expected = try P256.Signing.PublicKey(
            pemRepresentation: """
                -----BEGIN PUBLIC KEY-----
                MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lf
                w0EkjqF7xB4FivAxzic30tMM4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ==
                -----END PUBLIC KEY-----
                """)
        #expect(key.publicKey == expected)
    }

    @Test func fixtureKeysMatchTheirRFCs() throws {
        let rfc6979 = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("rfc6979-a25-p256.pem"))
        #expect(
            try bytes(rfc6979.rawRepresentation)
                == TestSupport.hex("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721"))
        let rfc7515 = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("rfc7515-a3-p256.pem"))
        #expect(
            rfc7515.publicKey.jwk
                == JWK(
                    x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"))
        _ = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("demo-device-p256.pem"))
    }

    @Test func jwkThumbprintFollowsRFC7638() throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("rfc7515-a3-p256.pem")).publicKey
        // Canonical form: members crv, kty, x, y in lexicographic order, no whitespace.
        let canonical =
            #"{"crv":"P-256","kty":"EC","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#
        #expect(key.jwk.thumbprintInput == canonical)
        let digest = Array(canonical.utf8).withUnsafeBytes { P256Backend.sha256($0) }
        let expected = Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(key.jwkThumbprint == expected)
        #expect(key.jwkThumbprint.count == 43)
    }

    @Test func privateJWKOnlyOnRequest() throws {
        let key = try P256.Signing.PrivateKey()
        let publicJSON = String(decoding: try bytes(key.jwkRepresentation(includingPrivateKey: false)), as: UTF8.self)
        #expect(!publicJSON.contains("\"d\""))
        let privateJSON = String(decoding: try bytes(key.jwkRepresentation(includingPrivateKey: true)), as: UTF8.self)
        #expect(privateJSON.contains("\"d\""))
    }

    @Test(arguments: [
        ("zero scalar", [UInt8](repeating: 0, count: 32)),
        ("order n", TestSupport.hex("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")),
        ("all ones", [UInt8](repeating: 0xFF, count: 32)),
        ("31 bytes", [UInt8](repeating: 1, count: 31)),
        ("33 bytes", [UInt8](repeating: 1, count: 33)),
        ("empty", []),
    ])
    func invalidScalarsAreRefused(_ name: String, _ scalar: [UInt8]) {
        #expect(throws: DeviceSigningError(.invalidKey, "")) { try P256.Signing.PrivateKey(rawRepresentation: scalar) }
    }

    @Test func invalidPublicPointsAreRefused() throws {
        let valid = try P256.Signing.PrivateKey().publicKey.x963Representation
        var offCurve = Array(valid)
        offCurve[64] ^= 1
        let infinity: [UInt8] = [0x00]
        let compressed = try P256.Signing.PrivateKey().publicKey.compressedRepresentation
        let cases: [[UInt8]] = [
            offCurve, infinity, [UInt8](repeating: 0, count: 65), Array(valid.dropLast()), Array(compressed),
            [0x05] + Array(valid.dropFirst()),
        ]
        for point in cases {
            #expect(throws: DeviceSigningError(.invalidKey, ""), "\(point)") {
                try P256.Signing.PublicKey(x963Representation: point)
            }
        }
        // A compressed point only through the explicit constructor.
        #expect(throws: DeviceSigningError(.invalidKey, "")) {
            try P256.Signing.PublicKey(x963Representation: compressed)
        }
        #expect(throws: DeviceSigningError(.invalidKey, "")) {
            try P256.Signing.PublicKey(compressedRepresentation: [0x02] + [UInt8](repeating: 0xFF, count: 32))
        }
    }

    /// OpenSSL decodes an EC SubjectPublicKeyInfo whose point is the point at infinity (a BIT
    /// STRING of one zero byte); it is an invalid key, not an OpenSSL failure.
    @Test func aPublicKeyAtInfinityIsAnInvalidKey() {
        let algorithm: [UInt8] = [
            0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
            0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07,
        ]
        // The DER spelling, and one with seven unused bits that OpenSSL decodes the same way.
        for last in [[0x03, 0x02, 0x00, 0x00], [0x03, 0x02, 0x07, 0x00]] as [[UInt8]] {
            let infinity: [UInt8] = [0x30, 0x19] + algorithm + last
            #expect(throws: DeviceSigningError(.invalidKey, "")) {
                try P256.Signing.PublicKey(derRepresentation: infinity)
            }
        }
    }

    /// The point of a DER public key in hybrid form (06/07: the uncompressed point with y's parity
    /// in the prefix) decodes in OpenSSL; like every other import, this one refuses it.
    @Test func aPublicKeyInHybridFormIsAnInvalidKey() throws {
        let key = try P256.Signing.PrivateKey().publicKey
        var der = [UInt8](key.derRepresentation)
        let prefixOffset = der.count - 65
        #expect(der[prefixOffset] == 0x04)
        der[prefixOffset] = 0x06 | (der[der.count - 1] & 1)
        #expect(throws: DeviceSigningError(.invalidKey, "")) { try P256.Signing.PublicKey(derRepresentation: der) }
        #expect(try P256.Signing.PublicKey(derRepresentation: key.derRepresentation) == key, "the uncompressed form")
    }

    @Test func garbageEncodingsAreTypedErrors() {
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(derRepresentation: [0x30, 0x03, 0x02, 0x01, 0x01])
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PublicKey(derRepresentation: [UInt8](repeating: 0x41, count: 100))
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(pemRepresentation: "not a key")
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(
                pemRepresentation: "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n")
        }
        #expect(throws: DeviceSigningError(.passphraseRequired, "")) {
            try P256.Signing.PrivateKey(
                pemRepresentation: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
        }
        #expect(throws: DeviceSigningError(.passphraseRequired, "")) {
            try P256.KeyAgreement.PrivateKey(
                pemRepresentation: SecureBytes(
                    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8))
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.KeyAgreement.PrivateKey(pemRepresentation: SecureBytes("not a key".utf8))
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) { try JWK(jsonRepresentation: Array("[]".utf8)) }
        #expect(throws: DeviceSigningError(.unsupportedCurve, "")) {
            try JWK(jsonRepresentation: Array(#"{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}"#.utf8))
        }
        #expect(throws: DeviceSigningError(.unsupportedKeyType, "")) {
            try JWK(jsonRepresentation: Array(#"{"kty":"RSA","crv":"P-256","x":"AA","y":"AA"}"#.utf8))
        }
    }

    /// The PKCS#8 the package writes: the fixed 138-byte layout OpenSSL writes for a P-256 key
    /// (no parameters inside the ECPrivateKey, the uncompressed public key included).
    @Test func pkcs8ExportIsTheFixedP256Layout() throws {
        let key = try P256.Signing.PrivateKey()
        let der = try bytes(key.derRepresentation)
        let head = TestSupport.hex(
            "308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420")
        #expect(der.count == 138)
        #expect(Array(der[0..<36]) == head)
        #expect(Array(der[36..<68]) == (try bytes(key.rawRepresentation)))
        #expect(Array(der[68..<73]) == [0xA1, 0x44, 0x03, 0x42, 0x00])
        #expect(Array(der[73...]) == Array(key.publicKey.x963Representation))
    }

    /// A P-256 PKCS#8 PrivateKeyInfo around `ecPrivateKey` (DER, lengths in their shortest form).
    func pkcs8(wrapping ecPrivateKey: [UInt8]) -> [UInt8] {
        let algorithm = TestSupport.hex("301306072a8648ce3d020106082a8648ce3d030107")
        let octets = [0x04, UInt8(ecPrivateKey.count)] + ecPrivateKey
        let content = [0x02, 0x01, 0x00] + algorithm + octets
        return (content.count < 128 ? [0x30] : [0x30, 0x81]) + [UInt8(content.count)] + content
    }

    @Test func ecPrivateKeysAreReadStrictly() throws {
        let key = try P256.Signing.PrivateKey()
        let scalar = try bytes(key.rawRepresentation)
        let point = Array(key.publicKey.x963Representation)
        let publicPart = [0xA1, 0x44, 0x03, 0x42, 0x00] + point
        let p256 = TestSupport.hex("a00a06082a8648ce3d030107")
        func ecPrivateKey(_ scalar: [UInt8], _ rest: [UInt8]) -> [UInt8] {
            let content = [0x02, 0x01, 0x01, 0x04, UInt8(scalar.count)] + scalar + rest
            return [0x30, UInt8(content.count)] + content
        }
        // SEC1 naming its curve, with or without the public key; PKCS#8 with or without it.
        for der in [
            ecPrivateKey(scalar, p256 + publicPart), ecPrivateKey(scalar, p256),
            pkcs8(wrapping: ecPrivateKey(scalar, [])), pkcs8(wrapping: ecPrivateKey(scalar, p256 + publicPart)),
        ] {
            #expect(try P256.Signing.PrivateKey(derRepresentation: der).publicKey == key.publicKey)
        }
        // SEC1 that names no curve: nothing says it is P-256.
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(derRepresentation: ecPrivateKey(scalar, publicPart))
        }
        // A public key that is not the scalar's own: another key's, or the point's compressed form flipped.
        let other = Array(try P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(throws: DeviceSigningError(.invalidKey, "")) {
            try P256.Signing.PrivateKey(
                derRepresentation: pkcs8(wrapping: ecPrivateKey(scalar, [0xA1, 0x44, 0x03, 0x42, 0x00] + other)))
        }
        let compressed = [0x02 | (point[64] & 1)] + point[1..<33]
        let flipped = [compressed[0] ^ 1] + compressed[1...]
        #expect(
            try P256.Signing.PrivateKey(
                derRepresentation: ecPrivateKey(scalar, p256 + [0xA1, 0x24, 0x03, 0x22, 0x00] + compressed)
            ).publicKey == key.publicKey)
        #expect(throws: DeviceSigningError(.invalidKey, "")) {
            try P256.Signing.PrivateKey(
                derRepresentation: ecPrivateKey(scalar, p256 + [0xA1, 0x24, 0x03, 0x22, 0x00] + flipped))
        }
        // A scalar of 0, or of n (the group order): outside [1, n-1].
        let order = TestSupport.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        for bad in [[UInt8](repeating: 0, count: 32), order] {
            #expect(throws: DeviceSigningError(.invalidKey, "")) {
                try P256.Signing.PrivateKey(derRepresentation: ecPrivateKey(bad, p256))
            }
        }
        // Version 2, a 33-byte scalar: not an ECPrivateKey of P-256.
        var version2 = ecPrivateKey(scalar, p256)
        version2[4] = 2
        for der in [version2, ecPrivateKey([0] + scalar, p256)] {
            #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
                try P256.Signing.PrivateKey(derRepresentation: der)
            }
        }
    }

    /// BER spellings of a DER key (a length in more octets than it needs, an indefinite length, a
    /// tag in the long form) are refused: each structure is read in its one DER form.
    @Test func berSpellingsOfAKeyAreRefused() throws {
        let key = try P256.Signing.PrivateKey()
        let der = try bytes(key.derRepresentation)  // 30 81 87 <135 bytes>
        #expect(try P256.Signing.PrivateKey(derRepresentation: der).publicKey == key.publicKey)
        let pkcs8Content = Array(der[3...])
        let scalar = try bytes(key.rawRepresentation)
        let curve = TestSupport.hex("a00a06082a8648ce3d030107")
        func sec1(outer: [UInt8], scalarHead: [UInt8]) -> [UInt8] {
            let content = [0x02, 0x01, 0x01] + scalarHead + scalar + curve
            return outer + [UInt8(content.count)] + content
        }
        let sec1Valid = sec1(outer: [0x30], scalarHead: [0x04, 0x20])
        #expect(try P256.Signing.PrivateKey(derRepresentation: sec1Valid).publicKey == key.publicKey)
        // The PKCS#8 key octets with their length in two octets: the outer length grows by one.
        let innerLong = [0x02, 0x01, 0x00] + Array(der[6..<27]) + [0x04, 0x81] + Array(der[28...])
        let spellings: [(String, [UInt8])] = [
            ("PKCS#8, outer length in three octets", [0x30, 0x82, 0x00, 0x87] + pkcs8Content),
            ("PKCS#8, indefinite outer length", [0x30, 0x80] + pkcs8Content + [0x00, 0x00]),
            ("PKCS#8, key octets' length in two octets", [0x30, 0x81, UInt8(innerLong.count)] + innerLong),
            ("SEC1, outer length in two octets", sec1(outer: [0x30, 0x81], scalarHead: [0x04, 0x20])),
            ("SEC1, scalar length in two octets", sec1(outer: [0x30], scalarHead: [0x04, 0x81, 0x20])),
            ("SEC1, outer tag in the long form", sec1(outer: [0x3F, 0x10], scalarHead: [0x04, 0x20])),
        ]
        for (name, spelling) in spellings {
            #expect(throws: DeviceSigningError(.malformedEncoding, ""), "\(name)") {
                try P256.Signing.PrivateKey(derRepresentation: spelling)
            }
        }
    }

    /// Encoders that drop a scalar's leading zero bytes (an OCTET STRING shorter than 32) still
    /// give the same key.
    @Test func aScalarWithoutItsLeadingZeroIsPadded() throws {
        var scalar = [UInt8](repeating: 0, count: 32)
        scalar[1] = 0x5A
        scalar[31] = 0x01
        let key = try P256.Signing.PrivateKey(rawRepresentation: scalar)
        let short = Array(scalar.drop { $0 == 0 })
        #expect(short.count == 31)
        let content = [0x02, 0x01, 0x01, 0x04, UInt8(short.count)] + short
        let der = pkcs8(wrapping: [0x30, UInt8(content.count)] + content)
        #expect(try P256.Signing.PrivateKey(derRepresentation: der).publicKey == key.publicKey)
    }

    @Test func derWithTrailingBytesIsRefused() throws {
        let key = try P256.Signing.PrivateKey()
        let der = try bytes(key.derRepresentation)
        #expect(throws: DeviceSigningError.self) { try P256.Signing.PrivateKey(derRepresentation: der + [0]) }
        #expect(throws: DeviceSigningError.self) { try P256.Signing.PrivateKey(derRepresentation: der.dropLast()) }
        let spki = Array(key.publicKey.derRepresentation)
        #expect(throws: DeviceSigningError.self) { try P256.Signing.PublicKey(derRepresentation: spki + [0]) }
    }

    @Test func otherCurvesAndAlgorithmsAreRefused() throws {
        // P-384 SPKI and an Ed25519 SPKI (both well-formed) must give typed errors.
        let p384 = TestSupport.hex(
            "3076301006072a8648ce3d020106052b81040022036200044e83469de43c02914c99bc628bc42e5c0f223fd246b633823b51882877c8c4fca160081c1bfceba59362e71f59ff01278ece9d60a5e4afdcebe3c42ab88f96b263c201ecd244bef517de1e814ba784cb04e5fe8ec475cd99d272e07960c0a559"
        )
        let ed25519 = TestSupport.hex(
            "302a300506032b6570032100d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(throws: DeviceSigningError(.unsupportedCurve, "")) {
            try P256.Signing.PublicKey(derRepresentation: p384)
        }
        #expect(throws: DeviceSigningError(.unsupportedKeyType, "")) {
            try P256.Signing.PublicKey(derRepresentation: ed25519)
        }
    }

    @Test func descriptionsCarryNoKeyMaterial() throws {
        let key = try P256.Signing.PrivateKey()
        let scalar = try bytes(key.rawRepresentation)
        let forms = [
            TestSupport.hexString(scalar),
            TestSupport.hexString(scalar).uppercased(),
            Data(scalar).base64EncodedString(),
            Base64.encode(scalar, alphabet: .url),
        ]
        let texts = [
            key.description, key.debugDescription, String(describing: key), String(reflecting: key),
            "\(try key.rawRepresentation)", "\(try key.derRepresentation)",
        ]
        for text in texts {
            for form in forms { #expect(!text.contains(form), "description leaks the scalar: \(text)") }
        }
        #expect(key.description.contains(key.publicKey.jwkThumbprint))
    }
}
