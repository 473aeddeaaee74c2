import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The checkers themselves can fail: a doctored expectation in each file is caught and the
/// failure names the case; garbage and unknown files fail.
@Suite struct VectorSuiteTests {
    typealias JSONObject = [String: Any]

    func load(_ name: String) throws -> JSONObject {
        let data = try Data(contentsOf: PackageLocations.vectors.appendingPathComponent(name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? JSONObject)
    }

    static func base64url(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }

    func check(_ name: String, _ object: JSONObject) throws -> VectorFileReport {
        VectorSuite.check(fileName: name, data: try JSONSerialization.data(withJSONObject: object))
    }

    @Test func everyFileOfThePackagePassesInProcess() throws {
        let reports = try VectorSuite.verify(directory: PackageLocations.vectors)
        #expect(!reports.isEmpty)
        for report in reports {
            #expect(report.passed && report.casesChecked > 0, "\(report.file): \(report.failures)")
        }
        #expect(
            Set(reports.map(\.file)) == Set(VectorSuite.checkers.map(\.fileName)),
            "every checker has its file and every file its checker")
    }

    @Test func garbageAndUnknownFilesFail() {
        for checker in VectorSuite.checkers {
            let report = checker.check(Data("not json".utf8))
            #expect(!report.passed && report.failures.first?.contains("cannot be read") == true, "\(checker.fileName)")
        }
        let unknown = VectorSuite.check(fileName: "new-vectors.json", data: Data("{}".utf8))
        #expect(!unknown.passed && unknown.failures.first?.hasPrefix("no checker") == true)
    }

    /// `JSONDecoder` keeps the first of two members of one name and `JSONSerialization` (which the
    /// unread-member check walks) the last: a reader of this file sees `unknown` where the row is
    /// checked against `success`. The file is refused before decoding, naming the member.
    @Test func aDuplicateMemberFailsTheFile() throws {
        let url = PackageLocations.vectors.appendingPathComponent(ErrorMappingVectors.fileName)
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        let first = try #require(text.range(of: #""code": "success""#))
        let doubled = text.replacingCharacters(in: first, with: #""code": "success", "code": "unknown""#)
        let report = VectorSuite.check(fileName: ErrorMappingVectors.fileName, data: Data(doubled.utf8))
        #expect(
            report.failures == [
                #"error-mapping.json cannot be read: the member "code" appears more than once in one object"#
            ],
            "\(report.failures)")
    }

    @Test func clockSkewRowChange() throws {
        var file = try load(ClockSkewVectors.fileName)
        var rows = try #require(file["rows"] as? [JSONObject])
        var expected = try #require(rows[0]["expected"] as? JSONObject)
        let id = try #require(rows[0]["id"] as? String)
        expected["classification"] = (expected["classification"] as? String) == "none" ? "definite" : "none"
        rows[0]["expected"] = expected
        file["rows"] = rows
        let report = try check(ClockSkewVectors.fileName, file)
        #expect(
            !report.passed && report.failures.contains { $0.hasPrefix("\(id): classification") }, "\(report.failures)")
    }

    @Test func deviceSignatureOutcomeChange() throws {
        var file = try load(DeviceSignatureVectors.fileName)
        var cases = try #require(file["verification"] as? [JSONObject])
        let index = try #require(
            cases.firstIndex { $0["expected"] as? String == "MALFORMED_REQUEST" && $0["session"] == nil })
        let name = try #require(cases[index]["name"] as? String)
        cases[index]["expected"] = "ACCEPT"
        file["verification"] = cases
        let report = try check(DeviceSignatureVectors.fileName, file)
        #expect(
            !report.passed
                && report.failures.contains { $0.hasPrefix("\(name): got MALFORMED_REQUEST, expected ACCEPT") },
            "\(report.failures)")
    }

    @Test func deviceSignatureKnownAnswerChange() throws {
        var file = try load(DeviceSignatureVectors.fileName)
        var positive = try #require(file["positive"] as? [JSONObject])
        let name = try #require(positive[0]["name"] as? String)
        positive[0]["encodedHeader"] = "eyJhbGciOiJub25lIn0"
        file["positive"] = positive
        let report = try check(DeviceSignatureVectors.fileName, file)
        #expect(report.failures.contains("\(name): encoded header"), "\(report.failures)")
    }

    @Test func pendingOperationsExpectationChange() throws {
        var file = try load(PendingOperationsVectors.fileName)
        var cases = try #require(file["cases"] as? [JSONObject])
        let index = try #require(
            cases.firstIndex { (($0["expected"] as? JSONObject)?["operations"] as? [Any])?.isEmpty == false })
        let id = try #require(cases[index]["id"] as? Int)
        cases[index]["expected"] = ["invalidResponse": true]
        file["cases"] = cases
        let report = try check(PendingOperationsVectors.fileName, file)
        #expect(
            report.failures.contains { $0.hasPrefix("vector \(id) ") && $0.contains("must be invalidResponse") },
            "\(report.failures)")
    }

    @Test func errorMappingCodeChange() throws {
        var file = try load(ErrorMappingVectors.fileName)
        var rows = try #require(file["rows"] as? [JSONObject])
        let index = try #require(
            rows.firstIndex { ($0["expected"] as? JSONObject)?["code"] as? String == "serverError" })
        let id = try #require(rows[index]["id"] as? String)
        var expected = try #require(rows[index]["expected"] as? JSONObject)
        expected["code"] = "unknown"
        rows[index]["expected"] = expected
        file["rows"] = rows
        let report = try check(ErrorMappingVectors.fileName, file)
        #expect(
            report.failures.contains { $0.hasPrefix("\(id): got serverError, expected unknown") }, "\(report.failures)")
    }

    /// An input has exactly one of answer, transportFailure and notHTTP: with two, one was used
    /// and the other quietly ignored.
    @Test(arguments: [
        ("transportFailure", #"{"kind":"timedOut","detail":"no answer"}"#), ("notHTTP", #""SSH-2.0-OpenSSH""#),
    ])
    func errorMappingInputWithTwoTransportsFails(member: String, value: String) throws {
        var file = try load(ErrorMappingVectors.fileName)
        var rows = try #require(file["rows"] as? [JSONObject])
        let index = try #require(rows.firstIndex { ($0["input"] as? JSONObject)?["answer"] != nil })
        let id = try #require(rows[index]["id"] as? String)
        var input = try #require(rows[index]["input"] as? JSONObject)
        input[member] = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        rows[index]["input"] = input
        file["rows"] = rows
        let report = try check(ErrorMappingVectors.fileName, file)
        #expect(
            report.failures.contains(
                "\(id): the input needs exactly one of answer, transportFailure and notHTTP; "
                    + "it has answer and \(member)"),
            "\(report.failures)")
    }

    /// A member of `expected` that does not apply to the row's outcome fails the row: on a
    /// success row the error's members were decoded and never compared, on an error row the
    /// tokens; a measured offset of null held on any error that has none.
    @Test(arguments: [
        ("success", "status", "500"), ("success", "networkKind", #""timedOut""#),
        ("success", "invalidResponseKind", #""malformed""#), ("success", "excerpt", #""x""#),
        ("success", "excerptUTF8Bytes", "1"), ("success", "bodyByteCount", "1"),
        ("success", "toleranceMillis", "1000"), ("success", "measuredOffsetMillis", "7"),
        ("unauthorized", "tokens", #"["tok-a"]"#), ("unauthorized", "measuredOffsetMillis", "null"),
        ("networkError", "status", "500"), ("invalidResponse", "excerpt", #""x""#),
    ])
    func errorMappingMemberThatDoesNotApplyFails(code: String, member: String, value: String) throws {
        var file = try load(ErrorMappingVectors.fileName)
        var rows = try #require(file["rows"] as? [JSONObject])
        let index = try #require(rows.firstIndex { ($0["expected"] as? JSONObject)?["code"] as? String == code })
        let id = try #require(rows[index]["id"] as? String)
        var expected = try #require(rows[index]["expected"] as? JSONObject)
        expected[member] = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        rows[index]["expected"] = expected
        file["rows"] = rows
        let report = try check(ErrorMappingVectors.fileName, file)
        #expect(
            report.failures.contains("\(id): expected.\(member) does not apply to a row that expects \(code)"),
            "\(report.failures)")
    }

    /// An optional member present as `null` is a wrong type, not absent: present, it would check
    /// nothing (`expected.status`), or be a second transport that nothing uses (`input.notHTTP`
    /// beside an answer). Each is set to null on the first row that has `present` in that part.
    @Test(arguments: [("expected", "status", "status"), ("input", "notHTTP", "answer")])
    func errorMappingNullWhereAValueIsRequiredFails(part: String, member: String, present: String) throws {
        var file = try load(ErrorMappingVectors.fileName)
        var rows = try #require(file["rows"] as? [JSONObject])
        let index = try #require(rows.firstIndex { ($0[part] as? JSONObject)?[present] != nil })
        var object = try #require(rows[index][part] as? JSONObject)
        object[member] = NSNull()
        rows[index][part] = object
        file["rows"] = rows
        let report = try check(ErrorMappingVectors.fileName, file)
        #expect(
            report.failures.contains { $0.hasSuffix("wrong type at rows[\(index)].\(part).\(member)") },
            "\(report.failures)")
    }

    @Test func rfc6979ValidityChange() throws {
        var file = try load(RFC6979Vectors.fileName)
        var cases = try #require(file["cases"] as? [JSONObject])
        let id = try #require(cases[0]["id"] as? Int)
        cases[0]["valid"] = !((cases[0]["valid"] as? Bool) ?? false)
        file["cases"] = cases
        let report = try check(RFC6979Vectors.fileName, file)
        #expect(report.failures.contains { $0.hasPrefix("rfc6979 case \(id):") }, "\(report.failures)")
    }

    /// A directory without one of the files fails for it: deleting a file must not make a run pass.
    @Test func aMissingFileFails() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vectors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        for checker in VectorSuite.checkers where checker.fileName != JWSVectors.fileName {
            try FileManager.default.copyItem(
                at: PackageLocations.vectors.appendingPathComponent(checker.fileName),
                to: directory.appendingPathComponent(checker.fileName))
        }
        let reports = try VectorSuite.verify(directory: directory)
        let missing = try #require(reports.first { $0.file == JWSVectors.fileName })
        #expect(!missing.passed && missing.failures.first?.hasPrefix("missing") == true, "\(missing.failures)")
        #expect(reports.filter(\.passed).count == VectorSuite.checkers.count - 1)
    }

    /// A file larger than the limit is refused before it is read into memory (a sparse file of
    /// a GiB took seconds and a GiB of memory before it failed to parse); so is one in place of a
    /// Wycheproof suite.
    @Test func anOversizedFileIsRefusedUnread() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vectors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        for checker in VectorSuite.checkers {
            try FileManager.default.copyItem(
                at: PackageLocations.vectors.appendingPathComponent(checker.fileName),
                to: directory.appendingPathComponent(checker.fileName))
        }
        let oversized = try FileHandle(forWritingTo: directory.appendingPathComponent(JWSVectors.fileName))
        try oversized.truncate(atOffset: UInt64(VectorSuite.maximumFileBytes + 1))
        try oversized.close()
        let reports = try VectorSuite.verify(directory: directory)
        let refused = try #require(reports.first { $0.file == JWSVectors.fileName })
        #expect(refused.failures.first?.contains("larger than 16 MiB") == true, "\(refused.failures)")
        #expect(reports.filter(\.passed).count == VectorSuite.checkers.count - 1)

        let suite = try #require(WycheproofVectors.suites.first)
        try FileManager.default.moveItem(
            at: directory.appendingPathComponent(JWSVectors.fileName),
            to: directory.appendingPathComponent(suite.fileName))
        let wycheproof = try #require(WycheproofVectors.verify(directory: directory).first)
        #expect(wycheproof.failures.first?.contains("larger than 16 MiB") == true, "\(wycheproof.failures)")
    }

    /// A FIFO in place of a vector file or a Wycheproof suite, held open by a writer that never
    /// writes, is refused unread: reading it blocked `vectors verify` for ever. (Without the check
    /// the run is given 30 s, then the writer closes, which ends the read.)
    @Test func aFIFOInPlaceOfAFileIsRefusedUnread() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vectors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let suite = try #require(WycheproofVectors.suites.first)
        let fifos = [JWSVectors.fileName, suite.fileName].map { directory.appendingPathComponent($0).path }
        var writers: [Int32] = []
        defer { for writer in writers { close(writer) } }
        for fifo in fifos {
            try #require(mkfifo(fifo, 0o600) == 0)
            // O_RDWR opens at once (no reader yet) and holds the write end; close-on-exec keeps it
            // from the processes other tests start.
            let writer = open(fifo, O_RDWR | O_CLOEXEC)
            try #require(writer >= 0)
            writers.append(writer)
        }
        let heldWriters = writers
        let reports = await withTaskGroup(of: [VectorFileReport]?.self) { group in
            // The reads block (on the FIFO, should the check regress): on a thread of their own, not
            // the cooperative pool, which the timer beside them (and other tests) still needs.
            group.addTask {
                await DedicatedThreads.run {
                    ((try? VectorSuite.verify(directory: directory)) ?? [])
                        + WycheproofVectors.verify(directory: directory)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            for writer in heldWriters { close(writer) }  // a read still blocked now sees end of file
            group.cancelAll()
            return first
        }
        writers = []
        let finished = try #require(reports, "vectors verify still blocked on a FIFO after 30 s")
        for name in [JWSVectors.fileName, "wycheproof/" + suite.fileName] {
            let report = try #require(finished.first { $0.file == name })
            #expect(
                report.failures.first?.contains("cannot be read (not a regular file but a FIFO)") == true,
                "\(name): \(report.failures)")
        }
    }

    /// The clock-skew table pins the client's own estimator window and retry threshold; an absurd
    /// window is refused, not allocated.
    @Test(arguments: [
        ("samplesPerServer", 1_000_000_000_000_000), ("samplesPerServer", 3), ("retryThresholdMillis", 0),
    ])
    func clockSkewConstantsAreTheClients(member: String, value: Int) throws {
        var file = try load(ClockSkewVectors.fileName)
        file[member] = value
        let report = try check(ClockSkewVectors.fileName, file)
        #expect(!report.passed && report.failures.first?.contains("must be the client's") == true, "\(report.failures)")
    }

    @Test func jwsKnownAnswerAndHeaderAreRequired() throws {
        var file = try load(JWSVectors.fileName)
        var valid = try #require(file["valid"] as? [JSONObject])
        valid[0]["expectedHeader"] = ["alg": "HS256"]
        file["valid"] = valid
        let changed = try check(JWSVectors.fileName, file)
        #expect(
            changed.failures.contains { $0.hasSuffix("the header differs from expectedHeader") }, "\(changed.failures)")
        file["valid"] = [JSONObject]()
        let empty = try check(JWSVectors.fileName, file)
        #expect(empty.failures.contains { $0.contains("rfc7515-a3") }, "\(empty.failures)")
        #expect(empty.failures.contains { $0.contains("0 valid cases") }, "\(empty.failures)")
    }

    /// The RFC 7515 A.3 case is the RFC's own JWS, not one that merely verifies: its other
    /// signature (r, n − s), valid as any ECDSA signature is, passed under the name before.
    @Test func jwsKnownAnswerIsTheRFCsOwnSignature() throws {
        var file = try load(JWSVectors.fileName)
        var valid = try #require(file["valid"] as? [JSONObject])
        let index = try #require(valid.firstIndex { $0["name"] as? String == "rfc7515-a3" })
        let parts = try #require((valid[index]["compact"] as? String)?.split(separator: "."))
        let signature = try #require(Self.base64url(String(parts[2])))
        let order = try #require(Self.base64url("_____wAAAAD__________7zm-q2nF56E87nKwvxjJVE"))  // P-256's n
        try #require(signature.count == 64 && order.count == 32)
        var negated = [UInt8](repeating: 0, count: 32)  // n − s, byte by byte with a borrow
        var borrow = 0
        for byte in (0..<32).reversed() {
            let difference = Int(order[byte]) - Int(signature[32 + byte]) - borrow
            negated[byte] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        let other = (Data(signature.prefix(32)) + Data(negated)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        valid[index]["compact"] = "\(parts[0]).\(parts[1]).\(other)"
        file["valid"] = valid
        let report = try check(JWSVectors.fileName, file)
        #expect(!report.failures.contains { $0.contains("did not verify") }, "the other signature verifies")
        #expect(report.failures.contains { $0.contains("the RFC's own JWS") }, "\(report.failures)")
    }

    /// The RFC 7518 Appendix C case is the RFC's: with the two keys' roles swapped, Z and the
    /// derived key stay the same (ECDH is symmetric), and the file passed before.
    @Test func jweAppendixCIsTheRFCs() throws {
        var file = try load(JWEVectors.fileName)
        var appendix = try #require(file["rfc7518AppendixC"] as? JSONObject)
        (appendix["ephemeralKey"], appendix["recipientKey"]) = (appendix["recipientKey"], appendix["ephemeralKey"])
        file["rfc7518AppendixC"] = appendix
        let report = try check(JWEVectors.fileName, file)
        #expect(!report.failures.contains { $0.contains("differs") }, "still self-consistent: \(report.failures)")
        #expect(report.failures.contains { $0.contains("the keys are not the RFC's") }, "\(report.failures)")
    }

    /// An invalid answer's kind is compared: any InvalidResponse used to satisfy the case.
    @Test func pendingOperationsInvalidResponseKindChange() throws {
        var file = try load(PendingOperationsVectors.fileName)
        var cases = try #require(file["cases"] as? [JSONObject])
        let index = try #require(cases.firstIndex { ($0["expected"] as? JSONObject)?["invalidResponse"] != nil })
        let id = try #require(cases[index]["id"] as? Int)
        cases[index]["expected"] = ["invalidResponse": true, "invalidResponseKind": "tooLarge"]
        file["cases"] = cases
        let report = try check(PendingOperationsVectors.fileName, file)
        #expect(
            report.failures.contains { $0.hasPrefix("vector \(id) ") && $0.contains("expected tooLarge") },
            "\(report.failures)")
    }

    @Test func rfc6979NonceChange() throws {
        var file = try load(RFC6979Vectors.fileName)
        var cases = try #require(file["cases"] as? [JSONObject])
        let index = try #require(cases.firstIndex { $0["kHex"] != nil })
        let id = try #require(cases[index]["id"] as? Int)
        cases[index]["kHex"] = String(repeating: "0", count: 63) + "1"
        file["cases"] = cases
        let report = try check(RFC6979Vectors.fileName, file)
        #expect(report.failures.contains("rfc6979 case \(id): r is not x(k·G) mod n for kHex"), "\(report.failures)")
    }

    @Test func jweKeyBitsMustBeWholeBytes() throws {
        var file = try load(JWEVectors.fileName)
        var appendix = try #require(file["rfc7518AppendixC"] as? JSONObject)
        appendix["keyBits"] = 129
        file["rfc7518AppendixC"] = appendix
        let report = try check(JWEVectors.fileName, file)
        #expect(report.failures.contains { $0.contains("keyBits 129") }, "\(report.failures)")
    }

    /// A replacePart's fill is one ASCII byte: "e" and a combining accent is one Character of
    /// three bytes, which built a part three times `length` bytes long (with a thousand accents
    /// and the largest length, gigabytes: the check was killed instead of failing the case).
    @Test(arguments: ["e\u{301}", "a" + String(repeating: "\u{301}", count: 1000), "\u{E9}", "", "AA"])
    func jweReplacementFillIsOneASCIIByte(fill: String) throws {
        var file = try load(JWEVectors.fileName)
        var cases = try #require(file["cases"] as? [JSONObject])
        let index = try #require(cases.firstIndex { $0["replacePart"] != nil })
        let id = try #require(cases[index]["id"] as? Int)
        var replacement = try #require(cases[index]["replacePart"] as? JSONObject)
        replacement["fill"] = fill
        replacement["length"] = 64
        cases[index]["replacePart"] = replacement
        file["cases"] = cases
        let report = try check(JWEVectors.fileName, file)
        #expect(
            report.failures.contains { $0.hasPrefix("case \(id) ") && $0.contains("replacePart cannot be applied") },
            "\(report.failures)")
    }

    /// $WYCHEPROOF_DIR set to a path without the suites fails them, as --wycheproof would; only an
    /// unset (or empty) variable skips them.
    @Test func aWycheproofDirectoryThatIsNotThereFails() {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-wycheproof-\(UUID().uuidString)")
        let directory = WycheproofVectors.directory(environment: [WycheproofVectors.environmentVariable: missing.path])
        #expect(directory?.path == missing.path)
        let reports = WycheproofVectors.verify(directory: missing)
        #expect(reports.count == WycheproofVectors.suites.count && reports.allSatisfy { !$0.passed })
        #expect(WycheproofVectors.directory(environment: [WycheproofVectors.environmentVariable: ""]) == nil)
        #expect(WycheproofVectors.directory(environment: [:]) == nil)
    }

    /// The first Wycheproof suite, its text and its JSON object; nil (an issue under CI) when
    /// WYCHEPROOF_DIR names no suites.
    static func firstWycheproofSuite() throws -> (WycheproofVectors.Suite, Data, JSONObject)? {
        let suite = try #require(WycheproofVectors.suites.first)
        guard let directory = TestPaths.wycheproof else {
            if TestPaths.isCI { Issue.record("the Wycheproof suites are missing and CI=true") }
            return nil
        }
        let data = try Data(contentsOf: directory.appendingPathComponent(suite.fileName))
        return (suite, data, try #require(try JSONSerialization.jsonObject(with: data) as? JSONObject))
    }

    @Test func wycheproofResultChange() throws {
        guard let (suite, data, original) = try Self.firstWycheproofSuite() else { return }
        var file = original
        var groups = try #require(file["testGroups"] as? [JSONObject])
        var tests = try #require(groups[0]["tests"] as? [JSONObject])
        let tcId = try #require(tests[0]["tcId"] as? Int)
        tests[0]["result"] = tests[0]["result"] as? String == "valid" ? "invalid" : "valid"
        groups[0]["tests"] = tests
        file["testGroups"] = groups
        let intact = WycheproofVectors.check(data, suite: suite)
        #expect(intact.passed && intact.casesChecked == suite.expectedCases, "\(intact.failures.prefix(3))")
        let report = WycheproofVectors.check(try JSONSerialization.data(withJSONObject: file), suite: suite)
        #expect(
            report.failures.count == 1 && report.failures.first?.hasPrefix("tcId \(tcId) (") == true,
            "\(report.failures.prefix(3))")
    }

    /// A result other than valid, invalid and acceptable fails its case, naming the tcId: a
    /// misspelled "vaild" on an invalid case counted as invalid and passed. An `acceptable` case
    /// is rejected, as before.
    @Test(arguments: [("vaild", true), ("", true), ("acceptable", false)])
    func wycheproofUnknownResultFails(result: String, fails: Bool) throws {
        guard let (suite, _, original) = try Self.firstWycheproofSuite() else { return }
        var file = original
        var groups = try #require(file["testGroups"] as? [JSONObject])
        let group = try #require(
            groups.firstIndex {
                ($0["tests"] as? [JSONObject])?.contains { $0["result"] as? String == "invalid" } == true
            })
        var tests = try #require(groups[group]["tests"] as? [JSONObject])
        let test = try #require(tests.firstIndex { $0["result"] as? String == "invalid" })
        let tcId = try #require(tests[test]["tcId"] as? Int)
        tests[test]["result"] = result
        groups[group]["tests"] = tests
        file["testGroups"] = groups
        let report = WycheproofVectors.check(try JSONSerialization.data(withJSONObject: file), suite: suite)
        if fails {
            #expect(
                report.failures.count == 1
                    && report.failures.first?.hasPrefix("tcId \(tcId) (") == true
                    && report.failures.first?.hasSuffix(
                        "result \"\(result)\" is not valid, invalid or acceptable") == true,
                "\(report.failures.prefix(3))")
        } else {
            #expect(report.passed, "\(report.failures.prefix(3))")
        }
        #expect(report.casesChecked == suite.expectedCases)
    }
}
