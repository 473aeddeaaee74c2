#!/usr/bin/env python3
"""Generates Vectors/device-signature.json: Device-Signature known answers and rejection cases.

Independent of the Swift code: the JSON is written by Python's json module, base64url by the
base64 module, and every signature by the `cryptography` package (PyPI, >= 44) with RFC 6979
deterministic ECDSA, so re-running this script reproduces the file byte for byte:

    python3 scripts/device-signature-vectors.py > Vectors/device-signature.json

The keys are published examples (RFC 7515 A.3, RFC 6979 A.2.5): TEST ONLY, never for anything real.
"""
import base64
import hashlib
import hmac
import json
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def compact_json(value) -> str:
    # RFC 8259 with no whitespace; non-ASCII as UTF-8, as the Swift signer writes it.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# RFC 7515 Appendix A.3: the ES256 example key. TEST ONLY.
FIXTURE_JWK = {
    "kty": "EC",
    "crv": "P-256",
    "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    "d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI",
}
# RFC 6979 Appendix A.2.5: the P-256 example key, used only for "signature by another key". TEST ONLY.
OTHER_D = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721


def private_key(d: int):
    return ec.derive_private_key(d, ec.SECP256R1())


FIXTURE_KEY = private_key(int.from_bytes(unb64u(FIXTURE_JWK["d"]), "big"))
OTHER_KEY = private_key(OTHER_D)


def public_jwk(key) -> dict:
    numbers = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": b64u(numbers.x.to_bytes(32, "big")),
        "y": b64u(numbers.y.to_bytes(32, "big")),
    }


# The key must be the RFC's: its d must give its x and y, and the RFC's A.3 JWS must verify with it.
assert public_jwk(FIXTURE_KEY) == {k: FIXTURE_JWK[k] for k in ("kty", "crv", "x", "y")}
RFC7515_A3_SIGNING_INPUT = (
    "eyJhbGciOiJFUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
)
RFC7515_A3_SIGNATURE = unb64u(
    "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
)
FIXTURE_KEY.public_key().verify(  # raises InvalidSignature if the key is not the RFC's
    encode_dss_signature(int.from_bytes(RFC7515_A3_SIGNATURE[:32], "big"),
                         int.from_bytes(RFC7515_A3_SIGNATURE[32:], "big")),
    RFC7515_A3_SIGNING_INPUT.encode(), ec.ECDSA(hashes.SHA256()))


def es256_raw(key, signing_input: bytes) -> bytes:
    der = key.sign(signing_input, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
    r, s = decode_dss_signature(der)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def es256_der(key, signing_input: bytes) -> bytes:
    return key.sign(signing_input, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))


def jws(header_json: str, payload_json: str, key=FIXTURE_KEY) -> str:
    signing_input = b64u(header_json.encode()) + "." + b64u(payload_json.encode())
    return signing_input + "." + b64u(es256_raw(key, signing_input.encode()))


def header(kid) -> str:
    return compact_json({"alg": "ES256", "kid": kid, "typ": "JWT"})


def payload(dispatch_target_id, request_id, creation_time) -> str:
    return compact_json({
        "dispatchTargetId": dispatch_target_id,
        "requestId": request_id,
        "creationTimeInEpochMillis": creation_time,
    })


TARGET = "0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40"
TARGET_ESCAPES = 'target "quoted" \\ back/slash é 🔑'
UNKNOWN_TARGET = "unregistered-dispatch-target"
T0 = 1767225600000  # 2026-01-01T00:00:00Z
TOLERANCE = 60000
REQUEST_ID = "3b241101-e2bb-4255-8caf-4136c566a962"

positive = []


def add_positive(name, comment, dispatch_target_id, request_id, creation_time, verifier_time):
    header_json = header(dispatch_target_id)
    payload_json = payload(dispatch_target_id, request_id, creation_time)
    encoded_header = b64u(header_json.encode())
    encoded_payload = b64u(payload_json.encode())
    signing_input = encoded_header + "." + encoded_payload
    signature = b64u(es256_raw(FIXTURE_KEY, signing_input.encode()))
    positive.append({
        "name": name,
        "comment": comment,
        "dispatchTargetId": dispatch_target_id,
        "requestId": request_id,
        "creationTimeInEpochMillis": creation_time,
        "headerJSON": header_json,
        "payloadJSON": payload_json,
        "encodedHeader": encoded_header,
        "encodedPayload": encoded_payload,
        "signingInput": signing_input,
        "signature": signature,
        "compact": signing_input + "." + signature,
        "verifierTimeMillis": verifier_time,
    })


add_positive("uuid-request-id", "The usual request: a lowercase UUID request id; the device clock 1.5 s behind.",
             TARGET, REQUEST_ID, T0, T0 + 1500)
add_positive("escaped-strings", "JSON escaping: quote, backslash, slash, non-ASCII and an astral character in the "
             "dispatch target id; tab, newline, U+0001, quote and backslash in the request id.",
             TARGET_ESCAPES, 'req\t"\\\n\u0001é🔑', T0, T0)
add_positive("request-id-64", "A request id of exactly 64 characters, the longest accepted.",
             TARGET, "r" * 64, T0, T0)
add_positive("creation-at-past-tolerance", "Created exactly the tolerance before the verifier time: accepted.",
             TARGET, "edge-past", T0 - TOLERANCE, T0)
add_positive("creation-at-future-tolerance", "Created exactly the tolerance after the verifier time: accepted.",
             TARGET, "edge-future", T0 + TOLERANCE, T0)
add_positive("negative-creation-time", "Creation time before 1970 (negative); the verifier clock agrees.",
             TARGET, "before-epoch", -5000, -5000)

verification = []


def add_case(name, comment, compact, expected, verifier_time=T0, session=None):
    case = {"name": name, "comment": comment, "compact": compact, "expected": expected,
            "verifierTimeMillis": verifier_time}
    if session is not None:
        case["session"] = session
    verification.append(case)


good_header = header(TARGET)
good_payload = payload(TARGET, REQUEST_ID, T0)
good = jws(good_header, good_payload)
h, p, s = good.split(".")

add_case("alg-none", "Unsecured JWS (alg none, empty signature): not a Device-Signature.",
         b64u(compact_json({"alg": "none", "kid": TARGET, "typ": "JWT"}).encode()) + "." + p + ".",
         "MALFORMED_REQUEST")
hs_header = b64u(compact_json({"alg": "HS256", "kid": TARGET, "typ": "JWT"}).encode())
hs_mac = hmac.new(b"device-signature-test-secret", (hs_header + "." + p).encode(), hashlib.sha256).digest()
add_case("alg-hs256", "HMAC alg (the classic algorithm-confusion attempt): refused before any key is used.",
         hs_header + "." + p + "." + b64u(hs_mac), "MALFORMED_REQUEST")
add_case("typ-not-jwt", "typ present but not JWT.",
         jws(compact_json({"alg": "ES256", "kid": TARGET, "typ": "JOSE"}), good_payload), "MALFORMED_REQUEST")
add_case("missing-kid", "Validly signed, but the header names no dispatch target.",
         jws(compact_json({"alg": "ES256", "typ": "JWT"}), good_payload), "MALFORMED_REQUEST")
add_case("kid-mismatch", "kid and payload dispatchTargetId are two different registered targets; validly signed.",
         jws(header(TARGET), payload(TARGET_ESCAPES, REQUEST_ID, T0)), "MALFORMED_REQUEST")
add_case("missing-request-id", "Payload without requestId.",
         jws(good_header, compact_json({"dispatchTargetId": TARGET, "creationTimeInEpochMillis": T0})),
         "MALFORMED_REQUEST")
add_case("empty-request-id", "requestId is the empty string.",
         jws(good_header, payload(TARGET, "", T0)), "MALFORMED_REQUEST")
add_case("request-id-65", "requestId of 65 characters, one more than allowed.",
         jws(good_header, payload(TARGET, "r" * 65, T0)), "MALFORMED_REQUEST")
add_case("creation-time-string", "creationTimeInEpochMillis as a string.",
         jws(good_header, payload(TARGET, REQUEST_ID, str(T0))), "MALFORMED_REQUEST")
add_case("creation-time-float", "creationTimeInEpochMillis with a fraction.",
         jws(good_header, payload(TARGET, REQUEST_ID, T0 + 0.5)), "MALFORMED_REQUEST")
add_case("creation-time-boolean", "creationTimeInEpochMillis as true.",
         jws(good_header, payload(TARGET, REQUEST_ID, True)), "MALFORMED_REQUEST")
add_case("creation-time-beyond-int64", "creationTimeInEpochMillis 2^63, one past the 64-bit range.",
         jws(good_header, payload(TARGET, REQUEST_ID, 2**63)), "MALFORMED_REQUEST")
add_case("payload-not-object", "The payload is a JSON array.",
         jws(good_header, compact_json([TARGET, REQUEST_ID, T0])), "MALFORMED_REQUEST")
add_case("der-signature", "The signature as DER instead of the 64-byte r||s.",
         h + "." + p + "." + b64u(es256_der(FIXTURE_KEY, (h + "." + p).encode())), "MALFORMED_REQUEST")
add_case("padding-in-part", "base64 padding on the signature part (base64url in JWS has none).",
         good + "==", "MALFORMED_REQUEST")
add_case("four-parts", "A fourth part.", good + "." + s, "MALFORMED_REQUEST")
add_case("two-parts", "The signature part missing.", h + "." + p, "MALFORMED_REQUEST")
add_case("bad-base64url-char", "'+' (standard base64, not base64url) in the payload part.",
         h + "." + "+" + p[1:] + "." + s, "MALFORMED_REQUEST")
add_case("header-too-large", "Protected header JSON of 1025 bytes (limit 1024); validly signed.",
         jws(compact_json({"alg": "ES256", "kid": TARGET, "typ": "JWT",
                           "pad": "p" * (1025 - len(good_header) - len(',"pad":""'))}), good_payload),
         "MALFORMED_REQUEST")
add_case("payload-too-large", "Payload JSON of 4097 bytes (limit 4096); validly signed.",
         jws(good_header, good_payload[:-1] + ',"pad":"' + "p" * (4097 - len(good_payload) - len(',"pad":""')) + '"}'),
         "MALFORMED_REQUEST")
# Duplicate member names: validly signed, so only the JSON decides. Foundation's JSONSerialization keeps
# the last of two members (the header would read as ES256 for the registered target) and JSONDecoder the
# first; RFC 7515 section 5.2 requires such a header to be rejected, and the payload is held to the same rule.
add_case("header-duplicate-alg", "Two alg members, none then ES256: refused, never read as either.",
         jws('{"alg":"none","alg":"ES256","kid":"%s","typ":"JWT"}' % TARGET, good_payload), "MALFORMED_REQUEST")
add_case("header-duplicate-kid-escaped", "Two kid members, the second spelled with an escape (\\u006bid): "
         "the names are compared after unescaping.",
         jws('{"alg":"ES256","kid":"%s","\\u006bid":"%s","typ":"JWT"}' % (UNKNOWN_TARGET, TARGET), good_payload),
         "MALFORMED_REQUEST")
add_case("payload-duplicate-request-id", "Two requestId members: which request id would the replay check see?",
         jws(good_header, '{"dispatchTargetId":"%s","requestId":"first","requestId":"second",'
             '"creationTimeInEpochMillis":%d}' % (TARGET, T0)), "MALFORMED_REQUEST")
add_case("payload-duplicate-creation-time-escaped", "A second creationTimeInEpochMillis spelled with an escape "
         "(\\u0045 for E).",
         jws(good_header, '{"dispatchTargetId":"%s","requestId":"%s","creationTimeInEpochMillis":%d,'
             '"creationTimeIn\\u0045pochMillis":0}' % (TARGET, REQUEST_ID, T0)), "MALFORMED_REQUEST")
add_case("payload-duplicate-nested", "A duplicate inside an unknown member's object: every object of the payload "
         "is checked.",
         jws(good_header, '{"dispatchTargetId":"%s","requestId":"%s","creationTimeInEpochMillis":%d,'
             '"extra":{"a":1,"a":2}}' % (TARGET, REQUEST_ID, T0)), "MALFORMED_REQUEST")
add_case("payload-similar-names", "Names that differ in case or by a space are different members: accepted, "
         "unknown members ignored.",
         jws(good_header, '{"dispatchTargetId":"%s","requestId":"%s","creationTimeInEpochMillis":%d,'
             '"RequestId":"x","requestid":"y","requestId ":"z"}' % (TARGET, REQUEST_ID, T0)), "ACCEPT")
add_case("signature-by-another-key", "Signed with the RFC 6979 A.2.5 key, not the one registered for the kid.",
         jws(good_header, good_payload, OTHER_KEY), "INVALID_SIGNATURE")
add_case("tampered-payload", "The payload changed after signing (creation time + 1 ms), original signature kept.",
         h + "." + b64u(payload(TARGET, REQUEST_ID, T0 + 1).encode()) + "." + s, "INVALID_SIGNATURE")
add_case("unknown-dispatch-target", "Validly signed for a dispatch target that is not registered.",
         jws(header(UNKNOWN_TARGET), payload(UNKNOWN_TARGET, REQUEST_ID, T0)), "UNKNOWN_DISPATCH_TARGET")
add_case("stale", "Created one millisecond more than the tolerance before the verifier time.",
         jws(good_header, payload(TARGET, REQUEST_ID, T0 - TOLERANCE - 1)), "CLOCK_SKEW_TOO_BIG")
add_case("future", "Created one millisecond more than the tolerance after the verifier time.",
         jws(good_header, payload(TARGET, REQUEST_ID, T0 + TOLERANCE + 1)), "CLOCK_SKEW_TOO_BIG")
add_case("creation-time-int64-min", "A hostile creation time of Int64.min: no overflow, just too old.",
         jws(good_header, payload(TARGET, REQUEST_ID, -2**63)), "CLOCK_SKEW_TOO_BIG")
add_case("creation-time-int64-max", "A hostile creation time of Int64.max: no overflow, just too new.",
         jws(good_header, payload(TARGET, REQUEST_ID, 2**63 - 1)), "CLOCK_SKEW_TOO_BIG")

# One verifier for the whole session, cases in file order.
add_case("replay-first", "Session 'replay', 1 of 4: the original request is accepted.",
         good, "ACCEPT", T0, "replay")
add_case("replay-second", "Session 'replay', 2 of 4: the same value again 1 s later.",
         good, "REPLAYED_REQUEST", T0 + 1000, "replay")
add_case("replay-new-signature", "Session 'replay', 3 of 4: same request id, new creation time and signature.",
         jws(good_header, payload(TARGET, REQUEST_ID, T0 + 2000)), "REPLAYED_REQUEST", T0 + 2000, "replay")
add_case("replay-other-target", "Session 'replay', 4 of 4: the same request id for another dispatch target "
         "is a different request (request ids are scoped per dispatch target).",
         jws(header(TARGET_ESCAPES), payload(TARGET_ESCAPES, REQUEST_ID, T0 + 3000)), "ACCEPT", T0 + 3000, "replay")

document = {
    "description": "Device-Signature (ES256 compact JWS) known answers and verification cases. "
                   "Positive cases: fixed inputs give exactly these JSON texts, base64url parts and signing "
                   "input; the signature is verify-only (RFC 6979 deterministic, which OpenSSL 3.0 cannot "
                   "produce). Verification cases: run each with a fresh verifier at verifierTimeMillis, except "
                   "that cases sharing a session run on one verifier in file order.",
    "source": "scripts/device-signature-vectors.py (Python json, base64 and the cryptography package); "
              "see Vectors/README.md, device-signature.json.",
    "testOnly": "Both keys are published examples. Never use them for anything but tests.",
    "key": dict(FIXTURE_JWK, comment="RFC 7515 Appendix A.3 ES256 example key. TEST ONLY."),
    "otherKey": dict(public_jwk(OTHER_KEY), comment="RFC 6979 Appendix A.2.5 P-256 example key (public part); "
                     "signs the signature-by-another-key case. TEST ONLY."),
    "verifier": {
        "toleranceMillis": TOLERANCE,
        "replayCacheCapacity": 100000,
        "dispatchTargets": [TARGET, TARGET_ESCAPES],
        "comment": "Every dispatch target listed is registered with the fixture key's public key; "
                   "no other is registered.",
    },
    "positive": positive,
    "verification": verification,
}
json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
sys.stdout.write("\n")
