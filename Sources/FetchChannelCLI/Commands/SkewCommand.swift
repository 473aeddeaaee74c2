import DeviceSigning
import FetchChannelWire
import Foundation

/// `fetchchannel skew`: how far this device's clock is from a backend's, from the `Date` headers
/// of a few requests, and what that means for its Device-Signatures.
enum SkewCommand {
    static let all = [skew]

    static let skew = Command(
        spec: CommandSpec(
            path: ["skew"],
            abstract: "Measure the clock offset to a backend from its Date headers and say what it means.",
            discussion:
                "Sends a few GET requests to the server URL and takes, from each answer's Date header, offset = server date + 0.5 s - midpoint(sent, received) (the header has one-second resolution; answers with an Age header are ignored); the result is their median. Positive: the server is ahead, the device clock behind. Prints the offset on standard output; exits 0 when it is within the tolerance, 1 (with what to do on standard error) when not. --json prints {\"server\", \"offsetMillis\", \"samplesMillis\", \"toleranceMillis\", \"withinTolerance\", \"message\"}.",
            options: [
                .value(
                    "server", "URL", help: "The backend's base URL (https://, or http:// on loopback).", required: true),
                .value("samples", "N", help: "Requests to make, 1 to 20 (default: 3)."),
                .value("tolerance-seconds", "S", help: "The difference the backend accepts (default: 60)."),
                CommonOptions.json,
            ] + BackendTrustOptions.all
        )
    ) { invocation in
        let arguments = invocation.arguments
        let server = try BackendURL(parsing: arguments.value("server") ?? "")
        let count = try arguments.integer("samples", in: 1...20) ?? 3
        let tolerance = try arguments.decimal("tolerance-seconds", in: 0...86_400) ?? 60
        let toleranceMillis = Int64((tolerance * 1000).rounded())
        let name = server.description

        let clock = SystemWallClock()
        let estimator = ClockSkewEstimator(samplesPerServer: Int(count))
        var samples: [Int64] = []
        var lastProblem = "no answer carried a usable Date header"
        let client = BackendHTTPClient()
        let trust = try BackendTrustOptions.parse(invocation, server: server).trust
        for _ in 0..<count {
            let sent = clock.nowMillis()
            let answer = try await client.get(server.url, trust: trust)
            let received = clock.nowMillis()
            let date = answer.header(WireHeader.date)
            let age = answer.header(WireHeader.age)
            guard
                let sample = ClockSkewSample.from(
                    dateHeader: date, ageHeader: age, sentAtMillis: sent, receivedAtMillis: received)
            else {
                lastProblem =
                    date == nil
                    ? "the answer had no Date header"
                    : age != nil
                        ? "the answer came from a cache (Age header)"
                        : "the Date header '\(BackendHTTPClient.Answer.clean(date ?? ""))' is not an HTTP date"
                continue
            }
            samples.append(sample.offsetMillis)
            estimator.record(sample, for: name)
        }
        guard let offset = estimator.estimatedOffsetMillis(for: name) else {
            throw CLIFailure("cannot measure the clock offset to \(name): \(lastProblem)")
        }
        let within = offset.magnitude <= UInt64(toleranceMillis)
        let message =
            within
            ? "The device clock is \(describe(offset)) \(name), within the allowed \(seconds(toleranceMillis)) (±0.5 s: the Date header has one-second resolution)."
            : ClockSkew(server: name, measuredOffsetMillis: offset, toleranceMillis: toleranceMillis).message
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text([
                    "server": name, "offsetMillis": offset, "samplesMillis": samples,
                    "toleranceMillis": toleranceMillis,
                    "withinTolerance": within, "message": message,
                ]))
        } else {
            invocation.standardOutput.line(
                "\(offset >= 0 ? "+" : "")\(offset) ms (server minus device, median of \(samples.count) sample\(samples.count == 1 ? "" : "s"))"
            )
        }
        if within {
            invocation.note(message)
            return ExitCode.success
        }
        invocation.standardError.line("Error: " + message)
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
