// Fuzz target `key-import`: every way a P-256 key enters the package.
//
// Input: a mode byte, then the encoding (scripts/fuzz/seeds.py writes seeds in this layout):
// 0 private PEM, 1 public PEM, 2 private DER (PKCS#8 or SEC1), 3 public DER (SPKI), 4 private JWK,
// 5 public JWK, 6 any private-key PEM as the key store reads it (ENCRYPTED PRIVATE KEY with the
// passphrase "fuzz-passphrase", PRIVATE KEY, EC PRIVATE KEY), 7 raw forms: a selector byte, then
// a raw/X9.63 private key, a raw/X9.63/compressed public key, or a raw/DER signature.
//
// Checks, besides "no crash": failures are DeviceSigningErrors with a reason; an imported key
// survives every export → import round trip (DER, PEM, JWK, raw, compressed) unchanged, and a key
// pair signs what its public key verifies.
//
// Key-derivation cost: an encrypted key names its own KDF cost. Before decrypting, the target reads
// the PBES2 header with the package's own parser and checks that whatever that parser lets through
// is within KeyDerivation's limits (the package refuses costlier files before deriving anything).
// Costs within those limits can still take seconds (PBKDF2 up to 5,000,000 iterations); inputs
// above `fuzzMaximumWork` are not decrypted so that every input stays in the millisecond range.

import Foundation

@testable import DeviceSigning

private let passphrase = SecureBytes(Array("fuzz-passphrase".utf8))
/// The most KDF work the target spends on one input: PBKDF2 iterations, or scrypt N·r·p.
private let fuzzMaximumWork = 2048

private func imported<T>(_ body: () throws -> T) -> T? {
    do {
        return try body()
    } catch let error as DeviceSigningError {
        fuzzCheck(!error.reason.isEmpty, "an import error without a reason: \(error.code)")
        return nil
    } catch {
        fuzzCheck(false, "an import threw a non-DeviceSigningError: \(error)")
        return nil
    }
}

/// Re-imports must not fail: the values come from the package itself.
private func reimported<T>(_ what: String, _ body: () throws -> T) -> T {
    do {
        return try body()
    } catch {
        fatalError("fuzz invariant violated: re-importing the \(what) export failed: \(error)")
    }
}

private func checkPublic(_ key: P256.Signing.PublicKey) {
    let point = key.x963Representation
    fuzzCheck(point.count == 65 && point.first == 0x04, "public point is not 65 bytes of uncompressed form")
    fuzzCheck(reimported("SPKI DER") { try P256.Signing.PublicKey(derRepresentation: key.derRepresentation) } == key, "SPKI round trip")
    fuzzCheck(reimported("PEM") { try P256.Signing.PublicKey(pemRepresentation: key.pemRepresentation) } == key, "PEM round trip")
    fuzzCheck(reimported("JWK") { try P256.Signing.PublicKey(jwk: JWK(jsonRepresentation: Array(key.jwk.jsonString.utf8))) } == key, "JWK round trip")
    fuzzCheck(reimported("raw") { try P256.Signing.PublicKey(rawRepresentation: key.rawRepresentation) } == key, "raw round trip")
    fuzzCheck(reimported("compressed") { try P256.Signing.PublicKey(compressedRepresentation: key.compressedRepresentation) } == key,
              "compressed round trip")
}

private func checkPrivate(_ key: P256.Signing.PrivateKey) {
    let publicKey = key.publicKey
    let der = reimported("PKCS#8") { try key.derRepresentation }
    fuzzCheck(reimported("PKCS#8 DER") { try der.withUnsafeBytes { try P256.Signing.PrivateKey(derRepresentation: $0) } }.publicKey == publicKey,
              "PKCS#8 round trip")
    let pem = reimported("PEM") { try key.pemRepresentation }
    fuzzCheck(reimported("PEM") { try P256.Signing.PrivateKey(pemRepresentation: pem.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) }
              .publicKey == publicKey, "PEM round trip")
    let jwk = reimported("JWK") { try key.jwkRepresentation(includingPrivateKey: true) }
    fuzzCheck(reimported("JWK") { try jwk.withUnsafeBytes { try P256.Signing.PrivateKey(jwkRepresentation: $0) } }.publicKey == publicKey,
              "JWK round trip")
    let x963 = reimported("X9.63") { try key.x963Representation }
    fuzzCheck(reimported("X9.63") { try x963.withUnsafeBytes { try P256.Signing.PrivateKey(x963Representation: $0) } }.publicKey == publicKey,
              "X9.63 round trip")
    let message: [UInt8] = [0x66, 0x75, 0x7A, 0x7A]
    let signature = reimported("signature") { try key.signature(for: message) }
    fuzzCheck(publicKey.isValidSignature(signature, for: message), "the key's signature does not verify with its public key")
}

/// The KDF cost check described at the top; false when the input is too costly to decrypt here.
private func withinFuzzCost(_ text: SecureBytes) -> Bool {
    guard let document = try? PEM.decodeSecret(text), document.label == "ENCRYPTED PRIVATE KEY",
          let parameters = try? document.der.withUnsafeBytes({ try PBES2Parameters(der: $0) }) else {
        return true  // refused before any key derivation
    }
    switch parameters.kdf {
    case let .pbkdf2(iterations, _):
        fuzzCheck(iterations <= KeyDerivation.maximumPBKDF2Iterations, "PBKDF2 with \(iterations) iterations passed the header check")
        return iterations <= fuzzMaximumWork
    case let .scrypt(n, r, p):
        let (nr, overflow1) = n.multipliedReportingOverflow(by: r)
        let (work, overflow2) = nr.multipliedReportingOverflow(by: p)
        fuzzCheck(!overflow1 && !overflow2 && work <= KeyDerivation.maximumScryptWork, "scrypt N=\(n) r=\(r) p=\(p) passed the header check")
        let memory = KeyDerivation.scrypt(n: n, r: r, p: p).memoryBytes
        fuzzCheck(memory <= KeyDerivation.maximumScryptMemoryBytes, "scrypt needing \(memory) bytes passed the header check")
        return work <= fuzzMaximumWork
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyImport(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzReader(fuzzBytes(data, size))
    let mode = input.byte() % 8
    let selector = mode == 7 ? input.byte() % 7 : 0
    let bytes = input.rest()
    let text = String(decoding: bytes, as: UTF8.self)
    switch mode {
    case 0:
        imported { try P256.Signing.PrivateKey(pemRepresentation: text) }.map(checkPrivate)
    case 1:
        imported { try P256.Signing.PublicKey(pemRepresentation: text) }.map(checkPublic)
    case 2:
        imported { try P256.Signing.PrivateKey(derRepresentation: bytes) }.map(checkPrivate)
    case 3:
        imported { try P256.Signing.PublicKey(derRepresentation: bytes) }.map(checkPublic)
    case 4:
        imported { try P256.Signing.PrivateKey(jwkRepresentation: bytes) }.map(checkPrivate)
    case 5:
        if let jwk = imported({ try JWK(jsonRepresentation: bytes) }) {
            fuzzCheck(jwk.kty == "EC" && jwk.crv == "P-256", "accepted a JWK with kty \(jwk.kty), crv \(jwk.crv)")
            imported { try P256.Signing.PublicKey(jwk: jwk) }.map(checkPublic)
        }
    case 6:
        let secret = SecureBytes(bytes)
        guard withinFuzzCost(secret) else { return 0 }
        imported { try P256.Signing.PrivateKey(privateKeyPEM: secret, passphrase: passphrase) }.map(checkPrivate)
    default:
        switch selector {
        case 0: imported { try P256.Signing.PrivateKey(rawRepresentation: bytes) }.map(checkPrivate)
        case 1: imported { try P256.Signing.PrivateKey(x963Representation: bytes) }.map(checkPrivate)
        case 2: imported { try P256.Signing.PublicKey(rawRepresentation: bytes) }.map(checkPublic)
        case 3: imported { try P256.Signing.PublicKey(x963Representation: bytes) }.map(checkPublic)
        case 4: imported { try P256.Signing.PublicKey(compressedRepresentation: bytes) }.map(checkPublic)
        case 5:
            if let signature = imported({ try P256.Signing.ECDSASignature(derRepresentation: bytes) }) {
                fuzzCheck(signature.rawRepresentation.count == 64, "a DER signature gave \(signature.rawRepresentation.count) raw bytes")
                fuzzCheck(Array(signature.derRepresentation) == bytes, "DER signature is not canonical: re-encoding differs")
            }
        default:
            if let signature = imported({ try P256.Signing.ECDSASignature(rawRepresentation: bytes) }) {
                let der = signature.derRepresentation
                fuzzCheck(reimported("DER signature") { try P256.Signing.ECDSASignature(derRepresentation: der) } == signature,
                          "raw → DER → raw changed the signature")
            }
        }
    }
    return 0
}

func fuzzWarmUp() {
    _ = passphrase
    // The RFC 7515 A.3 key as a private JWK (mode 4): runs every export and re-import.
    fuzzRun(fuzzKeyImport, [4] + Array(#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}"#.utf8))
    fuzzRun(fuzzKeyImport, [6] + Array("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8))
}
