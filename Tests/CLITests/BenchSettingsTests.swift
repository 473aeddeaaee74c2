import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelBenchmarks

/// The values of `fetchchannel bench` and `fetchchannel-bench`, read once for both.
@Suite struct BenchSettingsTests {
    typealias Options = BenchmarkSuite.Options

    @Test func secondsAreADecimalWithinTheBounds() {
        #expect(Options.seconds(from: "0.05") == 0.05)
        #expect(Options.seconds(from: "1e1") == 10)
        #expect(Options.seconds(from: "3600") == 3_600)
        for refused in ["0", "0.009", "3600.5", "0x1p-3", "inf", "nan", "", " 1", "1s", "-1"] {
            #expect(Options.seconds(from: refused) == nil, "\(refused)")
        }
    }

    @Test func countsAreIntegersWithinTheBounds() {
        #expect(Options.signatures(from: "1") == 1)
        #expect(Options.signatures(from: "0") == nil)
        #expect(Options.signatures(from: "1e3") == nil)
        #expect(Options.emulatorRequests(from: "1000") == 1_000)
        #expect(Options.emulatorRequests(from: "999") == nil)
        #expect(Options.emulatorRequests(from: "100000001") == nil)
    }

    @Test func rowsAreNamesSeparatedByCommasSpacesAroundThemIgnored() throws {
        #expect(try Options.rows(from: "sign, verify") == ["sign", "verify"])
        #expect(try Options.rows(from: "tpm-sign") == ["tpm-sign"])
        let refused = [(",sign", ""), ("sign,,verify", ""), ("sign,", ""), ("", ""), ("sign,teleport", "teleport")]
        for (text, unknown) in refused {
            let error = #expect(throws: BenchmarkSuite.UnknownRow.self, "\(text)") { try Options.rows(from: text) }
            #expect(error?.name == unknown, "\(text)")
        }
    }
}

/// The emulator rows sign their requests in chunks: each must be sent well inside the bench
/// backend's tolerance, however slow the machine, or its last requests are refused as stale.
@Suite struct EmulatorChunkSizeTests {
    @Test(arguments: [100.0, 500, 1_000, 1_999, 2_000, 14_000, 1_000_000])
    func aChunkIsSentWellInsideTheTolerance(_ rate: Double) {
        let chunk = LoadRun.chunkRequests(rate: rate, clients: 8)
        let tolerance = Double(EmulatorBenchmarks.toleranceMillis) / 1000
        #expect(Double(chunk) / rate <= tolerance / 5, "\(chunk) requests at \(rate)/s")
        #expect(chunk >= 8 && chunk <= LoadRun.maximumChunkRequests && chunk % 8 == 0, "\(chunk)")
    }

    @Test func theFirstChunkIsSmallAndAStalledRateStillSendsOnePerClient() {
        #expect(LoadRun.chunkRequests(rate: nil, clients: 8) == 1_000)
        #expect(LoadRun.chunkRequests(rate: 0, clients: 8) == 1_000)
        #expect(LoadRun.chunkRequests(rate: 3, clients: 8) == 8)
        #expect(LoadRun.chunkRequests(rate: 14_000, clients: 8) == 14_000)
    }

    @Test func aChunkIsSplitAmongTheClientsWithNothingDroppedOrAdded() {
        #expect(LoadRun.shares(of: 7, clients: 4) == [2, 2, 2, 1])
        #expect(LoadRun.shares(of: 8, clients: 4) == [2, 2, 2, 2])
        #expect(LoadRun.shares(of: 2, clients: 4) == [1, 1, 0, 0])
        #expect(LoadRun.shares(of: 0, clients: 3) == [0, 0, 0])
        #expect(LoadRun.shares(of: 5, clients: 0) == [5])
    }

    /// Every request asked for is sent, when they do not divide by the clients too.
    @Test(.dedicatedThread) func aRunInChunksSendsExactlyTheRequestsAskedFor() throws {
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0)) { _ in
            .respond(HTTPResponse.json(status: 200, Data(#"{"operations":[]}"#.utf8)))
        }
        let address = try server.start()
        defer { server.stop() }
        let request = Array("GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        for requests in [10, 3, 1] {
            let result = try LoadRun.runInChunks(port: address.port, clients: 4, requests: requests) { _, count in
                Array(repeating: request, count: count)
            }
            #expect(result.completed == requests && result.failures == 0, "\(requests): \(result)")
            #expect(result.latencies.count == requests)
        }
    }
}
