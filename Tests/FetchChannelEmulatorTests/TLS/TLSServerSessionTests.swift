internal import COpenSSL
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

/// One TLS server session on a socket pair, with a libssl client on the other end.
@Suite struct TLSServerSessionTests {
    static let keyUpdates = 200

    /// Records without application data (here KeyUpdates, as a client may send without pause)
    /// end each read, so the caller's deadline is checked between them. With libssl's default
    /// auto-retry one read consumed every record the socket held, and a client that kept sending
    /// them kept the connection's thread in that read past every deadline and past `stop()`.
    @Test func aReadReturnsAfterOneRecordWithoutApplicationData() async throws {
        let identity = try TLSServerIdentity.generate()
        let stop = try HTTPStopSignal()
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let (server, client) = (pair[0], pair[1])
        defer {
            close(server)
            close(client)
        }
        try #require(fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK) == 0)
        let clientDone = DispatchSemaphore(value: 0)

        let results = await DedicatedThreads.run(2) { index -> String? in
            if index == 1 {
                defer { clientDone.signal() }
                return Self.sendKeyUpdatesAfterHandshake(on: client)
            }
            guard let session = TLSServerSession(identity: identity, fd: server) else { return "no session" }
            let accepted = session.accept(until: .now + .seconds(10), stop: stop)
            guard accepted == .established else { return "handshake: \(accepted)" }
            guard clientDone.wait(timeout: .now() + 10) == .success else { return "the client did not finish" }
            var buffer = [UInt8](repeating: 0, count: 1024)
            // The deadline has passed: the read returns at the first chance to look at it.
            let outcome = session.receive(into: &buffer, until: .now, stop: stop)
            guard outcome == .timedOut else { return "receive: \(outcome)" }
            var peek = [UInt8](repeating: 0, count: 1)
            let unread = recv(server, &peek, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            return unread > 0 ? nil : "one read consumed all \(Self.keyUpdates) KeyUpdates"
        }
        #expect(results.count == 2)
        for problem in results.compactMap({ $0 }) { Issue.record(Comment(rawValue: problem)) }
    }

    /// A TLS 1.3 handshake, then `keyUpdates` KeyUpdates written back to back; nil when all went out.
    private static func sendKeyUpdatesAfterHandshake(on fd: Int32) -> String? {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return "SSL_CTX_new failed" }
        defer { SSL_CTX_free(context) }
        guard let ssl = SSL_new(context) else { return "SSL_new failed" }
        defer { SSL_free(ssl) }
        guard SSL_set_fd(ssl, fd) == 1, SSL_connect(ssl) == 1 else { return "the client handshake failed" }
        guard SSL_version(ssl) == TLS1_3_VERSION else { return "not TLS 1.3" }
        for _ in 0..<keyUpdates {
            guard SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1, SSL_do_handshake(ssl) == 1 else {
                return "a KeyUpdate was not sent"
            }
        }
        return nil
    }
}
