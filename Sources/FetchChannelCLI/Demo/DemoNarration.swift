import Synchronization

/// What the demo says, step by step: written as it goes (text), or kept for one JSON value at the
/// end (`demo --json`: `{"completed", "steps": [{"number", "title", "lines"}]}`).
final class DemoNarration: Sendable {
    struct Step {
        let number: Int
        let title: String
        var lines: [String] = []
    }

    /// Where the text goes as it is said; nil when it is kept for JSON.
    private let output: OutputChannel?
    /// The steps so far; lines said before the first step are step 0's ("fetchchannel demo: …").
    private let steps = Mutex<[Step]>([Step(number: 0, title: "")])

    init(writingTo output: OutputChannel?) {
        self.output = output
    }

    func say(_ text: String) {
        output?.line(text)
        steps.withLock { $0[$0.count - 1].lines.append(text) }
    }

    func step(_ number: Int, _ title: String) {
        output?.line("")
        output?.line("\(number). \(title)")
        steps.withLock { $0.append(Step(number: number, title: title)) }
    }

    /// The steps as `demo --json` prints them: step 0's lines are the introduction.
    var jsonSteps: [[String: Any]] {
        steps.withLock { all in
            all.map { step in
                ["number": step.number, "title": step.title, "lines": step.lines.filter { !$0.isEmpty }]
            }
        }
    }
}
