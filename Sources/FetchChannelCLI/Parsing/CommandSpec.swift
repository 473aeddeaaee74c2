/// What a command accepts: its name, a one-line abstract, options and positional arguments.
/// The parser, the help text and the usage line are all derived from it.
public struct CommandSpec: Sendable, Hashable {
    /// The words after `fetchchannel`, e.g. `["key", "generate"]`.
    public let path: [String]
    /// One line, shown in the command list and at the top of the help.
    public let abstract: String
    /// More text for `--help` (may be empty).
    public let discussion: String
    public let options: [OptionSpec]
    public let positionals: [PositionalSpec]

    public init(
        path: [String], abstract: String, discussion: String = "", options: [OptionSpec] = [],
        positionals: [PositionalSpec] = []
    ) {
        self.path = path
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
    }

    /// `fetchchannel key generate`.
    public var commandLine: String { (["fetchchannel"] + path).joined(separator: " ") }

    /// `fetchchannel key export [--store DIR] [--format pem|jwk|der] KEYID`.
    public var usage: String {
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
    public func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}

/// One `--name` option.
public struct OptionSpec: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// `--json`: present or not.
        case flag
        /// `--store DIR` or `--store=DIR`; the placeholder names the value in help.
        case value(placeholder: String)
    }

    /// The long name without the leading dashes.
    public let name: String
    public let kind: Kind
    public let help: String
    /// The parser refuses the command without it.
    public let isRequired: Bool
    /// May be given more than once (each value is kept, in order).
    public let isRepeatable: Bool

    public init(_ name: String, _ kind: Kind, help: String, required: Bool = false, repeatable: Bool = false) {
        self.name = name
        self.kind = kind
        self.help = help
        self.isRequired = required
        self.isRepeatable = repeatable
    }

    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name, .flag, help: help)
    }

    public static func value(
        _ name: String, _ placeholder: String, help: String, required: Bool = false,
        repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name, .value(placeholder: placeholder), help: help, required: required, repeatable: repeatable)
    }
}

/// One positional argument.
public struct PositionalSpec: Sendable, Hashable {
    /// The placeholder shown in usage, e.g. `KEYID`.
    public let name: String
    public let help: String
    /// Only the last positionals may be optional.
    public let isOptional: Bool

    public init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}
