#!/usr/bin/env python3
"""Generates Vectors/jwe-ecdh-es.json: JWE compact serialization with ECDH-ES on P-256.

Independent of the Swift code and of OpenSSL's JWE path in this package: JSON by Python's json
module, base64url by the base64 module, ECDH, the Concat KDF (ConcatKDFHash), AES Key Wrap,
AES-GCM and AES-CBC by the `cryptography` package (PyPI, >= 44), HMAC by Python's hmac module.
Every random value (ephemeral keys, content keys, IVs) is derived from a fixed label with SHA-256,
so re-running this script reproduces the file byte for byte:

    python3 scripts/jwe-vectors.py > Vectors/jwe-ecdh-es.json

Before writing anything it recomputes the two published examples from their inputs and stops if
either differs: RFC 7518 Appendix C (Z and the derived key) and RFC 7520 §5.5 (the whole JWE).
Every key is a published example (RFC 7518 Appendix C, RFC 7520 §5.5): TEST ONLY.
"""
import base64
import hashlib
import hmac
import json
import sys

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.keywrap import aes_key_wrap

P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_PRIME = 2**256 - 2**224 + 2**192 + 2**96 - 1


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def compact_json(value) -> str:
    # No whitespace, non-ASCII as UTF-8: what the Swift encrypter writes.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def private_key(d: bytes):
    return ec.derive_private_key(int.from_bytes(d, "big"), ec.SECP256R1())


def public_jwk(key) -> dict:
    numbers = key.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64u(numbers.x.to_bytes(32, "big")),
            "y": b64u(numbers.y.to_bytes(32, "big"))}


def private_jwk(key) -> dict:
    d = key.private_numbers().private_value.to_bytes(32, "big")
    return dict(public_jwk(key), d=b64u(d))


def key_from_jwk(jwk: dict):
    key = private_key(unb64u(jwk["d"]))
    assert public_jwk(key) == {k: jwk[k] for k in ("kty", "crv", "x", "y")}, "d does not give x and y"
    return key


def derived(label: str, length: int) -> bytes:
    """A fixed 'random' value: SHA-256 of the label, extended by counter, cut to length."""
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(f"jwe-ecdh-es {label} {counter}".encode()).digest()
        counter += 1
    return out[:length]


def ephemeral_key(label: str):
    d = int.from_bytes(derived("ephemeral " + label, 32), "big") % (P256_ORDER - 1) + 1
    return private_key(d.to_bytes(32, "big"))


# ---- algorithms (RFC 7518) ------------------------------------------------------------------

KEY_WRAP_BYTES = {"ECDH-ES": None, "ECDH-ES+A128KW": 16, "ECDH-ES+A192KW": 24, "ECDH-ES+A256KW": 32}
ENC_KEY_BYTES = {"A128GCM": 16, "A192GCM": 24, "A256GCM": 32,
                 "A128CBC-HS256": 32, "A192CBC-HS384": 48, "A256CBC-HS512": 64}
CBC_HASH = {32: hashlib.sha256, 48: hashlib.sha384, 64: hashlib.sha512}


def iv_bytes(enc: str) -> int:
    return 12 if enc.endswith("GCM") else 16


def concat_kdf(z: bytes, algorithm_id: str, apu: bytes, apv: bytes, length: int) -> bytes:
    def datum(value: bytes) -> bytes:
        return len(value).to_bytes(4, "big") + value
    other_info = datum(algorithm_id.encode()) + datum(apu) + datum(apv) + (length * 8).to_bytes(4, "big")
    return ConcatKDFHash(algorithm=hashes.SHA256(), length=length, otherinfo=other_info).derive(z)


def cbc_hmac_tag(key: bytes, aad: bytes, iv: bytes, ciphertext: bytes) -> bytes:
    half = len(key) // 2
    al = (len(aad) * 8).to_bytes(8, "big")
    return hmac.new(key[:half], aad + iv + ciphertext + al, CBC_HASH[len(key)]).digest()[:half]


def seal(enc: str, cek: bytes, iv: bytes, aad: bytes, plaintext: bytes):
    if enc.endswith("GCM"):
        sealed = AESGCM(cek).encrypt(iv, plaintext, aad)
        return sealed[:-16], sealed[-16:]
    half = len(cek) // 2
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(cek[half:]), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    return ciphertext, cbc_hmac_tag(cek, aad, iv, ciphertext)


def header_json(alg, enc, epk_jwk, kid=None, apu=b"", apv=b"") -> str:
    # The member order of RFC 7520's examples, which the Swift encrypter also writes.
    header = {"alg": alg}
    if kid is not None:
        header["kid"] = kid
    header["epk"] = epk_jwk
    if apu:
        header["apu"] = b64u(apu)
    if apv:
        header["apv"] = b64u(apv)
    header["enc"] = enc
    return compact_json(header)


def encrypt(recipient, alg, enc, plaintext: bytes, ephemeral, iv: bytes, cek=None, kid=None, apu=b"", apv=b"",
            header_text=None):
    """A compact JWE, and the pinned inputs that reproduce it."""
    z = ephemeral.exchange(ec.ECDH(), recipient.public_key())
    kek_bytes = KEY_WRAP_BYTES[alg]
    if kek_bytes is None:
        cek = concat_kdf(z, enc, apu, apv, ENC_KEY_BYTES[enc])
        encrypted_key = b""
    else:
        kek = concat_kdf(z, alg, apu, apv, kek_bytes)
        encrypted_key = aes_key_wrap(kek, cek)
    if header_text is None:
        header_text = header_json(alg, enc, public_jwk(ephemeral), kid, apu, apv)
    protected = b64u(header_text.encode())
    ciphertext, tag = seal(enc, cek, iv, protected.encode("ascii"), plaintext)
    compact = ".".join([protected, b64u(encrypted_key), b64u(iv), b64u(ciphertext), b64u(tag)])
    return compact, {"ephemeralD": private_jwk(ephemeral)["d"], "iv": b64u(iv),
                     **({"cek": b64u(cek)} if kek_bytes is not None else {})}


# ---- the published examples -----------------------------------------------------------------

# RFC 7518 Appendix C: Alice (the ephemeral key) and Bob (the recipient). TEST ONLY.
ALICE = {"kty": "EC", "crv": "P-256", "x": "gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0",
         "y": "SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps", "d": "0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo"}
BOB = {"kty": "EC", "crv": "P-256", "x": "weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ",
       "y": "e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck", "d": "VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"}
RFC7518_Z = bytes([158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156, 251, 49, 110,
                   163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196])
RFC7518_DERIVED = "VqqN6vgjbSBcIijNcacQGg"

alice_key, bob_key = key_from_jwk(ALICE), key_from_jwk(BOB)
assert alice_key.exchange(ec.ECDH(), bob_key.public_key()) == RFC7518_Z
assert bob_key.exchange(ec.ECDH(), alice_key.public_key()) == RFC7518_Z
assert b64u(concat_kdf(RFC7518_Z, "A128GCM", b"Alice", b"Bob", 16)) == RFC7518_DERIVED

# RFC 7520 §5.5: Meriadoc's key, the ephemeral key, the IV and the resulting JWE. TEST ONLY.
MERIADOC = {"kty": "EC", "crv": "P-256", "x": "Ze2loSV3wrroKUN_4zhwGhCqo3Xhu1td4QjeQ5wIVR0",
            "y": "HlLtdXARY_f55A3fnzQbPcm6hgr34Mp8p-nuzQCE0Zw", "d": "r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8"}
RFC7520_EPK_D = "AtH35vJsQ9SGjYfOsjUxYXQKrPH3FjZHmEtSKoSN8cM"
RFC7520_IV = "yc9N8v5sYyv3iGQT926IUg"
RFC7520_PLAINTEXT = ("You can trust us to stick with you through thick and thin\u2013to the bitter end. And you can "
                     "trust us to keep any secret of yours\u2013closer than you keep it yourself. But you cannot "
                     "trust us to let you face trouble alone, and go off without a word. We are your friends, "
                     "Frodo.")
RFC7520_COMPACT = (
    "eyJhbGciOiJFQ0RILUVTIiwia2lkIjoibWVyaWFkb2MuYnJhbmR5YnVja0BidWNrbGFuZC5leGFtcGxlIiwiZXBrIjp7Imt0eSI6IkVDIiwiY3J2"
    "IjoiUC0yNTYiLCJ4IjoibVBVS1RfYkFXR0hJaGcwVHBqanFWc1AxclhXUXVfdndWT0hIdE5rZFlvQSIsInkiOiI4QlFBc0ltR2VBUzQ2ZnlXdzVN"
    "aFlmR1RUMElqQnBGdzJTUzM0RHY0SXJzIn0sImVuYyI6IkExMjhDQkMtSFMyNTYifQ"
    "..yc9N8v5sYyv3iGQT926IUg."
    "BoDlwPnTypYq-ivjmQvAYJLb5Q6l-F3LIgQomlz87yW4OPKbWE1zSTEFjDfhU9IPIOSA9Bml4m7iDFwA-1ZXvHteLDtw4R1XRGMEsDIqAYtskTTm"
    "zmzNa-_q4F_evAPUmwlO-ZG45Mnq4uhM1fm_D9rBtWolqZSF3xGNNkpOMQKF1Cl8i8wjzRli7-IXgyirlKQsbhhqRzkv8IcY6aHl24j03C-AR2le"
    "1r7URUhArM79BY8soZU0lzwI-sD5PZ3l4NDCCei9XkoIAfsXJWmySPoeRb2Ni5UZL4mYpvKDiwmyzGd65KqVw7MsFfI_K767G9C9Azp73gKZD0Dy"
    "Un1mn0WW5LmyX_yJ-3AROq8p1WZBfG-ZyJ6195_JGG2m9Csg."
    "WCCkNa-x4BeB9hIDIfFuhg"
)
MERIADOC_KID = "meriadoc.brandybuck@buckland.example"
meriadoc_key = key_from_jwk(MERIADOC)
rfc7520_compact, rfc7520_inputs = encrypt(
    meriadoc_key, "ECDH-ES", "A128CBC-HS256", RFC7520_PLAINTEXT.encode(), private_key(unb64u(RFC7520_EPK_D)),
    unb64u(RFC7520_IV), kid=MERIADOC_KID)
assert rfc7520_compact == RFC7520_COMPACT, "RFC 7520 §5.5 not reproduced"

KEYS = {
    "rfc7520-meriadoc": dict(MERIADOC, comment="RFC 7520 §5.5 recipient key (kid meriadoc.brandybuck@buckland."
                                                "example). TEST ONLY."),
    "rfc7518-bob": dict(BOB, comment="RFC 7518 Appendix C, Bob's key (the recipient). TEST ONLY."),
    "rfc7518-alice": dict(ALICE, comment="RFC 7518 Appendix C, Alice's ephemeral key; here also a wrong "
                                         "recipient key. TEST ONLY."),
}
RECIPIENT = meriadoc_key

cases = []


def add(name, comment, compact, key="rfc7520-meriadoc", plaintext=None, error=None, inputs=None, source="project",
        replace_part=None):
    assert (plaintext is None) != (error is None)
    case = {"id": len(cases) + 1, "name": name, "source": source, "comment": comment, "key": key,
            "compact": compact}
    if replace_part is not None:
        case["replacePart"] = replace_part
    if plaintext is not None:
        case["expected"] = {"plaintext": plaintext}
        if inputs is not None:
            case["encryptionInputs"] = inputs
    else:
        case["expected"] = {"error": error}
    cases.append(case)


# ---- valid -----------------------------------------------------------------------------------

add("rfc7520-5.5", "RFC 7520 §5.5: ECDH-ES with A128CBC-HS256 on P-256, copied from the RFC. Decrypts with "
    "Meriadoc's key; encryptionInputs (the RFC's ephemeral key and IV) reproduce it byte for byte.",
    RFC7520_COMPACT, plaintext=RFC7520_PLAINTEXT, inputs=rfc7520_inputs, source="RFC 7520 §5.5")

RFC7518_PLAINTEXT = "Alice to Bob, with the key agreement of RFC 7518 Appendix C."
compact, inputs = encrypt(bob_key, "ECDH-ES", "A128GCM", RFC7518_PLAINTEXT.encode(), alice_key,
                          derived("iv rfc7518", 12), apu=b"Alice", apv=b"Bob")
add("rfc7518-appendix-c", "The inputs of RFC 7518 Appendix C (Alice's ephemeral key, apu Alice, apv Bob, "
    "A128GCM) to Bob: the content key is the appendix's derived key VqqN6vgjbSBcIijNcacQGg, so the tag only "
    "verifies if the Concat KDF is right. The plaintext and IV are this project's.",
    compact, key="rfc7518-bob", plaintext=RFC7518_PLAINTEXT, inputs=inputs, source="RFC 7518 Appendix C + project")

OPERATIONS = ('{"operations":[{"creationTimeInEpochMillis":1767225600000,"dispatchChannel":"link",'
              '"payload":{"contentType":"application/json","version":"1","redeemData":{"token":"t-1",'
              '"redeemUrl":"https://backend.example/nevisfido/token/redeem/authentication"}}}]}')
PLAINTEXTS = [OPERATIONS, "", "exactly sixteen!", "Grüße, 🔑 and a longer text that spans several AES blocks."]
index = 0
for alg in KEY_WRAP_BYTES:
    for enc in ENC_KEY_BYTES:
        label = f"{alg} {enc}"
        text = PLAINTEXTS[index % len(PLAINTEXTS)]
        kid = "device-encryption-key" if index % 3 == 0 else None
        apu, apv = (b"backend", b"device-42") if index % 5 == 2 else (b"", b"")
        cek = derived("cek " + label, ENC_KEY_BYTES[enc]) if KEY_WRAP_BYTES[alg] else None
        compact, inputs = encrypt(RECIPIENT, alg, enc, text.encode(), ephemeral_key(label),
                                  derived("iv " + label, iv_bytes(enc)), cek=cek, kid=kid, apu=apu, apv=apv)
        what = {OPERATIONS: "an operations answer", "": "the empty plaintext", "exactly sixteen!": "one whole "
                "block (CBC adds a block of padding)"}.get(text, "non-ASCII text over several blocks")
        add(f"{alg}-{enc}".lower(), f"alg {alg}, enc {enc}: {what}"
            + (", with kid" if kid else "") + (", with apu and apv" if apu else "") + ".",
            compact, plaintext=text, inputs=inputs)
        index += 1

good_gcm, _ = encrypt(RECIPIENT, "ECDH-ES", "A256GCM", OPERATIONS.encode(), ephemeral_key("good gcm"),
                      derived("iv good gcm", 12))
good_cbc, _ = encrypt(RECIPIENT, "ECDH-ES", "A128CBC-HS256", OPERATIONS.encode(), ephemeral_key("good cbc"),
                      derived("iv good cbc", 16))
good_kw, _ = encrypt(RECIPIENT, "ECDH-ES+A128KW", "A256GCM", OPERATIONS.encode(), ephemeral_key("good kw"),
                     derived("iv good kw", 12), cek=derived("cek good kw", 32))
epk = public_jwk(ephemeral_key("good gcm"))

loose_header = json.dumps({"enc": "A256GCM", "typ": "JOSE", "x-unknown": [1, {"a": None}],
                           "epk": public_jwk(ephemeral_key("loose")), "alg": "ECDH-ES"}, indent=1)
compact, _ = encrypt(RECIPIENT, "ECDH-ES", "A256GCM", b"unknown members ignored", ephemeral_key("loose"),
                     derived("iv loose", 12), header_text=loose_header)
add("header-whitespace-unknown-members", "A header with whitespace, another member order, typ and an unknown "
    "member (ignored, RFC 7516 §4): valid.", compact, plaintext="unknown members ignored")


def parts(compact):
    return compact.split(".")


def with_part(compact, index, value):
    p = parts(compact)
    p[index] = value
    return ".".join(p)


def flip(text: str, byte_index: int) -> str:
    data = bytearray(unb64u(text))
    data[byte_index] ^= 0x01
    return b64u(bytes(data))


def with_header(compact, header: str):
    """The same encrypted parts under another protected header (the AAD changes too)."""
    return with_part(compact, 0, b64u(header.encode()))


def sealed_under(header: str, alg="ECDH-ES", enc="A256GCM"):
    """The operations answer encrypted under this very header (it is the AAD), with the key
    agreement of good_gcm: a reader that skipped the check the case is about would decrypt it, so
    a missing check shows as a plaintext, not as another error."""
    cek = derived("cek sealed " + header, ENC_KEY_BYTES[enc]) if KEY_WRAP_BYTES[alg] else None
    compact, _ = encrypt(RECIPIENT, alg, enc, OPERATIONS.encode(), ephemeral_key("good gcm"),
                         derived("iv sealed " + header, iv_bytes(enc)), cek=cek, header_text=header)
    return compact


def header_with(alg="ECDH-ES", enc="A256GCM", epk_jwk=None, **extra):
    header = {"alg": alg, "epk": epk_jwk if epk_jwk is not None else epk, "enc": enc}
    header.update(extra)
    return compact_json(header)


# ---- invalid: after the header is accepted, one error ----------------------------------------

add("flipped-tag-gcm", "One bit of the A256GCM tag flipped.", with_part(good_gcm, 4, flip(parts(good_gcm)[4], 0)),
    error="decryptionFailed")
add("flipped-tag-cbc", "One bit of the A128CBC-HS256 tag flipped.",
    with_part(good_cbc, 4, flip(parts(good_cbc)[4], 15)), error="decryptionFailed")
add("flipped-ciphertext", "One bit of the ciphertext flipped.",
    with_part(good_cbc, 3, flip(parts(good_cbc)[3], 20)), error="decryptionFailed")
add("flipped-iv", "One bit of the IV flipped.", with_part(good_gcm, 2, flip(parts(good_gcm)[2], 3)),
    error="decryptionFailed")
add("flipped-wrapped-key", "One bit of the AES-wrapped content key flipped: the RFC 3394 check fails.",
    with_part(good_kw, 1, flip(parts(good_kw)[1], 9)), error="decryptionFailed")
add("header-changed", "A kid added to the protected header after encryption: the AAD no longer matches.",
    with_header(good_gcm, header_with(kid="added")), error="decryptionFailed")
add("wrong-recipient-key", "Encrypted to Meriadoc's key, decrypted with another.", good_gcm, key="rfc7518-alice",
    error="decryptionFailed")
# A valid tag over a ciphertext whose last block does not decrypt to PKCS #7 padding.
bad_padding_cek = concat_kdf(ephemeral_key("bad padding").exchange(ec.ECDH(), RECIPIENT.public_key()),
                             "A128CBC-HS256", b"", b"", 32)
bad_padding_header = b64u(header_json("ECDH-ES", "A128CBC-HS256", public_jwk(ephemeral_key("bad padding"))).encode())
bad_padding_iv = derived("iv bad padding", 16)
raw_encryptor = Cipher(algorithms.AES(bad_padding_cek[16:]), modes.CBC(bad_padding_iv)).encryptor()
bad_padding_ciphertext = raw_encryptor.update(b"sixteen bytes..\x00" + b"\x11" * 16) + raw_encryptor.finalize()
add("bad-padding-valid-tag", "The tag is valid but the plaintext's last block ends in 0x11 (not PKCS #7 "
    "padding): the same error as a bad tag, so there is no padding oracle.",
    ".".join([bad_padding_header, "", b64u(bad_padding_iv), b64u(bad_padding_ciphertext),
              b64u(cbc_hmac_tag(bad_padding_cek, bad_padding_header.encode(), bad_padding_iv,
                                bad_padding_ciphertext))]), error="decryptionFailed")

# ---- invalid: the epk, checked before any key agreement ----------------------------------------

x, y = int.from_bytes(unb64u(epk["x"]), "big"), int.from_bytes(unb64u(epk["y"]), "big")
off_curve = dict(epk, y=b64u(((y + 1) % P256_PRIME).to_bytes(32, "big")))
add("epk-invalid-curve", "epk (x, y + 1): not on P-256 (an invalid-curve attack point).",
    with_header(good_gcm, header_with(epk_jwk=off_curve)), error="invalidKey")
add("epk-zero-point", "epk (0, 0): not on the curve.", with_header(good_gcm, header_with(
    epk_jwk=dict(epk, x=b64u(bytes(32)), y=b64u(bytes(32))))), error="invalidKey")
p384 = ec.derive_private_key(int.from_bytes(derived("p384", 48), "big") % 2**380 + 1, ec.SECP384R1())
p384_numbers = p384.public_key().public_numbers()
add("epk-p384", "epk on P-384 (crv P-384, 48-byte coordinates).", with_header(good_gcm, header_with(
    epk_jwk={"kty": "EC", "crv": "P-384", "x": b64u(p384_numbers.x.to_bytes(48, "big")),
             "y": b64u(p384_numbers.y.to_bytes(48, "big"))})), error="unsupportedCurve")
add("epk-okp", "epk an X25519 key (kty OKP).", with_header(good_gcm, header_with(
    epk_jwk={"kty": "OKP", "crv": "X25519", "x": "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"})),
    error="unsupportedKeyType")
add("epk-rsa-kty", "epk with kty RSA (and EC members).", with_header(good_gcm, header_with(
    epk_jwk=dict(epk, kty="RSA"))), error="unsupportedKeyType")
add("epk-short-coordinate", "epk x of 31 bytes.", with_header(good_gcm, header_with(
    epk_jwk=dict(epk, x=b64u(unb64u(epk["x"])[1:])))), error="malformedEncoding")
add("epk-missing", "No epk.", with_header(good_gcm, compact_json({"alg": "ECDH-ES", "enc": "A256GCM"})),
    error="malformedJWE")
add("epk-with-private-key", "epk carries a private member d (sealed under this header).", sealed_under(
    header_with(epk_jwk=dict(epk, d=private_jwk(ephemeral_key("good gcm"))["d"]))), error="malformedJWE")
# A coordinate of p or more: x + p encodes the same field element as x, for a point with a small x.
small_x = next(candidate for candidate in range(1, 1000)
               if pow((candidate**3 - 3 * candidate + 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B)
                      % P256_PRIME, (P256_PRIME - 1) // 2, P256_PRIME) == 1)
small_y = pow((small_x**3 - 3 * small_x + 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B)
              % P256_PRIME, (P256_PRIME + 1) // 4, P256_PRIME)
assert (small_y * small_y - (small_x**3 - 3 * small_x + 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B)) \
    % P256_PRIME == 0
add("epk-coordinate-not-reduced", f"epk x is p + {small_x}: the point ({small_x}, y) is on the curve, but a "
    "coordinate must be below p (SEC 1 §2.3.4).", with_header(good_gcm, header_with(epk_jwk=dict(
        epk, x=b64u((small_x + P256_PRIME).to_bytes(32, "big")), y=b64u(small_y.to_bytes(32, "big"))))),
    error="invalidKey")

# ---- invalid: algorithms --------------------------------------------------------------------

for name, alg, comment in [("alg-none", "none", "alg none."), ("alg-dir", "dir", "alg dir (a shared key)."),
                           ("alg-rsa-oaep-256", "RSA-OAEP-256", "An RSA key transport alg."),
                           ("alg-a128kw", "A128KW", "AES Key Wrap with a shared key, no key agreement."),
                           ("alg-is-enc", "A256GCM", "An enc value as alg.")]:
    add(name, comment, with_header(good_gcm, header_with(alg=alg)), error="unsupportedAlgorithm")
add("alg-lowercase", "alg in lower case (values are case-sensitive; sealed under this header).",
    sealed_under(header_with(alg="ecdh-es")), error="unsupportedAlgorithm")
add("alg-kelvin-sign", "alg ECDH-ES+A128\u212aW: a KELVIN SIGN, which Unicode normalization turns into K. "
    "Values are compared code point by code point, never normalized (RFC 7515 §5.3); sealed under this header "
    "as ECDH-ES+A128KW.", sealed_under(header_with(alg="ECDH-ES+A128\u212aW"), alg="ECDH-ES+A128KW"),
    error="unsupportedAlgorithm")
add("alg-missing", "No alg.", with_header(good_gcm, compact_json({"epk": epk, "enc": "A256GCM"})),
    error="unsupportedAlgorithm")
add("alg-number", "alg as a number.", with_header(good_gcm, header_with(alg=1)), error="unsupportedAlgorithm")
add("enc-is-alg", "An alg value as enc.", with_header(good_gcm, header_with(enc="ECDH-ES")),
    error="unsupportedAlgorithm")
add("enc-a128cbc", "enc A128CBC (no HMAC: not a JWE content encryption).",
    with_header(good_gcm, header_with(enc="A128CBC")), error="unsupportedAlgorithm")
add("enc-missing", "No enc.", with_header(good_gcm, compact_json({"alg": "ECDH-ES", "epk": epk})),
    error="unsupportedAlgorithm")
add("alg-enc-mismatch", "enc says A256GCM but the parts were made for A128CBC-HS256 (16-byte IV, 16-byte "
    "tag): the IV has the wrong length for GCM.", with_header(good_cbc, header_with(enc="A256GCM")),
    error="malformedJWE")
add("direct-with-encrypted-key", "alg ECDH-ES (direct) with a non-empty encrypted key.",
    with_part(good_gcm, 1, parts(good_kw)[1]), error="malformedJWE")
add("wrapped-key-wrong-length", "ECDH-ES+A128KW with a 32-byte encrypted key (A256GCM needs 40).",
    with_part(good_kw, 1, b64u(unb64u(parts(good_kw)[1])[:32])), error="malformedJWE")
add("zip", "zip DEF (compressed plaintext; sealed under this header).", sealed_under(header_with(zip="DEF")),
    error="unsupportedAlgorithm")
add("crit", "crit naming an extension (sealed under this header).",
    sealed_under(header_with(crit=["exp"], exp=1)), error="malformedJWE")

# ---- invalid: structure ---------------------------------------------------------------------

add("duplicate-alg", "alg twice (RSA-OAEP then ECDH-ES; sealed under this header, so readers that keep the "
    "last would decrypt it).",
    sealed_under('{"alg":"RSA-OAEP","alg":"ECDH-ES","epk":' + compact_json(epk) + ',"enc":"A256GCM"}'),
    error="malformedJWE")
add("duplicate-alg-escaped", "alg twice, the second spelled \\u0061lg (sealed under this header).",
    sealed_under('{"alg":"ECDH-ES","\\u0061lg":"ECDH-ES","epk":' + compact_json(epk) + ',"enc":"A256GCM"}'),
    error="malformedJWE")
add("duplicate-in-epk", "x twice inside epk (sealed under this header).",
    sealed_under('{"alg":"ECDH-ES","epk":{"kty":"EC","crv":"P-256","x":"' + epk["x"] + '","x":"'
                 + epk["x"] + '","y":"' + epk["y"] + '"},"enc":"A256GCM"}'), error="malformedJWE")
add("header-not-object", "The header is a JSON array.", with_header(good_gcm, '["ECDH-ES","A256GCM"]'),
    error="malformedJWE")
add("header-not-json", "The header is not JSON.", with_header(good_gcm, "alg=ECDH-ES"), error="malformedJWE")
add("kid-not-string", "kid as a number (sealed under this header).", sealed_under(header_with(kid=7)),
    error="malformedJWE")
add("apu-not-base64url", "apu with a '+' (standard base64).", with_header(good_gcm, header_with(apu="QW+x")),
    error="malformedJWE")
add("apu-too-long", "apu of 513 bytes (limit 512).", with_header(good_gcm, header_with(apu=b64u(b"u" * 513))),
    error="malformedJWE")
add("four-parts", "Four parts.", ".".join(parts(good_gcm)[:4]), error="malformedJWE")
add("six-parts", "Six parts.", good_gcm + "." + parts(good_gcm)[4], error="malformedJWE")
add("empty-header", "An empty protected header.", with_part(good_gcm, 0, ""), error="malformedJWE")
add("padding-in-tag", "base64 padding on the tag.", with_part(good_gcm, 4, parts(good_gcm)[4] + "=="),
    error="malformedJWE")
add("plus-in-ciphertext", "'+' in the ciphertext (standard base64, not base64url).",
    with_part(good_gcm, 3, "+" + parts(good_gcm)[3][1:]), error="malformedJWE")
add("truncated-tag", "The A128CBC-HS256 tag cut to 15 bytes.",
    with_part(good_cbc, 4, b64u(unb64u(parts(good_cbc)[4])[:15])), error="malformedJWE")
add("gcm-tag-12-bytes", "A 96-bit GCM tag (only 128 bits are accepted).",
    with_part(good_gcm, 4, b64u(unb64u(parts(good_gcm)[4])[:12])), error="malformedJWE")
add("gcm-iv-16-bytes", "A 16-byte IV with A256GCM (96 bits required).",
    with_part(good_gcm, 2, b64u(derived("iv 16", 16))), error="malformedJWE")
add("cbc-partial-block", "A CBC ciphertext of 17 bytes (not whole blocks).",
    with_part(good_cbc, 3, b64u(unb64u(parts(good_cbc)[3])[:17])), error="malformedJWE")

# ---- invalid: sizes, checked before decoding (replacePart: that part is `length` copies of `fill`) ----

add("oversized-compact", "The ciphertext part is 1 MiB of 'A': the whole JWE is longer than 1 MiB.", good_gcm,
    error="inputTooLarge", replace_part={"index": 3, "fill": "A", "length": 1 << 20})
add("oversized-header", "A header part of 5463 characters (more than 4 KiB decoded).", good_gcm,
    error="inputTooLarge", replace_part={"index": 0, "fill": "e", "length": 5463})
add("oversized-encrypted-key", "An encrypted key part of 97 characters (more than 72 bytes).", good_kw,
    error="inputTooLarge", replace_part={"index": 1, "fill": "A", "length": 97})
add("oversized-iv", "An IV part of 23 characters (more than 16 bytes).", good_gcm,
    error="inputTooLarge", replace_part={"index": 2, "fill": "A", "length": 23})
add("oversized-tag", "A tag part of 44 characters (more than 32 bytes).", good_gcm,
    error="inputTooLarge", replace_part={"index": 4, "fill": "A", "length": 44})
big_header = header_with(kid="k" * (4097 - len(header_with(kid=""))))
assert len(big_header) == 4097
add("header-json-4097", "A header of 4097 bytes of JSON (limit 4096): its part, 5463 characters, is over the "
    "header part's limit, which is what keeps the JSON within 4 KiB (no part within the limit decodes to more).",
    with_header(good_gcm, big_header), error="inputTooLarge")

# ---- added after the cases above: appended, so that their ids stay as they were -------------------

BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
good_tag = parts(good_gcm)[4]  # 16 bytes: 22 characters, the last one holding 4 bits and 2 unused ones
assert len(good_tag) == 22 and BASE64URL.index(good_tag[-1]) & 0b11 == 0
add("tag-nonzero-unused-bits", "The A256GCM tag's last character changed so that its two unused bits are not "
    "zero: a lenient base64url decoder reads the same 16 bytes and decrypts (RFC 4648 §3.5).",
    with_part(good_gcm, 4, good_tag[:-1] + BASE64URL[BASE64URL.index(good_tag[-1]) | 0b01]), error="malformedJWE")
add("iv-length-1-mod-4", "An IV part of 17 characters: no byte string has a base64url of a length that is 1 "
    "mod 4.", with_part(good_gcm, 2, parts(good_gcm)[2] + "A"), error="malformedJWE")
add("crit-empty", "crit as an empty list, which RFC 7515 §4.1.11 does not allow (sealed under this header).",
    sealed_under(header_with(crit=[])), error="malformedJWE")
add("zip-null", "zip present with the value null (sealed under this header).",
    sealed_under(header_with(zip=None)), error="unsupportedAlgorithm")
add("iv-not-base64url-before-oversized-tag", "An IV of '!!!!' and a tag part of 44 characters: parts are checked "
    "one by one, limit then encoding, so the IV's encoding fails first (a reader that checks every limit "
    "first says inputTooLarge).", with_part(with_part(good_gcm, 2, "!!!!"), 4, "A" * 44), error="malformedJWE")
# epk-coordinate-not-reduced again, but sealed to the point a reader that reduced x mod p would use:
# without the check on the coordinate it would decrypt, not fail later for another reason.
unreduced_point = ec.EllipticCurvePublicNumbers(small_x, small_y, ec.SECP256R1()).public_key()
unreduced_header = b64u(header_with(epk_jwk=dict(
    epk, x=b64u((small_x + P256_PRIME).to_bytes(32, "big")), y=b64u(small_y.to_bytes(32, "big")))).encode())
unreduced_cek = concat_kdf(RECIPIENT.exchange(ec.ECDH(), unreduced_point), "A256GCM", b"", b"", 32)
unreduced_iv = derived("iv unreduced", 12)
unreduced_ciphertext, unreduced_tag = seal("A256GCM", unreduced_cek, unreduced_iv, unreduced_header.encode("ascii"),
                                           OPERATIONS.encode())
add("epk-coordinate-not-reduced-sealed", f"epk x is p + {small_x}, sealed to the point ({small_x}, y) that x "
    "mod p names: only the check that a coordinate is below p refuses it (SEC 1 §2.3.4).",
    ".".join([unreduced_header, "", b64u(unreduced_iv), b64u(unreduced_ciphertext), b64u(unreduced_tag)]),
    error="invalidKey")

document = {
    "description": "JWE compact serialization (RFC 7516) with ECDH-ES on P-256 (RFC 7518 §4.6): the RFC 7518 "
                   "Appendix C key agreement, RFC 7520 §5.5, and this project's valid and invalid cases. Decrypt "
                   "each case's compact with the private key named by `key`: valid cases give the plaintext, "
                   "invalid ones fail with the DeviceSigningError code in expected.error.",
    "source": "scripts/jwe-vectors.py (Python json, base64, hashlib, hmac and the cryptography package); "
              "see Vectors/README.md, jwe-ecdh-es.json.",
    "testOnly": "Every key is a published RFC example. Never use them for anything but tests.",
    "keys": KEYS,
    "rfc7518AppendixC": {
        "comment": "RFC 7518 Appendix C: Alice's ephemeral key and Bob's key agree on Z; the Concat KDF "
                   "with SHA-256, AlgorithmID A128GCM, PartyUInfo Alice, PartyVInfo Bob and 128 bits gives "
                   "derivedKey.",
        "ephemeralKey": "rfc7518-alice",
        "recipientKey": "rfc7518-bob",
        "algorithmID": "A128GCM",
        "apu": b64u(b"Alice"),
        "apv": b64u(b"Bob"),
        "keyBits": 128,
        "sharedSecretZ": list(RFC7518_Z),
        "derivedKey": RFC7518_DERIVED,
    },
    "cases": cases,
}
json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
sys.stdout.write("\n")
