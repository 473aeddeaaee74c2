import Foundation

/// The "nothing hangs" bounds on wall time, stretched where every test runs several times slower:
/// the sanitizer runs of .ci/run set `FETCHCHANNEL_TEST_TIME_SCALE` (5). There dozens of suites
/// share two cores, and an async step of one test can wait tens of seconds for a cooperative
/// thread. What a test proves stays in its failure kinds and in what its servers saw; these bounds
/// only keep a hang from lasting for ever.
public enum LooseTimeBounds {
    /// 1, or the whole number in `FETCHCHANNEL_TEST_TIME_SCALE` (at most 20).
    public static let scale: Int = {
        let text = ProcessInfo.processInfo.environment["FETCHCHANNEL_TEST_TIME_SCALE"] ?? ""
        return min(20, max(1, Int(text) ?? 1))
    }()

    /// `duration` times ``scale``.
    public static func scaled(_ duration: Duration) -> Duration { duration * scale }
}
