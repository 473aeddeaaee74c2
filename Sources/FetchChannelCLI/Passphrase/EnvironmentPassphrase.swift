import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The passphrase given in `FETCHCHANNEL_PASSPHRASE`, taken out of the environment as the process
/// starts, before anything copies the environment into strings that are never zeroed.
///
/// Its bytes go straight from the environment's own memory into ``SecureBytes``. That memory is
/// then zeroed in place (for the variables the process started with, it is what
/// `/proc/PID/environ` shows), and the variable is unset, so no later reader of the environment
/// (Foundation's `ProcessInfo`, a library, a child process) gets a copy.
enum EnvironmentPassphrase {
    static let variable = "FETCHCHANNEL_PASSPHRASE"

    /// Takes the variable out of the process's environment: its bytes, or nil when it is not set.
    /// Call it before any other thread runs (it changes the environment, as `setenv` does).
    static func takeFromProcess() -> SecureBytes? {
        let table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard let table, let passphrase = take(from: table) else { return nil }
        unsetenv(variable)
        return passphrase
    }

    /// Copies the value of the first `FETCHCHANNEL_PASSPHRASE=` entry of `table` (an environment:
    /// NUL-terminated `NAME=value` strings, ended by a null entry) into secure storage and zeroes
    /// the value where it was. Nil when no entry names the variable.
    static func take(from table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> SecureBytes? {
        let prefix = Array((variable + "=").utf8)
        var entry = table
        while let pointer = entry.pointee {
            let length = strlen(pointer)
            let bytes = UnsafeMutableRawBufferPointer(start: pointer, count: length)
            if length >= prefix.count, bytes.prefix(prefix.count).elementsEqual(prefix) {
                let value = UnsafeMutableRawBufferPointer(rebasing: bytes[prefix.count...])
                let passphrase = SecureBytes(count: value.count) { $0.copyMemory(from: UnsafeRawBufferPointer(value)) }
                secureZero(value)
                return passphrase
            }
            entry += 1
        }
        return nil
    }

    /// Whether `bytes` are UTF-8 text, checked without making a string of them (which would be a
    /// copy of the secret that is never zeroed).
    static func isUTF8(_ bytes: SecureBytes) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var iterator = buffer.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }
}
