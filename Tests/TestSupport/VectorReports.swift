import FetchChannelVectors
import Testing

extension VectorFileReport {
    /// Records every failure of the report as its own issue (each names its vector case).
    public func recordFailures(sourceLocation: SourceLocation = #_sourceLocation) {
        for failure in failures {
            Issue.record(Comment(rawValue: "\(file): \(failure)"), sourceLocation: sourceLocation)
        }
    }
}
