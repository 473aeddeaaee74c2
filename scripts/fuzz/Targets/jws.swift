// Fuzz target `jws`: CompactJWS parsing and ES256 verification with a fixed key.
//
// Input: the compact serialization, as text. Checks, besides "no crash":
// - a parsed JWS has alg ES256, three strict base64url parts (each re-encodes to itself) and a
//   signing input equal to the first two parts;
// - verification with the fixed key (RFC 7515 A.3, which signed the vectors) gives the payload or
//   `.invalidSignature`, nothing else;
// - re-signing the parsed payload under the parsed header with the fixed key verifies and returns
//   the same payload.

import Foundation

@testable import DeviceSigning

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let jws: CompactJWS
    do {
        jws = try CompactJWS(parsing: text)
    } catch let error as DeviceSigningError {
        fuzzCheck(!error.reason.isEmpty, "a parse error without a reason: \(error.code)")
        return 0
    } catch {
        fuzzCheck(false, "CompactJWS threw a non-DeviceSigningError: \(error)")
        return 0
    }

    let utf8 = Array(text.utf8)
    let parts = utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    fuzzCheck(parts.count == 3, "accepted a JWS with \(parts.count) parts")
    fuzzCheck(jws.header.alg == "ES256", "accepted alg \(jws.header.alg)")
    fuzzCheck(utf8.count <= CompactJWS.maximumLength, "accepted \(utf8.count) bytes")
    for part in parts {
        guard let decoded = Base64.decode(part, alphabet: .url) else {
            fuzzCheck(false, "accepted a part that is not base64url")
            return 0
        }
        fuzzCheck(Base64.encodeToBytes(decoded, alphabet: .url).elementsEqual(part),
                  "base64url is not canonical: two encodings decode to the same bytes")
    }
    fuzzCheck(jws.signingInput == Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1]), "wrong signing input")

    let payload: Data?
    do {
        payload = try jws.verifiedPayload(with: FuzzKeys.publicKey)
    } catch let error as DeviceSigningError {
        fuzzCheck(error.code == .invalidSignature, "verification failed with \(error.code)")
        payload = nil
    } catch {
        fuzzCheck(false, "verification threw a non-DeviceSigningError: \(error)")
        return 0
    }
    if let payload {
        fuzzCheck(Array(payload) == Base64.decode(parts[1], alphabet: .url), "verified payload differs from the payload part")
    }

    // Sign what was parsed and check that it comes back unchanged.
    guard let headerJSON = Base64.decode(parts[0], alphabet: .url),
          let payloadBytes = Base64.decode(parts[1], alphabet: .url) else { return 0 }
    do {
        let resigned = try CompactJWS.sign(header: headerJSON, payload: payloadBytes, with: FuzzKeys.privateKey)
        let reparsed = try CompactJWS(parsing: resigned)
        fuzzCheck(reparsed.header == jws.header, "re-signed header parses differently")
        let verified = try reparsed.verifiedPayload(with: FuzzKeys.publicKey)
        fuzzCheck(Array(verified) == payloadBytes, "re-signed payload differs")
    } catch {
        // Same parts, same length (the signature part is always 86 characters): nothing may fail.
        fuzzCheck(false, "re-signing a parsed JWS failed: \(error)")
    }
    return 0
}

func fuzzWarmUp() {
    // RFC 7515 A.3, which verifies with the fixed key, and one that does not parse.
    fuzzRun(fuzzJWS, Array(("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q").utf8))
    fuzzRun(fuzzJWS, Array("e30.e30.AA".utf8))
}
