internal import CDeviceSigningShim
internal import COpenSSL
import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// Iteration counts above INT_MAX: OpenSSL takes them as `int`, so 2^31 would wrap negative and
/// OpenSSL would quietly use 2048 iterations. The shim refuses them in both directions, and the
/// Swift layer refuses them before the shim is reached.
@Suite(.dedicatedThread) struct PKCS8IterationCountTests {
    static let twoToThe31 = 1 << 31

    /// A DER EncryptedPrivateKeyInfo, PBES2 with PBKDF2-HMAC-SHA256 at `iterations`, AES-256-CBC,
    /// over 48 bytes of stand-in ciphertext (no passphrase opens it; the header is what counts).
    static func encryptedKeyInfo(iterations: Int, ivBytes: Int = 16, salt: [UInt8]? = nil) -> [UInt8] {
        let pbes2: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
        let pbkdf2: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
        let hmacSHA256: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x09, 0x05, 0x00]
        let aes256CBC: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2A]
        let salt = salt ?? tlv(0x04, [UInt8](repeating: 0x5A, count: 16))
        let kdfParameters = sequence(salt + integer(iterations) + sequence(hmacSHA256))
        let scheme = sequence(aes256CBC + tlv(0x04, [UInt8](repeating: 0xA5, count: ivBytes)))
        let algorithm = sequence(pbes2 + sequence(sequence(pbkdf2 + kdfParameters) + scheme))
        return sequence(algorithm + tlv(0x04, [UInt8](repeating: 0x3C, count: 48)))
    }

    static func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        var length = contents.count
        guard length >= 0x80 else { return [tag, UInt8(length)] + contents }
        var bytes: [UInt8] = []
        while length > 0 {
            bytes.insert(UInt8(length & 0xFF), at: 0)
            length >>= 8
        }
        return [tag, 0x80 | UInt8(bytes.count)] + bytes + contents
    }

    static func sequence(_ contents: [UInt8]) -> [UInt8] { tlv(0x30, contents) }

    /// A non-negative DER INTEGER (minimal, with a leading zero when the top bit is set).
    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func pem(iterations: Int) -> String {
        TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: encryptedKeyInfo(iterations: iterations))
    }

    /// The crafted structure is well-formed: at an ordinary count the passphrase is what fails.
    @Test func theCraftedFileIsWellFormed() throws {
        expectError(.wrongPassphrase) {
            try P256.Signing.PrivateKey(encryptedPEM: Self.pem(iterations: 2048), passphrase: secret("pass"))
        }
    }

    /// An AES IV that is not one 16-byte block is a malformed file, not a wrong passphrase.
    @Test(arguments: [8, 12, 15, 17, 32])
    func anIVOfAnotherLengthIsMalformed(ivBytes: Int) throws {
        let pem = TestPEM.pem(
            label: "ENCRYPTED PRIVATE KEY", der: Self.encryptedKeyInfo(iterations: 2048, ivBytes: ivBytes))
        let error = expectError(.malformedEncoding) {
            try P256.Signing.PrivateKey(encryptedPEM: pem, passphrase: secret("pass"))
        }
        #expect(error?.reason.contains("16 bytes") == true, "\(String(describing: error))")
    }

    /// Parameters OpenSSL cannot set the decryption up from (a PBKDF2 salt that is no OCTET
    /// STRING) are the file's fault: the passphrase was never tried, so it is not called wrong.
    @Test func parametersOpenSSLCannotUseAreMalformedNotAWrongPassphrase() throws {
        let salt = Self.sequence(Self.tlv(0x04, [UInt8](repeating: 0x5A, count: 16)))
        let pem = TestPEM.pem(
            label: "ENCRYPTED PRIVATE KEY", der: Self.encryptedKeyInfo(iterations: 2048, salt: salt))
        let error = expectError(.malformedEncoding) {
            try P256.Signing.PrivateKey(encryptedPEM: pem, passphrase: secret("pass"))
        }
        #expect(error?.reason.contains("cannot set up the decryption") == true, "\(String(describing: error))")
    }

    @Test(arguments: [twoToThe31, twoToThe31 + 1, 1 << 32, Int.max])
    func aFileWithAnIterationCountBeyondIntMaxIsRefusedWithATypedError(iterations: Int) throws {
        let error = expectError(.inputTooLarge) {
            try P256.Signing.PrivateKey(encryptedPEM: Self.pem(iterations: iterations), passphrase: secret("pass"))
        }
        #expect(error?.reason.contains("5000000") == true, "\(String(describing: error))")
    }

    /// The shim on its own (below the Swift checks): the count is refused before OpenSSL reads it.
    @Test(arguments: [twoToThe31, 1 << 32, 0])
    func theShimRefusesAnIterationCountOutsideIntWhenDecrypting(iterations: Int) throws {
        let der = Self.encryptedKeyInfo(iterations: iterations)
        let passphrase = Array("pass".utf8)
        var status: Int32 = -1
        let key = dss_pkcs8_decrypt_der(der, der.count, passphrase, passphrase.count, &status, nil)
        #expect(key == nil)
        if let key { EVP_PKEY_free(key) }
        #expect(status == DSS_DECRYPT_COST_OUT_OF_RANGE)
        var ordinary: Int32 = -1
        let ordinaryDER = Self.encryptedKeyInfo(iterations: 2048)
        #expect(
            dss_pkcs8_decrypt_der(ordinaryDER, ordinaryDER.count, passphrase, passphrase.count, &ordinary, nil) == nil)
        #expect(ordinary == DSS_DECRYPT_FAILED)
    }

    /// The shim on its own: 2^31 iterations must not become OpenSSL's default of 2048.
    @Test(arguments: [UInt64(twoToThe31), UInt64(UInt32.max), UInt64(UInt32.max) + 1])
    func theShimRefusesAnIterationCountAboveIntMaxWhenEncrypting(cost: UInt64) throws {
        let key = try P256.Signing.PrivateKey()
        let passphrase = Array("pass".utf8)
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = dss_pkcs8_encrypt_der(
            try key.softwareBacking().pointer, passphrase, passphrase.count, DSS_KDF_PBKDF2_SHA256,
            cost, 0, 0, &output, &length)
        if let output {
            let written = Array(UnsafeBufferPointer(start: output, count: length))
            dss_free(output)
            let header = written.withUnsafeBytes { try? PBES2Parameters(der: $0) }
            Issue.record("the shim wrote a key for \(cost) iterations; its header says \(String(describing: header))")
        }
        #expect(status == 0)
    }
}
