/// A day of a person's use of an app, as the triggers it produces: foregrounds (some in quick
/// succession, as when switching apps), bursts of pull-to-refresh, pushes (some followed by a
/// refresh), operations whose push was lost, QR-code operations the push-only policy leaves alone,
/// and an hour without a registration. Seeded: the same seed gives the same day.
///
/// ``minimumRequests(throttleWindowMillis:)`` counts, from the script alone, the fetch requests the
/// rules require and allow: it shares no code with the coordinator.
struct TriggerDayScript {
    enum Event: Equatable {
        case foreground
        case userAction
        /// An operation is dispatched and its push arrives (an `.incoming` trigger).
        case push
        /// An operation is dispatched through `channel` and no trigger arrives for it.
        case silentDispatch(channel: String)
        case deregister
        case register
    }

    struct Timed {
        /// Milliseconds after the start of the day.
        let offsetMillis: Int64
        let event: Event
    }

    /// Sorted by time (stable).
    let events: [Timed]
    /// How long the n-th fetch takes, in simulated milliseconds.
    let fetchLatenciesMillis: [Int64]

    static func make(seed: UInt64) -> TriggerDayScript {
        var random = BenchmarkRandom(seed: seed)
        let day: Int64 = 16 * 3_600_000  // 07:00 to 23:00
        var events: [Timed] = []
        func at(_ offset: Int64, _ event: Event) {
            events.append(Timed(offsetMillis: Swift.min(Swift.max(offset, 0), day), event: event))
        }

        for _ in 0..<60 {
            let time = Int64.random(in: 0..<day, using: &random)
            at(time, .foreground)
            if Int.random(in: 0..<5, using: &random) == 0 {  // switching back and forth
                var next = time
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    next += Int64.random(in: 2_000...20_000, using: &random)
                    at(next, .foreground)
                }
            }
        }
        for _ in 0..<20 {
            var time = Int64.random(in: 0..<day, using: &random)
            for _ in 0..<Int.random(in: 2...10, using: &random) {
                at(time, .userAction)
                time += Int64.random(in: 100...1_500, using: &random)
            }
        }
        for _ in 0..<12 {
            let time = Int64.random(in: 0..<day, using: &random)
            at(time, .push)
            if Bool.random(using: &random) { at(time + Int64.random(in: 500...3_000, using: &random), .userAction) }
        }
        for index in 0..<8 {
            at(
                Int64.random(in: 0..<day, using: &random),
                .silentDispatch(channel: index % 4 == 3 ? "png-qr-code" : "firebase-cloud-messaging"))
        }
        at(6 * 3_600_000, .deregister)
        at(7 * 3_600_000, .register)

        let ordered = events.enumerated().sorted {
            $0.element.offsetMillis != $1.element.offsetMillis
                ? $0.element.offsetMillis < $1.element.offsetMillis : $0.offset < $1.offset
        }.map(\.element)
        let latencies = (0..<ordered.count).map { _ in Int64.random(in: 150...1_200, using: &random) }
        return TriggerDayScript(events: ordered, fetchLatenciesMillis: latencies)
    }

    var count: (foregrounds: Int, userActions: Int, pushes: Int) {
        (
            events.filter { $0.event == .foreground }.count, events.filter { $0.event == .userAction }.count,
            events.filter { $0.event == .push }.count
        )
    }

    /// The fetch requests the rules call for: a foreground or user action while registered makes one,
    /// unless a fetch is under way (it shares that one) or the last one returned less than the
    /// throttle window ago. Pushes and dispatches never do.
    func minimumRequests(throttleWindowMillis: Int64) -> Int {
        var registered = true
        var requests = 0
        var completesAt = Int64.min
        for timed in events {
            switch timed.event {
            case .deregister: registered = false
            case .register: registered = true
            case .push, .silentDispatch: break
            case .foreground, .userAction:
                guard registered else { continue }
                if requests > 0 {
                    if timed.offsetMillis < completesAt { continue }  // under way: shared
                    if timed.offsetMillis - completesAt < throttleWindowMillis { continue }  // throttled
                }
                completesAt = timed.offsetMillis + fetchLatenciesMillis[requests]
                requests += 1
            }
        }
        return requests
    }
}
