#!/usr/bin/env python3
"""Writes the seed corpus of one fuzz target into a directory (scripts/fuzz.sh calls it).

    python3 scripts/fuzz/seeds.py TARGET OUTDIR

Seeds come from Vectors/*.json, Keys/*.pem and string literals of the test sources, laid out as
the target's entry point (scripts/fuzz/Targets/TARGET.swift) reads its input. Nothing here is
committed as a corpus: the seeds are rebuilt from the sources of truth at every run. Encrypted
and converted keys are made with the `openssl` command when it is installed (skipped otherwise).
Standard library only.
"""

import base64
import glob
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PASSPHRASE = "fuzz-passphrase"  # the key-import target's fixed passphrase


def vector(name):
    with open(os.path.join(ROOT, "Vectors", name), encoding="utf-8") as handle:
        return json.load(handle)


def test_sources():
    for path in sorted(glob.glob(os.path.join(ROOT, "Tests", "**", "*.swift"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            yield handle.read()


def swift_unescape(literal):
    """The value of a single-line Swift string literal body (the escapes the tests use)."""
    out, i = [], 0
    simple = {"r": "\r", "n": "\n", "t": "\t", "0": "\0", '"': '"', "\\": "\\", "'": "'"}
    while i < len(literal):
        c = literal[i]
        if c == "\\" and i + 1 < len(literal):
            nxt = literal[i + 1]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
                continue
            if nxt == "u" and literal[i + 2:i + 3] == "{":
                end = literal.index("}", i)
                out.append(chr(int(literal[i + 3:end], 16)))
                i = end + 1
                continue
            if nxt == "(":  # interpolation: keep a plausible placeholder
                depth, j = 1, i + 2
                while j < len(literal) and depth:
                    depth += {"(": 1, ")": -1}.get(literal[j], 0)
                    j += 1
                out.append("x")
                i = j
                continue
        out.append(c)
        i += 1
    return "".join(out)


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def i64(value):
    return struct.pack("<q", max(-(2 ** 63), min(2 ** 63 - 1, value)))


def short(data):
    return bytes([min(len(data), 255)]) + data[:255]


def openssl(*args, stdin=None):
    try:
        return subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


# ---------------------------------------------------------------------------------------------
# Per-target seeds


def seeds_jws():
    jws = vector("jws-es256.json")
    for case in jws["valid"] + jws["invalid"]:
        yield case["compact"].encode()
    ds = vector("device-signature.json")
    for case in ds["positive"] + ds["verification"]:
        yield case["compact"].encode()


def device_signature_payloads():
    ds = vector("device-signature.json")
    for case in ds["positive"]:
        yield case["payloadJSON"].encode(), case["verifierTimeMillis"]
    for case in ds["verification"]:
        parts = case["compact"].split(".")
        if len(parts) == 3:
            try:
                yield b64url_decode(parts[1]), case["verifierTimeMillis"]
            except ValueError:
                pass


def seeds_device_signature():
    ds = vector("device-signature.json")
    for case in ds["positive"] + ds["verification"]:
        yield b"\x00" + i64(case["verifierTimeMillis"]) + case["compact"].encode()
    for payload, clock in device_signature_payloads():
        yield b"\x01" + payload
        yield b"\x02" + i64(clock) + payload
    for case in ds["positive"]:
        yield (b"\x03" + short(case["dispatchTargetId"].encode()) + short(case["requestId"].encode())
               + i64(case["creationTimeInEpochMillis"]))


JWE_KEY_MODES = {"rfc7520-meriadoc": 0, "rfc7518-bob": 1, "rfc7518-alice": 2}  # jwe.swift's modes
JWE_MAX_LEN = 8192  # scripts/fuzz.sh max_len_of jwe


def seeds_jwe():
    data = vector("jwe-ecdh-es.json")
    plaintexts = []
    for case in data["cases"]:
        compact = case["compact"]
        mode = bytes([JWE_KEY_MODES[case["key"]]])
        yield mode + compact.encode()
        if "plaintext" in case["expected"]:
            plaintexts.append(case["expected"]["plaintext"].encode())
        replace = case.get("replacePart")
        if replace:
            parts = compact.split(".")
            parts[replace["index"]] = replace["fill"] * replace["length"]
            replaced = ".".join(parts).encode()
            if len(replaced) + 1 <= JWE_MAX_LEN:
                yield mode + replaced
            else:
                # Over 1 MiB: mode 4 (first byte 255) repeats the compact to one byte over the limit.
                yield b"\xff\x09" + compact.encode()
    yield b"\xff\x08" + data["cases"][0]["compact"].encode()  # exactly at the limit
    # Round trips (mode 3): every alg x enc pair, the flags in turn, a change at a spread of places.
    plaintexts = sorted(set(plaintexts)) or [b""]
    for pair in range(24):
        flags = [0, 1 | 2 | 4, 8, 16, 1][pair % 5]
        head = bytes([3, pair, flags])
        if flags & 1:
            head += short("fuzz-kid-\u00e9\u0000\"".encode())
        if flags & 2:
            head += short(b"Alice")
        if flags & 4:
            head += short(b"Bob")
        position = (pair * 37) % 400
        yield head + struct.pack("<H", position) + bytes([1 << (pair % 8)]) + plaintexts[pair % len(plaintexts)]


def seeds_pending_operations():
    for case in vector("pending-operations.json")["cases"]:
        yield case["body"].encode()


def answer_wire(status, headers, body):
    """An answer as it comes off the wire: status line, header lines, an empty line, the body."""
    head = f"HTTP/1.1 {status} X\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (head + "\r\n").encode() + body.encode()


def seeds_answers():
    """Mode byte, splice count (and positions), the estimate, then the answer (Targets/answers.swift)."""
    no_estimate = struct.pack("<q", 0)
    for row in vector("error-mapping.json")["rows"]:
        answer = row["input"].get("answer")
        if answer is None:
            continue
        wire = answer_wire(answer["status"], answer.get("headers", {}), answer.get("body", ""))
        estimate = struct.pack("<q", row["input"].get("estimatedOffsetMillis", 0) or 0)
        yield bytes([0, 0]) + estimate + wire
        # The same answer echoing the Device-Signature once, after its head.
        yield bytes([0, 1]) + struct.pack("<H", wire.find(b"\r\n\r\n") + 4) + estimate + wire
    jose = {"Content-Type": "application/jose;charset=UTF-8"}
    for case in vector("jwe-ecdh-es.json")["cases"]:
        if case.get("key") == "rfc7520-meriadoc" and "compact" in case:
            yield bytes([1, 0]) + no_estimate + answer_wire(200, jose, case["compact"])
    json_type = {"Content-Type": "application/json"}
    redemptions = [
        (200, '{"statusCode":1200,"uafRequest":"{}","op":"Auth","lifetimeMillis":120000}'),
        (410, '{"errorCode":"TOKEN_ALREADY_REDEEMED"}'),
        (410, '{"errorCode":"TOKEN_EXPIRED"}'),
        (200, '{"op":"Auth","op":"Reg"}'),
        (400, '{"errorCode":"TOKEN_ALREADY_REDEEMED","errorCode":"TOKEN_EXPIRED"}'),
    ]
    for status, body in redemptions:
        wire = answer_wire(status, json_type, body)
        yield bytes([2, 0]) + no_estimate + wire
        yield bytes([2, 1]) + struct.pack("<H", len(wire) - 2) + no_estimate + wire


def seeds_http_request():
    literal = re.compile(r'raw:\s*"((?:[^"\\]|\\.)*)"')
    for source in test_sources():
        for match in literal.finditer(source):
            yield swift_unescape(match.group(1)).encode("utf-8")
    ds = vector("device-signature.json")
    compact = ds["positive"][0]["compact"]
    body = vector("pending-operations.json")["cases"][1]["body"]
    yield ("GET /nevisfido/devices/outofbandoperations/device-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           f"Device-Signature: {compact}\r\nAccept: application/json\r\n\r\n").encode()
    yield (f"POST /_emulator/dispatch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body.encode())}\r\n\r\n{body}").encode()
    yield (b"POST /nevisfido/token/redeem/authentication HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n"
           b"Expect: 100-continue\r\n\r\n{\"token\":\"t\"}GET /again HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    yield b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    yield b"\r\n\r\nGET http://a/p?q=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"


def seeds_key_import():
    pems = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Keys", "*.pem"))):
        with open(path, "rb") as handle:
            pems.append(handle.read())
    block = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)
    for source in test_sources():
        for match in block.finditer(source):
            lines = [line.strip() for line in match.group(0).splitlines()]
            if all(re.fullmatch(r"[A-Za-z0-9+/=]*|-----.*-----", line) for line in lines):
                pems.append(("\n".join(lines) + "\n").encode())

    def pem_label(pem):
        found = re.search(rb"-----BEGIN ([A-Z0-9 ]+)-----", pem)
        return found.group(1).decode() if found else ""

    for pem in pems:
        label = pem_label(pem)
        if label in ("PRIVATE KEY", "EC PRIVATE KEY"):
            yield b"\x00" + pem
            yield b"\x06" + pem
        elif label == "PUBLIC KEY":
            yield b"\x01" + pem
        elif label == "ENCRYPTED PRIVATE KEY":
            yield b"\x06" + pem

    # Conversions and encrypted forms of the fixture keys, when the openssl command is there.
    generated = []
    for extra in (["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
                  ["genpkey", "-algorithm", "ED25519"],
                  ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
                  ["ecparam", "-name", "prime256v1", "-param_enc", "explicit", "-genkey", "-noout"]):
        key = openssl(*extra)
        if key:
            generated.append(key)
    for pem in [p for p in pems if pem_label(p) in ("PRIVATE KEY", "EC PRIVATE KEY")][:4] + generated:
        with tempfile.NamedTemporaryFile(suffix=".pem") as handle:
            handle.write(pem)
            handle.flush()
            name = handle.name
            for converted, mode in (
                (openssl("pkey", "-in", name, "-outform", "DER"), b"\x02"),
                (openssl("ec", "-in", name, "-outform", "DER"), b"\x02"),
                (openssl("pkey", "-in", name, "-pubout"), b"\x01"),
                (openssl("pkey", "-in", name, "-pubout", "-outform", "DER"), b"\x03"),
                (openssl("ec", "-in", name, "-pubout", "-conv_form", "compressed", "-outform", "DER"), b"\x03"),
                # Cheap KDF costs, within the target's cap (2048): PBKDF2 1000, scrypt N=128 r=8.
                (openssl("pkcs8", "-topk8", "-in", name, "-v2", "aes-256-cbc", "-v2prf", "hmacWithSHA256",
                         "-iter", "1000", "-passout", "pass:" + PASSPHRASE), b"\x06"),
                (openssl("pkcs8", "-topk8", "-in", name, "-v2", "aes-128-cbc", "-iter", "1",
                         "-passout", "pass:" + PASSPHRASE), b"\x06"),
                (openssl("pkcs8", "-topk8", "-in", name, "-scrypt", "-scrypt_N", "128", "-scrypt_r", "8",
                         "-scrypt_p", "1", "-passout", "pass:" + PASSPHRASE), b"\x06"),
                (openssl("pkcs8", "-topk8", "-in", name, "-v2", "aes-256-cbc", "-iter", "1000",
                         "-passout", "pass:another-passphrase"), b"\x06"),
            ):
                if converted:
                    yield mode + converted
            if pem in generated:
                yield b"\x00" + pem

    # JWKs from the vectors.
    for name in ("device-signature.json", "jws-es256.json"):
        data = vector(name)
        for key in (data.get("key"), data.get("otherKey")):
            if not key:
                continue
            public = {k: key[k] for k in ("kty", "crv", "x", "y")}
            yield b"\x05" + json.dumps(public, separators=(",", ":")).encode()
            if "d" in key:
                yield b"\x04" + json.dumps(dict(public, d=key["d"]), separators=(",", ":")).encode()
                d, x, y = (b64url_decode(key[k]) for k in ("d", "x", "y"))
                yield b"\x07\x00" + d
                yield b"\x07\x01" + b"\x04" + x + y + d
            x, y = b64url_decode(key["x"]), b64url_decode(key["y"])
            yield b"\x07\x02" + x + y
            yield b"\x07\x03" + b"\x04" + x + y
            yield b"\x07\x04" + bytes([2 + (y[-1] & 1)]) + x

    # Signatures (RFC 6979 A.2.5), raw and DER.
    for case in vector("rfc6979-p256.json")["cases"]:
        r, s = bytes.fromhex(case["rHex"]), bytes.fromhex(case["sHex"])
        yield b"\x07\x06" + r + s
        yield b"\x07\x05" + der_signature(r, s)


def der_signature(r, s):
    def integer(value):
        value = value.lstrip(b"\x00") or b"\x00"
        if value[0] & 0x80:
            value = b"\x00" + value
        return b"\x02" + bytes([len(value)]) + value
    body = integer(r) + integer(s)
    return b"\x30" + bytes([len(body)]) + body


def seeds_http_date():
    dates = set()
    for row in vector("clock-skew.json")["rows"]:
        if row["input"].get("dateHeader") is not None:
            dates.add(row["input"]["dateHeader"])
    literal = re.compile(r'"((?:Sun|Mon|Tue|Wed|Thu|Fri|Sat)[a-z]*[ ,][^"]*)"')
    for source in test_sources():
        for match in literal.finditer(source):
            dates.add(swift_unescape(match.group(1)))
    return (date.encode() for date in sorted(dates))


# The backend-router target's fixed world (Targets/backend-router.swift): the vectors' dispatch
# targets registered for these devices, `~X` Device-Signatures and `"~X"` tokens made by the target.
ROUTER_DEVICES = ("fuzz-device-1", "fuzz-device-2")
ROUTER_DISPATCH = "/_emulator/dispatch"
ROUTER_OPERATIONS = "/nevisfido/devices/outofbandoperations/"
ROUTER_TARGETS = "/nevisfido/token/dispatch/targets"
ROUTER_REDEEM = "/nevisfido/token/redeem/"


def http_request(method, path, body=None, headers=(), host="127.0.0.1"):
    """One HTTP/1.1 request as a client writes it; a body is sent as JSON unless a header says otherwise."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers]
    data = b""
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        if not any(name.lower() == "content-type" for name, _ in headers):
            lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def seeds_backend_router():
    """Connections of requests (Targets/backend-router.swift), from the README's and the tests' flows."""
    ds = vector("device-signature.json")
    keys = vector("jwe-ecdh-es.json")["keys"]

    def public(key, **extra):
        return dict({k: key[k] for k in ("kty", "crv", "x", "y")}, **extra)

    fixture_jwk, other_jwk = public(ds["key"]), public(ds["otherKey"])
    recipient_jwk = public(keys["rfc7520-meriadoc"], use="enc")
    first_target = ds["verifier"]["dispatchTargets"][0]
    second_target = ds["verifier"]["dispatchTargets"][1]
    by_target = {}
    for case in ds["positive"]:
        by_target.setdefault(case["dispatchTargetId"], []).append(case["compact"])
    signed = by_target[first_target]
    device1, device2 = ROUTER_DEVICES

    def dispatch(device, **extra):
        return http_request("POST", ROUTER_DISPATCH, dict({"deviceId": device, "channel": "link"}, **extra))

    def fetch(device, signature, *headers):
        return http_request("GET", ROUTER_OPERATIONS + device, headers=[("Device-Signature", signature), *headers])

    def redeem(kind, token="~0"):
        return http_request("POST", ROUTER_REDEEM + kind, b'{"token":"' + token.encode() + b'"}')

    jose = ("Accept", "application/jose;charset=UTF-8")
    stats = http_request("GET", "/_emulator/stats")

    # Dispatch, fetch (a vectors' signature, then a made one, JSON and JOSE), redeem twice, stats.
    yield (dispatch(device1, lifetimeSeconds=120) + dispatch(device1, channel="png-qr-code")
           + fetch(device1, signed[0]) + fetch(device1, "~0", jose) + redeem("authentication")
           + redeem("authentication") + fetch(device1, "~0") + stats)
    # The second vectors' target (escaped id): its device, then another device's operations.
    for compact in by_target.get(second_target, []):
        yield dispatch(device2, operation="registration") + fetch(device2, compact) + fetch(device1, "~1")
    # Registration: a new device (trust on first use), with an encryption key; a further target of a
    # device, unsigned, signed by it, signed by another device's target; the fetch of the new target.
    yield (http_request("POST", ROUTER_TARGETS, {
        "username": "alice", "deviceId": "phone-1", "name": "Alice's phone", "target": "fcm-token",
        "dispatcher": "firebase-cloud-messaging", "signatureKey": fixture_jwk, "encryptionKey": recipient_jwk})
        + dispatch("phone-1", data={"message": "hello", "nested": [1, 2.5, None, True]})
        + fetch("phone-1", "~2", jose) + fetch("phone-1", "~2") + redeem("authentication") + stats)
    yield (http_request("POST", ROUTER_TARGETS, {"deviceId": device1, "signatureKey": fixture_jwk})
           + http_request("POST", ROUTER_TARGETS, {"deviceId": device1, "signatureKey": fixture_jwk},
                          headers=[("Device-Signature", "~0")])
           + http_request("POST", ROUTER_TARGETS, {"deviceId": device1, "signatureKey": other_jwk},
                          headers=[("Device-Signature", "~1")])
           + fetch(device1, "~2"))
    # Rotations: signed by the target itself (its encryption key named, unchanged), by another.
    yield (http_request("PATCH", ROUTER_TARGETS + "/" + first_target,
                        {"signatureKey": other_jwk, "encryptionKey": recipient_jwk},
                        headers=[("Device-Signature", "~0")])
           + fetch(device1, "~0") + fetch(device1, signed[1]))
    quoted = urllib.parse.quote(second_target, safe="")
    yield (http_request("PATCH", ROUTER_TARGETS + "/" + quoted, {"signatureKey": other_jwk, "encryptionKey": recipient_jwk},
                        headers=[("Device-Signature", "~1")])
           + http_request("PATCH", ROUTER_TARGETS + "/" + first_target, {"signatureKey": other_jwk},
                          headers=[("Device-Signature", "~1")]))
    # The clock: skew, set back, expiry, the purge of a full store (6 operations here).
    yield (http_request("POST", "/_emulator/clock", {"offsetSeconds": 600}) + fetch(device1, "~0")
           + http_request("POST", "/_emulator/clock", {"offsetSeconds": 0}) + fetch(device1, "~0"))
    yield (b"".join(dispatch(device, lifetimeSeconds=1) for device in ("a", "b", "c", "d", "e", "f"))
           + dispatch("g") + http_request("POST", "/_emulator/clock", {"offsetSeconds": 7300})
           + dispatch("g") + redeem("authentication") + http_request("POST", "/_emulator/clock", {"offsetSeconds": -90})
           + dispatch("g") + stats)
    yield (dispatch(device1, lifetimeSeconds=0.001) + dispatch(device1) + dispatch(device1) + dispatch(device1)
           + dispatch(device1) + http_request("POST", "/_emulator/clock", {"offsetSeconds": -1})
           + dispatch(device1) + fetch(device1, "~0") + redeem("registration") + redeem("authentication", "~1"))
    # Faults of every kind, then cleared.
    for fault in ({"endpoint": "operations", "kind": "status", "status": 503, "count": 1},
                  {"endpoint": "redeem", "kind": "garbage"}, {"endpoint": "operations", "kind": "oversized", "count": 1},
                  {"endpoint": "targets", "kind": "close"}, {"endpoint": "operations", "kind": "hang", "count": 1},
                  {"endpoint": "redeem", "kind": "delay", "seconds": 0.2, "count": 2},
                  {"endpoint": "operations", "kind": "wrong-content-type"},
                  {"endpoint": "operations", "kind": "undecryptable", "count": 1}):
        yield (http_request("POST", "/_emulator/faults", fault) + dispatch(device1) + fetch(device1, "~0", jose)
               + redeem("authentication") + http_request("POST", ROUTER_TARGETS, {"deviceId": "x", "signatureKey": fixture_jwk})
               + http_request("DELETE", "/_emulator/faults") + fetch(device1, "~0") + stats)
    yield (http_request("POST", "/_emulator/faults", {"endpoint": "nowhere", "kind": "close"})
           + http_request("POST", "/_emulator/faults", {"endpoint": "redeem", "kind": "delay"})
           + http_request("POST", "/_emulator/faults", {"endpoint": "redeem", "kind": "status", "status": 200, "count": 1e30})
           + http_request("POST", "/_emulator/faults", {"endpoint": "redeem", "kind": "status", "status": 200, "count": True}))
    # Guards: a foreign Host, a body that is not JSON, methods, unknown routes and members.
    yield (http_request("GET", "/_emulator/stats", host="example.com") + http_request("PUT", ROUTER_DISPATCH)
           + http_request("POST", ROUTER_DISPATCH, b"deviceId=a", headers=[("Content-Type", "text/plain")])
           + http_request("POST", ROUTER_DISPATCH, {"deviceId": "a", "channel": "link", "lifetimeSecnds": 5})
           + http_request("POST", ROUTER_DISPATCH, b'{"deviceId":"a","deviceId":"b","channel":"link"}')
           + http_request("DELETE", ROUTER_OPERATIONS + device1) + http_request("POST", ROUTER_REDEEM + "nothing", {})
           + http_request("GET", "/_emulator/nothing") + http_request("HEAD", "/_emulator/stats")
           + http_request("GET", "/nevisfido/unknown") + fetch(device1, "") + fetch(device1, "~0", ("Accept", "text/html"))
           + http_request("GET", ROUTER_OPERATIONS + device1, headers=[("Device-Signature", "~0"), ("device-signature", "~0")]))
    # The verifier's refusals, a few to a connection, and replays (quota 3 per target here).
    cases = [case["compact"] for case in ds["verification"]]
    for start in range(0, len(cases), 8):
        yield b"".join(fetch(device1, compact) for compact in cases[start:start + 8])
    yield b"".join(fetch(device1, "~0") for _ in range(5)) + fetch(device1, signed[0]) + fetch(device1, signed[0])
    # The HTTP request parser's own seeds: connections too.
    yield from seeds_http_request()


SEEDS = {
    "jws": seeds_jws,
    "jwe": seeds_jwe,
    "device-signature": seeds_device_signature,
    "pending-operations": seeds_pending_operations,
    "answers": seeds_answers,
    "http-request": seeds_http_request,
    "backend-router": seeds_backend_router,
    "key-import": seeds_key_import,
    "http-date": seeds_http_date,
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SEEDS:
        sys.exit(f"usage: seeds.py {{{'|'.join(SEEDS)}}} OUTDIR")
    target, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    count = 0
    for seed in SEEDS[target]():
        name = hashlib.sha1(seed).hexdigest()
        with open(os.path.join(outdir, name), "wb") as handle:
            handle.write(seed)
        count += 1
    print(f"{count} seeds for {target} in {outdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
