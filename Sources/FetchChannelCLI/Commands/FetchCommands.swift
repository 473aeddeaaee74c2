/// `fetchchannel fetch`, `redeem` and `demo`: registered so that their help and usage exist,
/// waiting for the fetch client and the coordinator (issues 5 and 6). Until then each one parses
/// its arguments strictly and then fails with a runtime error that says so.
enum FetchCommands {
    static let all = [fetch, redeem, demo]

    static let fetch = pending(CommandSpec(
        path: ["fetch"],
        abstract: "Fetch the pending out-of-band operations of every registered key (not available yet).",
        discussion: "Exit 0 when every backend answered, 2 when some failed, 1 when all failed. Waits for the fetch client.",
        options: [
            .value("key", "KEYID", help: "Only this key's registration (repeatable; default: every registered key).", repeatable: true),
            .value("policy", "push-only|accessibility", help: "Which channels count (default: accessibility)."),
            CommonOptions.store,
            CommonOptions.passphraseFile,
            CommonOptions.json,
        ]), waitingFor: "the fetch client")

    static let redeem = pending(CommandSpec(
        path: ["redeem"],
        abstract: "Redeem an operation's token (not available yet).",
        discussion: "Waits for the fetch client's redemption.",
        options: [
            .value("redeem-url", "URL", help: "The operation's redeemUrl.", required: true),
            CommonOptions.json,
        ],
        positionals: [PositionalSpec("TOKEN", help: "The operation's redeem token.")]), waitingFor: "the fetch client")

    static let demo = pending(CommandSpec(
        path: ["demo"],
        abstract: "Walk through the fetch channel against in-process reference backends (not available yet).",
        discussion: "Waits for the fetch client and the fetch coordinator."), waitingFor: "the fetch client and the fetch coordinator")

    private static func pending(_ spec: CommandSpec, waitingFor: String) -> Command {
        Command(spec: spec) { _ in
            throw CLIFailure("'\(spec.commandLine)' is not available yet: it needs \(waitingFor), which this build does not include")
        }
    }
}
