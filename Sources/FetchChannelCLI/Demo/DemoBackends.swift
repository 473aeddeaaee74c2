import FetchChannel
import FetchChannelEmulator
import Foundation

/// The demo's four reference backends (step 1): a healthy one on HTTPS whose CA the device trusts
/// and whose key it pins, one whose clock is 7 min 12 s ahead, one that is down, and one on HTTPS
/// whose certificate is valid but whose key is not the pinned one.
struct DemoBackends {
    let healthy: ReferenceBackend
    let healthyTrust: TLSTrust
    let skewed: ReferenceBackend
    /// Nothing listens there any more: connections are refused.
    let downURL: URL
    let repinned: ReferenceBackend
    let repinnedTrust: TLSTrust

    /// Starts the backends; those already started are stopped when a later one cannot start.
    static func start() throws -> DemoBackends {
        let healthy = try ReferenceBackend.start(tls: .generated)
        var started = [healthy]
        do {
            let healthyTrust = try DemoWalkthrough.trust(of: healthy)
            let skewed = try ReferenceBackend.start(.init(clockOffsetMillis: 7 * 60_000 + 12_000))
            started.append(skewed)
            let down = try ReferenceBackend.start()
            let downURL = down.baseURL
            down.stop()
            let repinned = try ReferenceBackend.start(tls: .generated)
            started.append(repinned)
            let repinnedTrust = try TLSTrust(
                anchors: try DemoWalkthrough.trust(of: repinned).anchors, pins: healthyTrust.pins)
            return DemoBackends(
                healthy: healthy, healthyTrust: healthyTrust, skewed: skewed, downURL: downURL, repinned: repinned,
                repinnedTrust: repinnedTrust)
        } catch {
            for backend in started.reversed() { backend.stop() }
            throw error
        }
    }

    func stop() {
        repinned.stop()
        skewed.stop()
        healthy.stop()
    }

    /// Step 1 of the walkthrough.
    func describe(_ walkthrough: DemoWalkthrough) {
        walkthrough.step(1, "Four reference backends:")
        walkthrough.say("   healthy        \(healthy.baseURL.absoluteString)  (HTTPS: its CA trusted, its key pinned)")
        walkthrough.say("   clock skewed   \(skewed.baseURL.absoluteString)  (its clock is 7 min 12 s ahead)")
        walkthrough.say("   down           \(downURL.absoluteString)")
        walkthrough.say(
            "   wrong pin      \(repinned.baseURL.absoluteString)  "
                + "(HTTPS: its CA trusted, its key is not the pinned one)")
    }
}
