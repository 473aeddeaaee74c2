import DeviceSigning
import Foundation

/// The `fetchchannel` command-line tool: dispatch, help, version and error reporting. The
/// executable calls `run(_:context:)` and exits with its result.
///
/// Conventions (docs/ARCHITECTURE.md, "CLI conventions"): `-h`/`--help` and `--version` print to standard
/// output and exit 0; a usage error prints `Error: …`, the usage line and `See 'fetchchannel
/// <cmd> --help'` to standard error and exits 64; a runtime failure prints `Error: …` to
/// standard error and exits 1. Data goes to standard output, progress and diagnostics to
/// standard error.
package enum FetchChannelCLI: Sendable {
    package static let version = "0.1.0"
    static let abstract = "Device keys, Device-Signatures and the fetch channel's reference backend."

    /// Every command, in the order of the help.
    static let commands: [any CLICommand.Type] = [
        KeyGenerateCommand.self, KeyListCommand.self, KeyShowCommand.self, KeyExportCommand.self,
        KeyImportCommand.self, KeyDeleteCommand.self, RegisterCommand.self, RotateCommand.self, SignCommand.self,
        VerifyCommand.self, EncryptCommand.self, DecryptCommand.self, FetchCommand.self, RedeemCommand.self,
        DemoCommand.self, SkewCommand.self, VectorsVerifyCommand.self, ServeCommand.self, BenchCommand.self,
    ]

    /// Groups of subcommands (`key …`, `vectors …`) and their one-line abstracts.
    static let groups: [String: String] = [
        "key": "Generate, list, show, export, import and delete device keys.",
        "vectors": "Check the test vectors.",
    ]

    /// Every command's spec (for tests and documentation).
    package static var commandSpecs: [CommandSpec] { commands.map { $0.spec } }

    /// Runs the tool with `arguments` (without the program name) and returns the exit status.
    package static func run(_ arguments: [String], context: CLIContext) async -> Int32 {
        let status = await dispatch(arguments, context: context)
        guard context.standardOutput.hasFailed, status != ExitCode.failure else { return status }
        // Whatever the command decided (success, a partial fetch, its help text), what it printed
        // was lost. A failure said why already.
        context.standardError.line("Error: cannot write to standard output")
        return ExitCode.failure
    }

    /// The usage error for a command line whose argument at `position` (1 for the first after the
    /// program name) is not UTF-8: as text it would reach the command with U+FFFD in place of its
    /// bytes, and a `--store` path would name another directory.
    package static func refuseArgumentNotUTF8(at position: Int, context: CLIContext) -> Int32 {
        usageFailure(
            UsageError(
                .invalidValue, "argument \(position) is not UTF-8 text; paths and values are taken as UTF-8 only"),
            usage: "fetchchannel <command> [options]", helpCommand: "fetchchannel", errors: context.standardError)
    }

    /// The command, group or help that `arguments` name, run.
    private static func dispatch(_ arguments: [String], context: CLIContext) async -> Int32 {
        let output = context.standardOutput
        let errors = context.standardError
        guard let first = arguments.first else {
            return usageFailure(
                UsageError(.unknownCommand, "no command given"), usage: "fetchchannel <command> [options]",
                helpCommand: "fetchchannel",
                errors: errors)
        }
        if first == "-h" || first == "--help" || first == "help" {
            output.write(HelpFormatter.toolHelp(abstract: abstract, commands: commandSpecs))
            return ExitCode.success
        }
        if first == "--version" {
            output.line("fetchchannel \(version)")
            return ExitCode.success
        }
        if first.hasPrefix("-") {
            return usageFailure(
                ArgumentParser.forbiddenSecretOptions.contains(optionName(first).lowercased())
                    ? UsageError(
                        .secretOnCommandLine,
                        "--\(optionName(first)) is not an option: \(ArgumentParser.secretOnCommandLineMessage).")
                    : UsageError(
                        .unknownOption,
                        "unknown option '\(ArgumentParser.shown(first.prefix { $0 != "=" }))'; "
                            + "options come after the command"),
                usage: "fetchchannel <command> [options]", helpCommand: "fetchchannel", errors: errors)
        }

        if let groupAbstract = groups[first] {
            return await runGroup(first, abstract: groupAbstract, Array(arguments.dropFirst()), context: context)
        }
        guard let command = commands.first(where: { $0.spec.path == [first] }) else {
            return usageFailure(
                UsageError(.unknownCommand, "unknown command '\(ArgumentParser.shown(first))'"),
                usage: "fetchchannel <command> [options]", helpCommand: "fetchchannel", errors: errors)
        }
        return await run(command, Array(arguments.dropFirst()), context: context)
    }

    /// A group: `key generate …`; `key --help` shows the group's help.
    private static func runGroup(
        _ group: String, abstract: String, _ rest: [String], context: CLIContext
    ) async -> Int32 {
        let members = commands.filter { $0.spec.path.first == group }
        let names = members.map { $0.spec.path[1] }.joined(separator: ", ")
        let usage = "fetchchannel \(group) <subcommand> [options]"
        guard let second = rest.first, !second.hasPrefix("-") else {
            if rest.first == "-h" || rest.first == "--help" {
                context.standardOutput.write(
                    HelpFormatter.groupHelp(name: group, abstract: abstract, commands: members.map { $0.spec }))
                return ExitCode.success
            }
            if rest.first == "--version" {
                context.standardOutput.line("fetchchannel \(version)")
                return ExitCode.success
            }
            return usageFailure(
                UsageError(.unknownCommand, "'fetchchannel \(group)' needs a subcommand: \(names)"),
                usage: usage, helpCommand: "fetchchannel \(group)", errors: context.standardError)
        }
        guard let command = members.first(where: { $0.spec.path[1] == second }) else {
            return usageFailure(
                UsageError(
                    .unknownCommand,
                    "unknown subcommand '\(ArgumentParser.shown(second))' of '\(group)'; expected one of \(names)"),
                usage: usage, helpCommand: "fetchchannel \(group)", errors: context.standardError)
        }
        return await run(command, Array(rest.dropFirst()), context: context)
    }

    private static func run(_ command: any CLICommand.Type, _ arguments: [String], context: CLIContext) async -> Int32 {
        let spec = command.spec
        let errors = context.standardError
        let parsed: ParsedArguments
        do {
            switch try ArgumentParser.parse(arguments, spec: spec) {
            case .help:
                context.standardOutput.write(HelpFormatter.help(for: spec))
                return ExitCode.success
            case .version:
                context.standardOutput.line("fetchchannel \(version)")
                return ExitCode.success
            case .arguments(let arguments):
                parsed = arguments
            }
        } catch {
            return usageFailure(error, usage: spec.usage, helpCommand: spec.commandLine, errors: errors)
        }
        do {
            return try await command.init(parsed, context: context).run()
        } catch let error as UsageError {
            return usageFailure(error, usage: spec.usage, helpCommand: spec.commandLine, errors: errors)
        } catch {
            // On one line: a path or a backend's excerpt in the message cannot fake the lines after it.
            errors.line("Error: \(PrintableText.oneLine(describe(error)))")
            return ExitCode.failure
        }
    }

    static func usageFailure(_ error: UsageError, usage: String, helpCommand: String, errors: OutputChannel) -> Int32 {
        // A message may repeat a path or value as typed: on one line, without control characters.
        errors.write(
            "Error: \(PrintableText.oneLine(error.message))\nUsage: \(usage)\n"
                + "  See '\(helpCommand) --help' for more information.\n")
        return ExitCode.usage
    }

    /// The message of a runtime failure: what happened and what to do, never key material.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let failure as CLIFailure:
            return failure.message
        case let error as DeviceSigningError:
            return error.openSSLErrors.isEmpty
                ? error.reason : "\(error.reason) (OpenSSL: \(error.openSSLErrors.joined(separator: "; ")))"
        default:
            return String(describing: error)
        }
    }

    private static func optionName(_ argument: String) -> String {
        let body = argument.drop { $0 == "-" }
        return String(body.prefix { $0 != "=" })
    }
}
