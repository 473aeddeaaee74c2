/// The one error style of the package (docs/ARCHITECTURE.md, "Errors"), as ``DeviceSigningError``
/// shows it: a stable `code` for programs and a `reason` for people.
///
/// The defaults compare and hash the code only, so tests and callers match on the kind of failure,
/// and describe the error as `code: reason` (the code alone when there is no reason). A type with
/// more to say (an `errno`, a path) writes its own `description`. No reason ever holds key
/// material or a request's signature.
public protocol CodedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable error kind, usually a nested `Code` struct with static members.
    associatedtype Code: Sendable, Hashable, CustomStringConvertible
    var code: Code { get }
    /// What happened and, where there is something to do, what to do about it.
    var reason: String { get }
}

extension CodedError {
    public var description: String { reason.isEmpty ? code.description : "\(code): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// The nested `Code` of a ``CodedError``: a string that programs, logs and JSON can rely on, with
/// the known values as documented static members (made with the memberwise initialiser, so only
/// the error's own module makes codes). New codes may be added; match on the ones you handle.
public protocol ErrorCode: Sendable, Hashable, CustomStringConvertible {
    var rawValue: String { get }
}

extension ErrorCode {
    public var description: String { rawValue }
}
