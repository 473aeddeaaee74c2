import FetchChannelCLI

// The `fetchchannel` command-line tool. Everything but process start-up lives in FetchChannelCLI,
// where the tests can reach it; see `fetchchannel --help`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First of all, before anything opens a descriptor: /dev/null onto a standard stream the process
// was started without (`<&-`), or the next descriptor opened would take its number (Dispatch's
// epoll became standard input). The context still treats those streams as closed.
let closedStandardStreams = StandardStreams.openNullOntoClosed()

// A reader that goes away (`fetchchannel key list | head -1`) must not kill the process with
// SIGPIPE; the failed write is reported instead.
signal(SIGPIPE, SIG_IGN)

// The TPM library puts the TCTI of a load into TPM2OPENSSL_TCTI (tpm2-openssl reads nothing
// else). Adding a variable can move the environment's array under another thread's getenv;
// made here, before any other thread runs, every later change rewrites the value in place.
// Empty means not set to every reader here.
if getenv("TPM2OPENSSL_TCTI") == nil { setenv("TPM2OPENSSL_TCTI", "", 0) }

let context = CLIContext.process(closedStandardStreams: closedStandardStreams)
// CommandLine.arguments replaces bytes that are not UTF-8 with U+FFFD: such an argument is refused.
// An empty argument list (argc 0, which older kernels pass on) has nothing to check.
if let position = (1..<max(1, Int(CommandLine.argc))).first(where: { index in
    CommandLine.unsafeArgv[index].map { String(validatingCString: $0) == nil } ?? false
}) {
    exit(FetchChannelCLI.refuseArgumentNotUTF8(at: position, context: context))
}
let status = await FetchChannelCLI.run(Array(CommandLine.arguments.dropFirst()), context: context)
exit(status)
