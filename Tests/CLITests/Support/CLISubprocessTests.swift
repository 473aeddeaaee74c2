import FetchChannelTestSupport
import Testing

/// Every suite that runs the built `fetchchannel` binary as a child process is nested in one of
/// the two suites below, so that each runs one test at a time: each child costs a process start
/// and often a key derivation, and a dozen at once on a two-core machine starved the
/// timing-sensitive tests of other targets running beside them. Two chains, one child each, keep
/// that load to a core's worth while the sanitizer runs of .ci/run do not wait for one long chain.

/// Children that serve, fetch, register, rotate, redeem, ask for the skew or run the demo or the
/// bench: they start threads (the transport's, the server's), so the ThreadSanitizer run keeps them.
@Suite(.serialized, .dedicatedThread) struct CLISubprocessTests {}

/// Children that never open a socket (key commands, sign and verify, encrypt and decrypt, vectors,
/// passphrase handling): they run on one thread, and the ThreadSanitizer run leaves them out.
@Suite(.serialized, .dedicatedThread) struct CLIOfflineProcessTests {}
