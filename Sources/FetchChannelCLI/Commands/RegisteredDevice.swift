import Foundation

/// The device a `register` names, which the dispatch target belongs to: `--device-id`, and the
/// user and device name the backend shows (`--username`, `--name`, or their defaults).
struct RegisteredDevice: Sendable {
    static let id = Option(
        "device-id", "ID", help: "This device's id at the backend.", required: true,
        ValueParser.nonEmpty.map { id, _ throws(UsageError) in
            guard id.utf8.count <= 256 else {
                throw UsageError(.invalidValue, "--device-id needs a non-empty id of at most 256 bytes")
            }
            return id
        })
    static let username = Option(
        "username", "U", help: "The user the device belongs to (default: $USER, else \"user\").", .nonEmpty)
    static let name = Option(
        "name", "N", help: "A name for the device (default: \"fetchchannel on <host name>\").", .nonEmpty)

    /// This device's id at the backend.
    let id: String
    let username: String
    let name: String

    /// The parse step's part: `--device-id`, then `--username` (default: `$USER`, else `user`) and
    /// `--name` (default: `fetchchannel on <host name>`).
    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        id = try arguments.required(Self.id)
        username =
            try arguments[Self.username] ?? context.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "user"
        name = try arguments[Self.name] ?? "fetchchannel on \(Self.hostName())"
    }

    /// This machine's host name from gethostname(2) (no DNS lookup, unlike ProcessInfo.hostName).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this device" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "this device" : name
    }
}
