import FetchChannelTestSupport
import Testing

/// Every suite that runs the built `fetchchannel` binary as a child process, nested here so
/// that they run one test at a time: each child costs a process start and often a key
/// derivation, and a dozen at once on a two-core machine starved the timing-sensitive tests of
/// other targets running beside them.
@Suite(.serialized, .dedicatedThread) struct CLISubprocessTests {}
