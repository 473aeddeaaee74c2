import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelBenchmarks

/// The client-CPU rows subtract the backend's CPU by thread name: a backend started through
/// `ServerThreads` must run on threads the kernel knows by that name, every time.
@Suite(.dedicatedThread) struct ServerThreadsTests {
    static func kernelName() -> String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .newlines)
    }

    @Test func theStartingThreadAndTheThreadsItCreatesCarryTheName() throws {
        for _ in 0..<20 {
            let names = try ServerThreads.start { () -> [String] in
                let child = Locked("")
                let done = DispatchSemaphore(value: 0)
                Thread {
                    child.withLock { $0 = Self.kernelName() }
                    done.signal()
                }.start()
                done.wait()
                return [Self.kernelName(), child.withLock { $0 }]
            }
            #expect(names == [ServerThreads.name, ServerThreads.name])
        }
    }
}
