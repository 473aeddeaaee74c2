/// Options several commands share, declared once.
enum CommonOptions {
    static let json = Flag("json", help: "Print machine-readable JSON on standard output.")
    static let store = Option(
        "store", "DIR",
        help: "The key store directory (default: $XDG_DATA_HOME/fetchchannel/keys, "
            + "else ~/.local/share/fetchchannel/keys).", .nonEmpty)
    static let passphraseFile = Option(
        "passphrase-file", "FILE",
        help: "Read the passphrase from FILE (its first line). Otherwise FETCHCHANNEL_PASSPHRASE is used, else a "
            + "prompt when standard input is a terminal. Never on the command line.", .nonEmpty)
    /// `--timeout-seconds S` of the commands that talk to a backend (default: 15).
    static func timeout(help: String) -> Option<Duration> {
        Option(
            "timeout-seconds", "S", help: help,
            ValueParser.decimal(in: 0.1...600).map { seconds, _ in .milliseconds(Int64((seconds * 1000).rounded())) })
    }
}
