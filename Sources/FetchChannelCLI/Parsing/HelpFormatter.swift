/// The help texts: per command (from its `CommandSpec`), per group and for the whole tool.
enum HelpFormatter {
    static let helpOption = ("-h, --help", "Show help information.")
    static let versionOption = ("--version", "Show the version.")

    static func help(for spec: CommandSpec) -> String {
        var lines = ["OVERVIEW: \(spec.abstract)", ""]
        if !spec.discussion.isEmpty {
            lines.append(contentsOf: wrap(spec.discussion, width: 100) + [""])
        }
        lines.append(contentsOf: ["USAGE: \(spec.usage)", ""])
        if !spec.positionals.isEmpty {
            lines.append("ARGUMENTS:")
            lines.append(contentsOf: table(spec.positionals.map { ($0.name, $0.help) }))
            lines.append("")
        }
        lines.append("OPTIONS:")
        var rows: [(String, String)] = spec.options.map { option in
            switch option.kind {
            case .flag: ("--\(option.name)", option.help)
            case .value(let placeholder): ("--\(option.name) \(placeholder)", option.help)
            }
        }
        rows.append(helpOption)
        rows.append(versionOption)
        lines.append(contentsOf: table(rows))
        return lines.joined(separator: "\n") + "\n"
    }

    static func groupHelp(name: String, abstract: String, commands: [CommandSpec]) -> String {
        var lines = [
            "OVERVIEW: \(abstract)", "", "USAGE: fetchchannel \(name) <subcommand> [options]", "", "SUBCOMMANDS:",
        ]
        lines.append(contentsOf: table(commands.map { ($0.path.dropFirst().joined(separator: " "), $0.abstract) }))
        lines.append(contentsOf: ["", "OPTIONS:"])
        lines.append(contentsOf: table([helpOption, versionOption]))
        lines.append(contentsOf: ["", "See 'fetchchannel \(name) <subcommand> --help' for a subcommand's options."])
        return lines.joined(separator: "\n") + "\n"
    }

    static func toolHelp(abstract: String, commands: [CommandSpec]) -> String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: fetchchannel <command> [options]", "", "COMMANDS:"]
        lines.append(contentsOf: table(commands.map { ($0.path.joined(separator: " "), $0.abstract) }))
        lines.append(contentsOf: ["", "OPTIONS:"])
        lines.append(contentsOf: table([helpOption, versionOption]))
        lines.append(contentsOf: ["", "See 'fetchchannel <command> --help' for a command's options."])
        return lines.joined(separator: "\n") + "\n"
    }

    /// Two aligned columns; the help text wraps under its own column.
    static func table(_ rows: [(String, String)]) -> [String] {
        let width = min(30, (rows.map(\.0.count).max() ?? 0) + 2)
        var lines: [String] = []
        for (left, right) in rows {
            let wrapped = wrap(right, width: 100 - width - 2)
            if left.count + 2 > width {
                lines.append("  " + left)
                lines.append(contentsOf: wrapped.map { String(repeating: " ", count: width + 2) + $0 })
            } else {
                let padding = String(repeating: " ", count: width - left.count)
                for (index, text) in wrapped.enumerated() {
                    lines.append(
                        index == 0 ? "  " + left + padding + text : String(repeating: " ", count: width + 2) + text)
                }
            }
        }
        return lines
    }

    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if current.isEmpty {
                current = String(word)
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }
}
