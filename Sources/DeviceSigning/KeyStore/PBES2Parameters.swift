/// The cleartext header of a DER `EncryptedPrivateKeyInfo` (RFC 5958 §3) protected with PBES2
/// (RFC 8018 §6.2), read before anything is handed to OpenSSL.
///
/// Why: OpenSSL reports every failure of `PKCS8_decrypt` the same way, so a KDF it cannot run (an
/// unknown PRF or cipher, scrypt over its 32 MiB limit, r = 0) would surface as a wrong
/// passphrase; and a crafted file could ask for billions of PBKDF2 iterations. Checking the
/// header first makes `.wrongPassphrase` mean what it says and bounds the time a decryption takes.
struct PBES2Parameters: Equatable {
    enum KDF: Equatable {
        case scrypt(n: Int, r: Int, p: Int)
        /// `prf` is the HMAC's hash: "SHA-1" (the RFC 8018 default), "SHA-224", ... "SHA-512".
        case pbkdf2(iterations: Int, prf: String)
    }

    let kdf: KDF
    /// "AES-128-CBC", "AES-192-CBC", "AES-256-CBC" or "DES-EDE3-CBC".
    let cipher: String
}

extension PBES2Parameters {

    // DER of the object identifiers (tag and length included).
    private static let pbes2OID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
    private static let pbkdf2OID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
    private static let scryptOID: [UInt8] = [0x06, 0x09, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B]
    private static let hmacOIDPrefix: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02]
    private static let hmacHashes: [UInt8: String] = [
        0x07: "SHA-1", 0x08: "SHA-224", 0x09: "SHA-256", 0x0A: "SHA-384", 0x0B: "SHA-512",
    ]
    private static let aesCBCPrefix: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01]
    private static let aesCBCSizes: [UInt8: String] = [0x02: "AES-128-CBC", 0x16: "AES-192-CBC", 0x2A: "AES-256-CBC"]
    private static let desEDE3CBCOID: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x03, 0x07]

    private static let reencryptHint =
        "Re-encrypt it: openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256 -iter 600000 -in OLD.pem -out NEW.pem"

    /// Parses the header of `der` and checks that OpenSSL can run its KDF within this package's
    /// cost limits (see `KeyDerivation`). Throws `.malformedEncoding` for a structure that is not
    /// a PBES2 EncryptedPrivateKeyInfo or uses algorithms OpenSSL 3's default provider lacks, and
    /// `.inputTooLarge` for a KDF above the cost limits.
    init(der: UnsafeRawBufferPointer) throws {
        var outer = DERReader(der)
        var info = try outer.read(.sequence)
        guard outer.isAtEnd else { throw Self.malformed("bytes follow the EncryptedPrivateKeyInfo") }
        var algorithm = try info.read(.sequence)
        _ = try info.read(.octetString)  // encryptedData
        guard info.isAtEnd else { throw Self.malformed("unexpected fields in EncryptedPrivateKeyInfo") }

        guard try algorithm.readElement() == Self.pbes2OID else {
            throw DeviceSigningError(
                .malformedEncoding,
                "The key is encrypted with a scheme other than PBES2 (a legacy PBES1 or PKCS#12 scheme). \(Self.reencryptHint)"
            )
        }
        var pbes2 = try algorithm.read(.sequence)
        guard algorithm.isAtEnd else { throw Self.malformed("unexpected fields after the PBES2 parameters") }
        var kdfAlgorithm = try pbes2.read(.sequence)
        var scheme = try pbes2.read(.sequence)
        guard pbes2.isAtEnd else { throw Self.malformed("unexpected fields in the PBES2 parameters") }

        let kdfOID = try kdfAlgorithm.readElement()
        var keyLength: Int?
        var kdfParameters = try kdfAlgorithm.read(.sequence)
        guard kdfAlgorithm.isAtEnd else { throw Self.malformed("unexpected fields after the KDF parameters") }
        if kdfOID == Self.pbkdf2OID {
            _ = try kdfParameters.readElement()  // salt: OCTET STRING (or an AlgorithmIdentifier)
            let iterations = try kdfParameters.readInteger()
            // The optional keyLength.
            if kdfParameters.peekTag == DERReader.Tag.integer.rawValue { keyLength = try kdfParameters.readInteger() }
            var prf = "SHA-1"
            if !kdfParameters.isAtEnd {
                var prfAlgorithm = try kdfParameters.read(.sequence)
                let oid = try prfAlgorithm.readElement()
                guard oid.count == Self.hmacOIDPrefix.count + 1, oid.starts(with: Self.hmacOIDPrefix),
                    let hash = Self.hmacHashes[oid[oid.count - 1]]
                else {
                    throw DeviceSigningError(
                        .malformedEncoding,
                        "The key's PBKDF2 uses a pseudo-random function other than HMAC-SHA-1/-2. \(Self.reencryptHint)"
                    )
                }
                prf = hash
            }
            guard kdfParameters.isAtEnd else { throw Self.malformed("unexpected fields in the PBKDF2 parameters") }
            do {
                try KeyDerivation.checkPBKDF2(iterations: iterations, prf: prf, overLimit: .inputTooLarge)
            } catch let error as DeviceSigningError where error.code == .inputTooLarge {
                // openssl has no such limit: it can re-encrypt the file within this one.
                throw DeviceSigningError(error.code, "\(error.reason) \(Self.reencryptHint)")
            }
            kdf = .pbkdf2(iterations: iterations, prf: prf)
        } else if kdfOID == Self.scryptOID {
            _ = try kdfParameters.read(.octetString)  // salt
            let n = try kdfParameters.readInteger()
            let r = try kdfParameters.readInteger()
            let p = try kdfParameters.readInteger()
            if !kdfParameters.isAtEnd { keyLength = try kdfParameters.readInteger() }
            guard kdfParameters.isAtEnd else { throw Self.malformed("unexpected fields in the scrypt parameters") }
            try KeyDerivation.checkScrypt(n: n, r: r, p: p, overLimit: .inputTooLarge)
            kdf = .scrypt(n: n, r: r, p: p)
        } else {
            throw DeviceSigningError(
                .malformedEncoding,
                "The key's PBES2 uses a key-derivation function other than PBKDF2 or scrypt. \(Self.reencryptHint)")
        }

        let schemeOID = try scheme.readElement()
        if schemeOID.count == Self.aesCBCPrefix.count + 1, schemeOID.starts(with: Self.aesCBCPrefix),
            let name = Self.aesCBCSizes[schemeOID[schemeOID.count - 1]]
        {
            cipher = name
        } else if schemeOID == Self.desEDE3CBCOID {
            cipher = "DES-EDE3-CBC"
        } else {
            throw DeviceSigningError(
                .malformedEncoding,
                "The key is encrypted with a cipher other than AES-CBC or DES-EDE3-CBC. \(Self.reencryptHint)")
        }
        // A key length the cipher does not take fails inside the decryption too.
        let keyBytes =
            switch cipher {
            case "AES-128-CBC": 16
            case "AES-256-CBC": 32
            default: 24  // AES-192-CBC, DES-EDE3-CBC
            }
        if let keyLength, keyLength != keyBytes {
            throw Self.malformed("the KDF's key length is \(keyLength) bytes; \(cipher) takes \(keyBytes)")
        }
        // The IV is one block of the cipher: OpenSSL would refuse another length only inside the
        // decryption, where its failure reads as a wrong passphrase.
        let blockBytes = cipher == "DES-EDE3-CBC" ? 8 : 16
        guard try scheme.read(.octetString).remainingCount == blockBytes, scheme.isAtEnd else {
            throw Self.malformed("the cipher's IV is missing, malformed or not \(blockBytes) bytes")
        }
    }

    private static func malformed(_ detail: String) -> DeviceSigningError {
        DeviceSigningError(.malformedEncoding, "Not a DER PKCS#8 EncryptedPrivateKeyInfo: \(detail).")
    }
}

/// A strict reader of definite-length DER, enough for the PBES2 header.
struct DERReader {
    enum Tag: UInt8 {
        case integer = 0x02
        case octetString = 0x04
        case sequence = 0x30
    }

    private let bytes: [UInt8]
    private var position: Int
    private let end: Int

    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(bytes: Array(buffer), range: 0..<buffer.count)
    }

    private init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
    }

    var isAtEnd: Bool { position == end }
    /// What is left to read, as bytes (an OCTET STRING's contents).
    var remainingBytes: [UInt8] { Array(bytes[position..<end]) }
    var remainingCount: Int { end - position }
    var peekTag: UInt8? { position < end ? bytes[position] : nil }

    /// The next element's contents as a reader; the element must have `tag`.
    mutating func read(_ tag: Tag) throws -> DERReader {
        let (elementTag, contents, _) = try next()
        guard elementTag == tag.rawValue else { throw Self.malformed }
        return DERReader(bytes: bytes, range: contents)
    }

    /// The next element whole (tag, length and contents), for comparing object identifiers.
    mutating func readElement() throws -> [UInt8] {
        let (_, _, whole) = try next()
        return Array(bytes[whole])
    }

    /// A non-negative INTEGER; values that do not fit in an Int come back as Int.max, which every
    /// cost limit refuses.
    mutating func readInteger() throws -> Int {
        let (tag, contents, _) = try next()
        guard tag == Tag.integer.rawValue, !contents.isEmpty, bytes[contents.lowerBound] & 0x80 == 0 else {
            throw Self.malformed
        }
        var value = 0
        for byte in bytes[contents] {
            guard value <= (Int.max >> 8) else { return Int.max }
            value = value << 8 | Int(byte)
        }
        return value
    }

    private mutating func next() throws -> (tag: UInt8, contents: Range<Int>, whole: Range<Int>) {
        let start = position
        guard end - position >= 2 else { throw Self.malformed }
        let tag = bytes[position]
        guard tag & 0x1F != 0x1F else { throw Self.malformed }  // multi-byte tags never occur here
        var length = Int(bytes[position + 1])
        position += 2
        if length & 0x80 != 0 {
            let lengthBytes = length & 0x7F
            // 0x80 is BER's indefinite length; more than 3 length bytes is far beyond any key file.
            guard (1...3).contains(lengthBytes), end - position >= lengthBytes, bytes[position] != 0 else {
                throw Self.malformed
            }
            length = 0
            for _ in 0..<lengthBytes {
                length = length << 8 | Int(bytes[position])
                position += 1
            }
            guard length >= 0x80 else { throw Self.malformed }  // DER uses the short form below 128
        }
        guard end - position >= length else { throw Self.malformed }
        let contents = position..<(position + length)
        position += length
        return (tag, contents, start..<position)
    }

    private static let malformed = DeviceSigningError(
        .malformedEncoding, "Not a DER PKCS#8 EncryptedPrivateKeyInfo (truncated or not DER).")
}
