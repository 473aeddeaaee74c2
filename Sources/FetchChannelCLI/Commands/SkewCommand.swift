import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// `fetchchannel skew`: how far this device's clock is from a backend's, from the `Date` headers
/// of a few requests, and what that means for its Device-Signatures.
struct SkewCommand: CLICommand {
    static let server = Option(
        "server", "URL", help: "The backend's base URL (https://, or http:// on loopback).", required: true,
        .backendURL)
    static let samples = Option("samples", "N", help: "Requests to make, 1 to 20 (default: 3).", .integer(in: 1...20))
    static let tolerance = Option(
        "tolerance-seconds", "S", help: "The difference the backend accepts (default: 60).",
        .decimal(in: 0...86_400))
    static let timeout = CommonOptions.timeout(help: "Per-request timeout (default: 15).")

    static let spec = CommandSpec(
        path: ["skew"],
        abstract: "Measure the clock offset to a backend from its Date headers and say what it means.",
        discussion:
            "Sends a few GET requests to the server URL and takes, from each answer's Date header, offset = server date + 0.5 s - midpoint(sent, received) (the header has one-second resolution; answers with an Age header are ignored); the result is their median. Positive: the server is ahead, the device clock behind. Prints the offset on standard output; exits 0 when it is within the tolerance, 1 (with what to do on standard error) when not. --json prints {\"measured\": true, \"server\", \"offsetMillis\", \"samplesMillis\", \"toleranceMillis\", \"withinTolerance\", \"message\"}, or, when nothing could be measured (exit 1), {\"measured\": false, \"server\", \"code\", \"message\"}.",
        options: [server, samples, tolerance, timeout, CommonOptions.json] + BackendTrustOptions.all
    )

    let console: Console
    let backend: BackendOptions
    let sampleCount: Int
    let toleranceMillis: Int64
    /// `--timeout-seconds`: each request's, as fetch's and redeem's.
    let timeout: Duration
    /// The device clock being measured.
    let clock: any WallClock

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        backend = try BackendOptions(arguments, server: Self.server, context: context)
        sampleCount = Int(try arguments[Self.samples] ?? 3)
        toleranceMillis = Int64(((try arguments[Self.tolerance] ?? 60) * 1000).rounded())
        timeout = try arguments[Self.timeout] ?? .seconds(15)
        clock = context.wallClock
    }

    func run() async throws -> Int32 {
        let measured: (offset: Int64, samples: [Int64])
        do {
            measured = try await estimate()
        } catch {
            // Nothing was measured; --json still answers on standard output, as redeem's refusals do.
            if console.json {
                let code = (error as? CLIFailure)?.code.rawValue ?? CLIFailure.Code.backend.rawValue
                try console.printJSON([
                    "measured": false, "server": backend.server.description, "code": code,
                    "message": FetchChannelCLI.describe(error),
                ])
            }
            throw error
        }
        return try report(offset: measured.offset, samples: measured.samples)
    }

    /// The median offset of the usable samples, and each sample's offset; throws why the last
    /// request gave none when none did.
    private func estimate() async throws -> (offset: Int64, samples: [Int64]) {
        let name = backend.server.description
        let (samples, lastProblem) = await measure()
        let estimator = ClockSkewEstimator(samplesPerServer: sampleCount)
        for sample in samples { estimator.record(sample, for: name) }
        guard let offset = estimator.estimatedOffsetMillis(for: name) else { throw lastProblem }
        if samples.count < sampleCount {
            console.note(
                "\(sampleCount - samples.count) of \(sampleCount) samples could not be measured (the last "
                    + "problem: \(lastProblem.message)).")
        }
        return (offset, samples.map(\.offsetMillis))
    }

    /// A sample from each answer with a usable `Date` header, and why the last request that gave
    /// none did not. A request without an answer ends the run, since the next would most likely
    /// fail the same way (a pin, a refused connection) or wait out the same timeout; the samples
    /// measured before it still count.
    private func measure() async -> (samples: [ClockSkewSample], lastProblem: CLIFailure) {
        let client = BackendHTTPClient(timeout: timeout)
        var samples: [ClockSkewSample] = []
        func unusable(_ why: String) -> CLIFailure {
            CLIFailure(.backend, "cannot measure the clock offset to \(backend.server.description): \(why)")
        }
        var lastProblem = unusable("no answer carried a usable Date header")
        for _ in 0..<sampleCount {
            let sent = clock.nowMillis()
            let answer: BackendHTTPClient.Answer
            do {
                answer = try await client.get(backend.server.url, trust: backend.trust)
            } catch let failure as CLIFailure {
                lastProblem = failure
                break
            } catch {
                lastProblem = unusable(FetchChannelCLI.describe(error))
                break
            }
            let received = clock.nowMillis()
            let date = answer.header(WireHeader.date)
            let age = answer.header(WireHeader.age)
            guard
                let sample = ClockSkewSample.from(
                    dateHeader: date, ageHeader: age, sentAtMillis: sent, receivedAtMillis: received)
            else {
                lastProblem = unusable(
                    date == nil
                        ? "the answer had no Date header"
                        : age != nil
                            ? "the answer came from a cache (Age header)"
                            : "the Date header '\(BackendHTTPClient.Answer.clean(date ?? ""))' is not an HTTP date")
                continue
            }
            samples.append(sample)
        }
        return (samples, lastProblem)
    }

    /// Prints the offset (or the JSON object) and says what it means; exit 0 within the tolerance.
    private func report(offset: Int64, samples: [Int64]) throws -> Int32 {
        let name = backend.server.description
        let within = offset.magnitude <= UInt64(toleranceMillis)
        let message =
            within
            ? "The device clock is \(Self.describe(offset)) \(name), within the allowed \(Self.seconds(toleranceMillis)) "
                + "(±0.5 s: the Date header has one-second resolution)."
            : ClockSkew(server: name, measuredOffsetMillis: offset, toleranceMillis: toleranceMillis).message
        if console.json {
            try console.printJSON([
                "server": name, "offsetMillis": offset, "samplesMillis": samples, "toleranceMillis": toleranceMillis,
                "withinTolerance": within, "message": message, "measured": true,
            ])
        } else {
            console.line(
                "\(offset >= 0 ? "+" : "")\(offset) ms (server minus device, median of \(samples.count) "
                    + "sample\(samples.count == 1 ? "" : "s"))")
        }
        if within {
            console.note(message)
            return ExitCode.success
        }
        console.note("Error: " + message)
        return ExitCode.failure
    }

    /// "0.4 s behind" / "1.2 s ahead of" / "exactly in step with".
    private static func describe(_ offset: Int64) -> String {
        guard offset != 0 else { return "in step with" }
        return "\(seconds(Int64(offset.magnitude))) \(offset > 0 ? "behind" : "ahead of")"
    }

    private static func seconds(_ millis: Int64) -> String {
        let value = Double(millis) / 1000
        return value == value.rounded() ? "\(Int64(value)) s" : String(format: "%.1f s", value)
    }
}
