import FetchChannelTestSupport
import Testing

@testable import FetchChannelEmulator

@Suite(.dedicatedThread) struct HTTPAuthorityTests {
    @Test(
        arguments: [
            ("127.0.0.1", true, nil), ("127.0.0.1:8080", true, 8080), ("127.255.0.9:0", true, 0),
            ("localhost", true, nil),
            ("LOCALHOST:65535", true, 65_535), ("localhost:", true, nil), ("[::1]", true, nil),
            ("[::1]:443", true, 443),
            ("[0:0:0:0:0:0:0:1]", true, nil), ("[::ffff:127.0.0.2]:1", true, 1),
            ("10.1.2.3", false, nil), ("[2001:db8::1]:80", false, 80), ("0.0.0.0", false, nil),
        ] as [(String, Bool, Int?)])
    func validAuthorities(text: String, loopback: Bool, port: Int?) throws {
        let authority = try #require(HTTPAuthority(text), "\(text)")
        #expect(authority.isLoopback == loopback, "\(text)")
        #expect(authority.port == port, "\(text)")
    }

    @Test(arguments: [
        "", "evil.example", "localhost.", "localhost.evil", "127.0.0.1.nip.io", "::1", "::1:80", "[127.0.0.1]",
        "[localhost]", "[::1", "[::1]x", "127.0.0.1:80:80", "127.0.0.1:+80", "127.0.0.1:065536",
        "127.0.0.1:123456", "user@127.0.0.1", "127.1", "0x7f.0.0.1", " 127.0.0.1", "[[::1]]",
    ])
    func refusedAuthorities(text: String) {
        #expect(HTTPAuthority(text) == nil, "\(text)")
    }
}
