import FetchChannelTestSupport
import Testing

/// Every suite that runs the built `fetchchannel` binary as a child process is nested in one of
/// the two suites below, so that each runs one test at a time: each child costs a process start
/// and often a key derivation, and a dozen at once on a two-core machine starved the
/// timing-sensitive tests of other targets running beside them. Two chains, one child each, keep
/// that load to about a core while the AddressSanitizer run of .ci/run does not wait for one long
/// chain (361 s became 266 s there).

/// Children that serve, fetch, register, rotate, redeem, ask for the skew or run the demo or the
/// bench.
@Suite(.serialized, .dedicatedThread) struct CLISubprocessTests {}

/// Children that never open a socket: key commands, sign and verify, encrypt and decrypt, vectors,
/// passphrase handling.
@Suite(.serialized, .dedicatedThread) struct CLIOfflineProcessTests {}
