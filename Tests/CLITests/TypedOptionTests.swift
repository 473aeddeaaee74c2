import DeviceSigning
import FetchChannelCLI
import Testing

/// Options declared once with their value parser: the spec shows them as before, and the value
/// comes back as the library's type or as a usage error that names the option.
@Suite struct TypedOptionTests {
    static let algorithm = Option("alg", "ALG", help: "Key management.", ValueParser<JWE.Algorithm>.cases)
    static let samples = Option("samples", "N", help: "Requests.", required: true, .integer(in: 1...20))
    static let verbose = Flag("verbose", help: "More.")
    static let spec = CommandSpec(path: ["probe"], abstract: "Probe.", options: [algorithm, samples, verbose])

    func arguments(_ words: [String]) throws -> ParsedArguments {
        guard case .arguments(let parsed) = try ArgumentParser.parse(words, spec: Self.spec) else {
            Issue.record("expected arguments for \(words)")
            return ParsedArguments()
        }
        return parsed
    }

    @Test func theSpecListsTheDeclarationsInOrder() {
        #expect(Self.spec.options.map(\.name) == ["alg", "samples", "verbose"])
        #expect(Self.spec.usage == "fetchchannel probe [--alg ALG] --samples N [--verbose]")
    }

    @Test func valuesComeBackTyped() throws {
        let parsed = try arguments(["--alg", "ECDH-ES+A256KW", "--samples", "7", "--verbose"])
        #expect(try parsed[Self.algorithm] == .ecdhESA256KW)
        #expect(try parsed.required(Self.samples) == 7)
        #expect(parsed[Self.verbose])
        #expect(try arguments(["--samples", "1"])[Self.algorithm] == nil)
    }

    @Test func aRefusedValueIsAUsageErrorNamingTheOption() throws {
        let parsed = try arguments(["--alg", "RSA1_5", "--samples", "21"])
        do {
            _ = try parsed[Self.algorithm]
            Issue.record("RSA1_5 was accepted")
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.message.hasPrefix("invalid value 'RSA1_5' for '--alg': expected one of ECDH-ES, "))
        }
        #expect(throws: UsageError(.invalidValue, "")) { try parsed.required(Self.samples) }
    }

    /// Decimal options take decimal notation only: `Double(_:)` also reads hex floats.
    @Test func decimalsAreDecimalNotationOnly() throws {
        let seconds = Option("seconds", "S", help: "Seconds.", .decimal(in: -100...100))
        for (text, value) in [("12", 12.0), ("-0.5", -0.5), ("1e1", 10), ("+2", 2), (".5", 0.5), ("2.5E1", 25)] {
            #expect(try seconds.parse(text) == value, "\(text)")
        }
        for text in ["0x1p3", "0X1P3", "0x10", "-0x1p1", "0x.8p1", "nan", "inf", "1_0", " 1", ""] {
            do {
                let value = try seconds.parse(text)
                Issue.record("'\(text)' was read as \(value)")
            } catch {
                #expect(error.code == .invalidValue, "\(text)")
                #expect(error.message.hasPrefix("invalid value '\(text)' for '--seconds': expected a number from"))
            }
        }
    }

    @Test func errorsCompareByCode() {
        #expect(UsageError(.missingOption, "one") == UsageError(.missingOption, "other"))
        #expect(UsageError(.missingOption, "same") != UsageError(.unknownOption, "same"))
        #expect(CLIFailure(.backend, "a").code.rawValue == "backend")
    }
}
