/// What a command accepts: its name, a one-line abstract, options and positional arguments.
/// The parser, the help text and the usage line are all derived from it.
package struct CommandSpec: Sendable, Hashable {
    /// The words after `fetchchannel`, e.g. `["key", "generate"]`.
    package let path: [String]
    /// One line, shown in the command list and at the top of the help.
    package let abstract: String
    /// More text for `--help` (may be empty).
    package let discussion: String
    package let options: [OptionSpec]
    package let positionals: [PositionalSpec]

    /// A spec whose options are the command's typed declarations (`Option`, `Flag`), in the order
    /// of the usage line and the help.
    package init(
        path: [String], abstract: String, discussion: String = "", options: [any OptionDeclaration] = [],
        positionals: [PositionalSpec] = []
    ) {
        self.path = path
        self.abstract = abstract
        self.discussion = discussion
        self.options = options.map(\.spec)
        self.positionals = positionals
    }

    /// `fetchchannel key generate`.
    package var commandLine: String { (["fetchchannel"] + path).joined(separator: " ") }

    /// `fetchchannel key export [--store DIR] [--format pem|jwk|der] KEYID`.
    package var usage: String {
        var parts = [commandLine]
        for option in options {
            let text: String
            switch option.kind {
            case .flag: text = "--\(option.name)"
            case .value(let placeholder): text = "--\(option.name) \(placeholder)"
            }
            parts.append(option.isRequired ? text : "[\(text)]")
        }
        for positional in positionals {
            parts.append(positional.isOptional ? "[\(positional.name)]" : positional.name)
        }
        return parts.joined(separator: " ")
    }

    /// The option called `name` (without dashes).
    package func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}

/// One `--name` option.
package struct OptionSpec: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// `--json`: present or not.
        case flag
        /// `--store DIR` or `--store=DIR`; the placeholder names the value in help.
        case value(placeholder: String)
    }

    /// The long name without the leading dashes.
    package let name: String
    package let kind: Kind
    package let help: String
    /// The parser refuses the command without it.
    package let isRequired: Bool
    /// May be given more than once (each value is kept, in order).
    package let isRepeatable: Bool

    package init(_ name: String, _ kind: Kind, help: String, required: Bool = false, repeatable: Bool = false) {
        self.name = name
        self.kind = kind
        self.help = help
        self.isRequired = required
        self.isRepeatable = repeatable
    }

    package static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name, .flag, help: help)
    }

    package static func value(
        _ name: String, _ placeholder: String, help: String, required: Bool = false,
        repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name, .value(placeholder: placeholder), help: help, required: required, repeatable: repeatable)
    }
}

/// One positional argument.
package struct PositionalSpec: Sendable, Hashable {
    /// The placeholder shown in usage, e.g. `KEYID`.
    package let name: String
    package let help: String
    /// Only the last positionals may be optional.
    package let isOptional: Bool

    package init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}
