import FetchChannelEmulator

/// `fetchchannel demo`: the main job, a walk through the fetch channel on loopback.
struct DemoCommand: CLICommand {
    static let spec = CommandSpec(
        path: ["demo"],
        abstract: "Walk through the fetch channel against in-process reference backends on loopback.",
        discussion:
            "Starts four reference backends on ephemeral loopback ports (a healthy one over HTTPS with its CA and pin trusted, one whose clock is 7 min 12 s ahead, one that is down, one over HTTPS whose key is not the pinned one), creates a key in a temporary store, registers it, dispatches push, QR-code and link operations, and shows the fetch practices: a foreground fetch, a throttled user action, the two channel policies, a push redeemed once while a fetch returns it, a failed redemption released and retried, clock skew, a network error and a pin mismatch in a partial result, and a TPM-bound key when a software TPM (swtpm) is installed. Needs nothing configured; removes its temporary store; takes well under a second after the build."
            + " --json prints {\"completed\", \"steps\": [{\"number\", \"title\", \"lines\"}]} at the end instead of the narrative as it goes (on failure also \"code\" and \"message\").",
        options: [CommonOptions.json]
    )

    let console: Console

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
    }

    func run() async throws -> Int32 {
        // Ctrl-C, `kill` or a closed terminal stops its software TPM and removes its temporary
        // directories before the process dies of the signal.
        let cleanup = await TerminationCleanup.catchingSignals()
        defer { cleanup.close() }
        let narration = DemoNarration(writingTo: console.json ? nil : console.standardOutput)
        do {
            try await DemoWalkthrough(narration: narration).run()
        } catch {
            if console.json {
                let code = (error as? CLIFailure)?.code.rawValue ?? "unexpectedOutcome"
                try console.printJSON([
                    "completed": false, "code": code, "message": FetchChannelCLI.describe(error),
                    "steps": narration.jsonSteps,
                ])
            }
            throw error
        }
        if console.json { try console.printJSON(["completed": true, "steps": narration.jsonSteps]) }
        return ExitCode.success
    }
}
