import FetchChannel

/// A bench fetch that did not bring what it should, as a ``BenchmarkError`` that says why: the
/// errors' codes, and the first error's message (a refused transport, a key log set, a backend
/// down), so that a failed run can be acted on without running it again.
enum FetchFailure {
    static func error(_ what: String, _ result: PendingOutOfBandOperationsResult) -> BenchmarkError {
        let first = result.errors.first.map { "; the first: \($0.message)" } ?? ""
        return BenchmarkError(
            "\(what): \(result.operations.count) operations and errors \(result.errors.map(\.code))\(first)")
    }
}
