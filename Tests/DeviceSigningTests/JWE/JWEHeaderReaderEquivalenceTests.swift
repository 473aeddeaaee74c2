import Foundation
import Testing

@testable import DeviceSigning

/// `JWEHeader` reads its JSON with `JWEHeaderReader` (known members straight into fields); before,
/// it built the tree (`JOSEJSON.object`) and looked members up in it. The same text must give the
/// same header, or the same error code and reason.
@Suite struct JWEHeaderReaderEquivalenceTests {
    @Test func readerAgreesWithTheTreeCheckOnVariations() {
        let seed = UInt64(ProcessInfo.processInfo.environment["JWE_HEADER_SEED"] ?? "") ?? 0x0E9C_5EED
        print("JWEHeaderReaderEquivalenceTests seed \(seed) (JWE_HEADER_SEED to replay)")
        var random = SplitMix64(seed: seed)
        var rejected = 0
        for round in 0..<4_000 {
            let json = Array(JWEHeaderVariations.header(&random).utf8)
            let streamed = Outcome { try HeaderFields(JWEHeader(json: json)) }
            let tree = Outcome { try TreeHeaderCheck.fields(json: json) }
            #expect(streamed == tree, "round \(round) seed \(seed): \(String(decoding: json, as: UTF8.self))")
            if case .refused = streamed { rejected += 1 }
        }
        #expect(rejected > 1_000 && rejected < 3_600, "the variations cover both outcomes: \(rejected) refused")
    }

    /// Duplicates are refused in every object, with the name the tree reported: in the header and
    /// its `epk`, known names or not, spelled with escapes or not, and the innermost first when
    /// the second of two members holds a duplicate itself (the tree saw it complete first).
    @Test(arguments: [
        (#"{"alg":"ECDH-ES","enc":"A256GCM","alg":"ECDH-ES"}"#, "alg"),
        (#"{"alg":"ECDH-ES","\u0061lg":"ECDH-ES","enc":"A256GCM"}"#, "alg"),
        (#"{"u":1,"alg":"ECDH-ES","u":[]}"#, "u"),
        (#"{"epk":{"kty":"EC","crv":"P-256","kty":"EC"}}"#, "kty"),
        (#"{"epk":{"x":"a","\u0078":"a"}}"#, "x"),
        (#"{"epk":{"d":"a","d":"a"}}"#, "d"),
        (#"{"epk":{"u":{},"u":{}},"alg":"ECDH-ES"}"#, "u"),
        (#"{"epk":{"kty":"EC"},"epk":{"kty":"EC"}}"#, "epk"),
        (#"{"epk":{"kty":"EC"},"epk":{"kty":"EC","kty":"EC"}}"#, "kty"),
        (#"{"epk":{},"alg":{"a":1,"a":2}}"#, "a"),
        (#"{"w":1,"w":{"v":[{"z":1,"z":2}]}}"#, "z"),
        (#"{"alg":"ECDH-ES","alg":[{"k":1,"k":2}]}"#, "k"),
    ])
    func duplicateMembersAreRefusedAsTheTreeRefusedThem(json: String, name: String) throws {
        let bytes = Array(json.utf8)
        let tree = Outcome { try TreeHeaderCheck.fields(json: bytes) }
        let streamed = Outcome { try HeaderFields(JWEHeader(json: bytes)) }
        #expect(streamed == tree)
        let expected = "The JWE header is ambiguous: the member \"\(name)\" appears more than once in one object."
        #expect(streamed == .refused(.malformedJWE, expected))
    }
}

/// What a header read gives: its fields, or an error's code and reason.
private enum Outcome: Equatable {
    case read(HeaderFields)
    case refused(DeviceSigningError.Code, String)
    case otherError(String)

    init(_ body: () throws -> HeaderFields) {
        do {
            self = .read(try body())
        } catch let error as DeviceSigningError {
            self = .refused(error.code, error.reason)
        } catch {
            self = .otherError("\(error)")
        }
    }
}

private struct HeaderFields: Equatable {
    let alg: JWE.Algorithm
    let enc: JWE.ContentEncryption
    let kid: String?
    let typ: String?
    let cty: String?
    let apu: [UInt8]
    let apv: [UInt8]
    let epkPoint: [UInt8]

    init(_ header: JWEHeader) {
        self.init(
            alg: header.alg, enc: header.enc, kid: header.kid, typ: header.typ, cty: header.cty, apu: header.apu,
            apv: header.apv, epkPoint: header.epkPoint)
    }

    init(
        alg: JWE.Algorithm, enc: JWE.ContentEncryption, kid: String?, typ: String?, cty: String?, apu: [UInt8],
        apv: [UInt8], epkPoint: [UInt8]
    ) {
        (self.alg, self.enc, self.kid, self.typ, self.cty) = (alg, enc, kid, typ, cty)
        (self.apu, self.apv, self.epkPoint) = (apu, apv, epkPoint)
    }
}

/// The header rules on the value tree, as `JWEHeader` checked them before it read the header
/// with `JWEHeaderReader` (its member checks are shared; how members are found is not).
private enum TreeHeaderCheck {
    static func fields(json: [UInt8]) throws -> HeaderFields {
        guard json.count <= JWEHeader.maximumBytes else {
            throw DeviceSigningError(.inputTooLarge, "The JWE header is larger than \(JWEHeader.maximumBytes) bytes.")
        }
        let members = try JOSEJSON.object(of: json, subject: "The JWE header", code: .malformedJWE)
        let alg = try JWEHeader.allowed(members["alg"], name: "alg", as: JWE.Algorithm.self)
        let enc = try JWEHeader.allowed(members["enc"], name: "enc", as: JWE.ContentEncryption.self)
        guard members["crit"] == nil else {
            throw DeviceSigningError(.malformedJWE, "The JWE header has crit extensions, which are not supported.")
        }
        guard members["zip"] == nil else {
            throw DeviceSigningError(.unsupportedAlgorithm, "The JWE is compressed (zip), which is not supported.")
        }
        let kid = try JWEHeader.optionalString(members["kid"], name: "kid")
        let typ = try JWEHeader.optionalString(members["typ"], name: "typ")
        let cty = try JWEHeader.optionalString(members["cty"], name: "cty")
        let apu = try JWEHeader.partyInfo(members["apu"], name: "apu")
        let apv = try JWEHeader.partyInfo(members["apv"], name: "apv")
        let epk = try PeerPublicKey(point: ephemeralPoint(members["epk"]))
        return HeaderFields(alg: alg, enc: enc, kid: kid, typ: typ, cty: cty, apu: apu, apv: apv, epkPoint: epk.point)
    }

    private static func ephemeralPoint(_ member: JSONValue?) throws -> [UInt8] {
        guard case .object(let members) = member else {
            throw DeviceSigningError(.malformedJWE, "The JWE header has no epk object (the ephemeral public key).")
        }
        guard members["d"] == nil else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk holds a private member d; it must be public.")
        }
        guard case .string(let kty) = members["kty"], case .string(let crv) = members["crv"] else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk needs string members kty and crv.")
        }
        guard kty == "EC" else {
            let shown = JWEHeader.printable(kty)
            throw DeviceSigningError(.unsupportedKeyType, "The JWE epk has kty \"\(shown)\"; only EC is.")
        }
        guard crv == "P-256" else {
            let shown = JWEHeader.printable(crv)
            throw DeviceSigningError(.unsupportedCurve, "The JWE epk is on \"\(shown)\"; only P-256 is.")
        }
        guard case .string(let x) = members["x"], case .string(let y) = members["y"] else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk needs string members x and y.")
        }
        guard let xBytes = Base64.decode(x, alphabet: .url), let yBytes = Base64.decode(y, alphabet: .url),
            xBytes.count == 32, yBytes.count == 32
        else {
            throw DeviceSigningError(
                .malformedEncoding, "JWK x and y must be base64url (no padding) of exactly 32 bytes each.")
        }
        return [0x04] + xBytes + yBytes
    }
}

/// Headers near the ones the backend sends: each member possibly missing, repeated, of another
/// type or value, spelled with an escape; extra members with nested duplicates; text cut short.
private enum JWEHeaderVariations {
    /// RFC 7518 Appendix C's ephemeral key: a point on the curve.
    static let x = #""gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0""#
    static let y = #""SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps""#

    static func header(_ random: inout SplitMix64) -> String {
        func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &random) == 0 }
        func pick(_ options: [String]) -> String { options[Int.random(in: 0..<options.count, using: &random)] }
        func value(_ normal: String, _ odd: [String]) -> String { chance(10) ? pick(odd) : normal }
        func name(_ plain: String) -> String {
            guard chance(25), let first = plain.unicodeScalars.first else { return plain }
            let hex = String(first.value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex + plain.dropFirst()
        }
        func object(_ members: [(String, String)], extras: [(String, String)]) -> String {
            var kept = members.filter { _ in !chance(30) }
            if chance(6) { kept.append(extras[Int.random(in: 0..<extras.count, using: &random)]) }
            if chance(25), let first = kept.first { kept.append(first) }
            if chance(15), kept.count > 1 { kept.swapAt(0, Int.random(in: 1..<kept.count, using: &random)) }
            let space = chance(10) ? " \n" : ""
            return "{" + space + kept.map { "\"\(name($0.0))\":\(space)\($0.1)" }.joined(separator: ",") + "}"
        }
        let containers = ["null", "1", "-0.5", "true", "[]", "{}", #"{"a":[1,{"b":2}]}"#, #"[{"z":1,"z":2}]"#]
        let epkExtras = [("d", #""AQ""#), ("u", "1"), ("use", #""enc""#), ("w", #"{"v":[]}"#), ("kid", "7")]
        let epk = object(
            [
                ("kty", value(#""EC""#, [#""OKP""#, #""RSA""#, #""ec""#] + containers)),
                ("crv", value(#""P-256""#, [#""P-384""#, #""P-2""#] + containers)),
                ("x", value(x, [#""gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV""#, #""!!""#, #""""#] + containers)),
                ("y", value(y, [#""SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFppw""#, #""SLW""#] + containers)),
            ], extras: epkExtras)
        var members = [
            ("alg", value(#""ECDH-ES""#, [#""ECDH-ES+A128KW""#, #""none""#, #""dir""#, #""ecdh-es""#] + containers)),
            ("enc", value(#""A256GCM""#, [#""A128CBC-HS256""#, #""A128CBC""#, #""ECDH-ES""#] + containers)),
            ("epk", chance(15) ? pick(containers) : epk),
        ]
        if chance(3) { members.append(("kid", value(#""k-1""#, [#""\u00e9""#] + containers))) }
        if chance(6) { members.append(("typ", value(#""JOSE""#, containers))) }
        if chance(6) { members.append(("cty", value(#""json""#, containers))) }
        if chance(5) { members.append(("apu", value(#""QWxpY2U""#, [#""QWxpY2V""#, #""+/""#] + containers))) }
        let longInfo = "\"\(String(repeating: "A", count: 400))\""
        if chance(5) { members.append(("apv", value(#""Qm9i""#, [#""""#, longInfo]))) }
        if chance(30) { members.append(("crit", pick([#"["exp"]"#, "null"]))) }
        if chance(30) { members.append(("zip", pick([#""DEF""#, "[]"]))) }
        let extras = [
            ("u", "1"), ("\u{E9}", #""x""#), ("w", #"{"v":[1,{"z":1,"z":2}]}"#), ("n", #"[{"a":1},{"a":1,"b":2}]"#),
            ("big", "1e999"), ("deep", String(repeating: "[", count: 520) + String(repeating: "]", count: 520)),
        ]
        var text = object(members, extras: extras)
        if chance(40) { text = pick(["[\(text)]", "\(text) x", "\(text),", #""h""#, "7"]) }
        if chance(40) { text = String(text.prefix(Int.random(in: 0..<text.count, using: &random))) }
        return text
    }
}
