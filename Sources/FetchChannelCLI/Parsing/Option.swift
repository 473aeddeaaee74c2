/// A `--name VALUE` option declared once, with how its value is read: the command's spec lists
/// it (name, placeholder, help) and the command reads the parsed value through it
/// (`arguments[Self.server]`), so the name is spelled in one place only.
package struct Option<Value: Sendable>: OptionDeclaration {
    package let spec: OptionSpec
    private let parser: ValueParser<Value>

    package init(
        _ name: String, _ placeholder: String, help: String, required: Bool = false, repeatable: Bool = false,
        _ parser: ValueParser<Value>
    ) {
        self.spec = .value(name, placeholder, help: help, required: required, repeatable: repeatable)
        self.parser = parser
    }

    /// The value `text` as this option reads it, or a `UsageError` that names the option.
    package func parse(_ text: String) throws(UsageError) -> Value {
        try parser.read(text, spec.name)
    }
}

extension Option where Value == String {
    /// An option whose value is taken as typed (a path, an id checked later).
    package init(_ name: String, _ placeholder: String, help: String, required: Bool = false) {
        self.init(name, placeholder, help: help, required: required, .text)
    }
}

/// A `--name` flag declared once: present or not.
package struct Flag: OptionDeclaration {
    package let spec: OptionSpec

    package init(_ name: String, help: String) {
        self.spec = .flag(name, help: help)
    }
}

/// An option or flag as a command's spec lists it.
package protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}
