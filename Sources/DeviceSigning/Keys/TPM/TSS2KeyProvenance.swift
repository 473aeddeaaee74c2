/// Checks, before a TPM is asked to load it, that a `TSS2 PRIVATE KEY` describes a key generated
/// inside a TPM, as this package (and `openssl genpkey -provider tpm2`) makes them.
///
/// The tpm2 provider loads any blob the TPM accepts, and the TPM also accepts a key whose private
/// half was made outside it and imported (TPM2_Import). Such a key signs through the TPM, yet its
/// private half exists elsewhere: it must not be called hardware-bound. What the TPM itself binds
/// to the blob (the public area is part of the object's name, which its integrity check covers)
/// tells the two apart:
/// - `fixedTPM`: the key cannot be duplicated to another TPM (imported objects never have it);
/// - `fixedParent`: nor moved under another parent;
/// - `sensitiveDataOrigin`: the TPM generated the private half.
///
/// The file is DER: `TSSPrivKey ::= SEQUENCE { type OBJECT IDENTIFIER (2.23.133.10.1.3, a
/// loadable key), [0] emptyAuth BOOLEAN OPTIONAL, [1]…[6] OPTIONAL, parent INTEGER, pubkey OCTET
/// STRING (a TPM2B_PUBLIC), privkey OCTET STRING }`, of an ECC key. A key that needs an
/// authorization value (emptyAuth absent or false) or a policy ([1], [3]) is refused too: this
/// package has no way to give either, and the provider would prompt on the terminal for the first.
/// The other members ([2], [4]-[6]) are a form the provider does not read (malformed).
enum TSS2KeyProvenance {
    static let loadableKeyOID: [UInt8] = [0x06, 0x06, 0x67, 0x81, 0x05, 0x0A, 0x01, 0x03]
    static let eccType: UInt16 = 0x0023
    /// TPM_RH_OWNER, and the range of persistent handles (TPM_HT_PERSISTENT).
    static let ownerHierarchy = 0x4000_0001
    static let persistentHandles = 0x8100_0000...0x81FF_FFFF
    /// TPM_ALG_SHA256: the name algorithm of the keys this package and the tpm2 provider make.
    static let sha256NameAlgorithm: UInt16 = 0x000B
    /// TPMA_OBJECT fixedTPM (bit 1), fixedParent (bit 4), sensitiveDataOrigin (bit 5).
    static let generatedInsideAttributes: UInt32 = 0x0000_0032

    /// Throws `.malformedEncoding` for a blob that is not a loadable TSS2 key, `.invalidKey` for
    /// one that was not generated inside a TPM.
    static func check(der: [UInt8]) throws {
        let publicArea: [UInt8]
        var emptyAuth = false
        var conditions: [String] = []
        do {
            var document = der.withUnsafeBytes { DERReader($0) }
            var key = try document.read(.sequence)
            guard document.isAtEnd else { throw malformed("it has bytes after the key") }
            guard try key.readElement() == loadableKeyOID else {
                throw malformed("it is not a loadable key (type 2.23.133.10.1.3)")
            }
            // emptyAuth [0] and the later optional members [1]…[6]: context-specific, constructed.
            while let tag = key.peekTag, tag & 0xE0 == 0xA0 {
                let member = try key.readElement()
                switch tag {
                case 0xA0: emptyAuth = member.count == 5 && member[2] == 0x01 && member[3] == 0x01 && member[4] != 0
                case 0xA1: conditions.append("a policy")
                case 0xA3: conditions.append("an authorization policy")
                // [2] an importable key's secret, [4] a description, [5] an RSA parent, [6] a parent
                // name: nothing the provider reads (nor this package's keys have).
                default: throw malformed("it has member [\(tag & 0x1F)], which the tpm2 provider does not read")
                }
            }
            // The parent: the owner hierarchy (0x40000001) or a persistent storage key given with
            // `-pkeyopt parent:` (0x81xxxxxx); whether that key is there is the TPM's to check. Any
            // other value is a damaged file, which the TPM would refuse as a bad hierarchy.
            let parent = try key.readInteger()
            guard parent == ownerHierarchy || persistentHandles.contains(parent) else {
                throw malformed("its parent is neither the owner hierarchy nor a persistent key")
            }
            publicArea = try key.read(.octetString).remainingBytes
            _ = try key.read(.octetString)
            guard key.isAtEnd else { throw malformed("it has members after the private part") }
        } catch let error as DeviceSigningError where error.code == .malformedEncoding {
            throw error.reason.hasPrefix("The TSS2") ? error : malformed("it is not DER")
        }
        // The provider would ask for the password on the terminal, or fail to satisfy the policy
        // at the first signature; a device key has neither.
        if !emptyAuth { conditions.insert("an authorization value (a password)", at: 0) }
        guard conditions.isEmpty else {
            throw DeviceSigningError(
                .invalidKey,
                "The TPM key needs \(conditions.joined(separator: " and ")) to be used; this package uses only "
                    + "keys without one, as it and `openssl genpkey -provider tpm2` make them.")
        }
        // TPM2B_PUBLIC: size (2), then TPMT_PUBLIC: type (2), nameAlg (2), objectAttributes (4).
        guard publicArea.count >= 10, Int(publicArea[0]) << 8 | Int(publicArea[1]) == publicArea.count - 2 else {
            throw malformed("its public area is truncated")
        }
        let type = UInt16(publicArea[2]) << 8 | UInt16(publicArea[3])
        guard type == eccType else { throw DeviceSigningError(.unsupportedKeyType, "The TPM key is not an ECC key.") }
        guard UInt16(publicArea[4]) << 8 | UInt16(publicArea[5]) == sha256NameAlgorithm else {
            throw malformed("its name algorithm is not SHA-256")
        }
        let attributes = publicArea[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard attributes & generatedInsideAttributes == generatedInsideAttributes else {
            throw DeviceSigningError(
                .invalidKey,
                "The TPM key was not generated inside a TPM (its attributes 0x\(String(attributes, radix: 16)) "
                    + "lack fixedTPM, fixedParent or sensitiveDataOrigin): its private half may exist "
                    + "outside the TPM; refused as a hardware-bound key.")
        }
    }

    private static func malformed(_ problem: String) -> DeviceSigningError {
        DeviceSigningError(.malformedEncoding, "The TSS2 PRIVATE KEY is not one this package reads: \(problem).")
    }
}
