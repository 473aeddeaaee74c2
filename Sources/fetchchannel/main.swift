import FetchChannelCLI

// The `fetchchannel` command-line tool. Everything but process start-up lives in FetchChannelCLI,
// where the tests can reach it; see `fetchchannel --help`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A reader that goes away (`fetchchannel key list | head -1`) must not kill the process with
// SIGPIPE; the failed write is reported instead.
signal(SIGPIPE, SIG_IGN)

let status = await FetchChannelCLI.run(Array(CommandLine.arguments.dropFirst()), context: .process())
exit(status)
