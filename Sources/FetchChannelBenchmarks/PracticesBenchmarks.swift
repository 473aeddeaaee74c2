/// The fetch practices' rows: `trigger-day-requests` and `pipeline-tokens`.
public enum PracticesBenchmarks {
    public static func rows(seconds: Double) async throws -> [BenchmarkRow] {
        [try await TriggerDayBenchmark.row(), await PipelineBenchmark.row(seconds: seconds)]
    }
}
