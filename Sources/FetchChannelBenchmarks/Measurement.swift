import Foundation

/// Timing helpers. Rates are compared by alternating rounds of the candidate and its baseline
/// in one process and taking the median of each: a noisy neighbour slows both alike.
enum Measurement {
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// CPU seconds of the whole process so far.
    static func processCPUSeconds() -> Double {
        cpuSeconds(CLOCK_PROCESS_CPUTIME_ID)
    }

    /// CPU seconds of the calling thread so far.
    static func threadCPUSeconds() -> Double {
        cpuSeconds(CLOCK_THREAD_CPUTIME_ID)
    }

    private static func cpuSeconds(_ clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Operations per second of `body`, which performs `batch` operations per call.
    static func rate(batch: Int, minimumSeconds: Double, _ body: () -> Void) -> Double {
        var operations = 0
        let start = monotonicSeconds()
        var elapsed = 0.0
        repeat {
            body()
            operations += batch
            elapsed = monotonicSeconds() - start
        } while elapsed < minimumSeconds
        return Double(operations) / elapsed
    }

    /// The longest slice of a round: a shared machine's speed changes within a fraction of a
    /// second, and in rounds of 0.2 s one side often caught a slow spell the other did not (ratios
    /// of one binary spread 0.65–1.14; in slices of 25 ms, 0.78–0.86).
    static let sliceSeconds = 0.025

    /// Medians of alternating rounds: (candidate ops/s, baseline ops/s). The measuring time,
    /// `rounds` × `secondsPerRound` for each side, is cut into slices of at most
    /// ``sliceSeconds``, alternated, so that both sides see the same state of the machine.
    static func compare(
        rounds: Int, secondsPerRound: Double, batch: Int,
        candidate: () -> Void, baseline: () -> Void
    ) -> (candidate: Double, baseline: Double) {
        let total = Double(rounds) * secondsPerRound
        let slices = max(rounds, Int((total / sliceSeconds).rounded(.up)))
        let secondsPerSlice = total / Double(slices)
        var candidateRates: [Double] = []
        var baselineRates: [Double] = []
        for round in 0..<slices {
            // Alternate which one goes first so neither always gets the warmer cache.
            if round % 2 == 0 {
                baselineRates.append(rate(batch: batch, minimumSeconds: secondsPerSlice, baseline))
                candidateRates.append(rate(batch: batch, minimumSeconds: secondsPerSlice, candidate))
            } else {
                candidateRates.append(rate(batch: batch, minimumSeconds: secondsPerSlice, candidate))
                baselineRates.append(rate(batch: batch, minimumSeconds: secondsPerSlice, baseline))
            }
        }
        return (median(candidateRates), median(baselineRates))
    }

    /// `value / baseline` to three places, as a row prints it. Rows pass their value and baseline
    /// as printed, so that the ratio is the printed value over the printed baseline (BenchmarkRow).
    /// A ratio judged against a target is rounded toward failing it (`.down` for an at-least
    /// target, `.up` for an at-most one): a row is met only when the ratio is, so 0.9495 is
    /// printed 0.949 and fails >= 0.95; one only reported is rounded to nearest. Nil without a
    /// baseline.
    static func ratio(_ value: Double, over baseline: Double, rounding: FloatingPointRoundingRule) -> Double? {
        guard baseline > 0 else { return nil }
        return (value / baseline * 1000).rounded(rounding) / 1000
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Resident set size in bytes, from /proc/self/statm (0 where unavailable).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
