import Foundation

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    /// posix_spawn with `arguments` and `environment` as the C arrays it takes, made and freed
    /// here; the file actions and attributes are the caller's. Returns the child's pid, or the
    /// error number posix_spawn gave.
    func spawnProcess(
        _ executable: String, _ arguments: [String], environment: [String: String],
        actions: inout posix_spawn_file_actions_t, attributes: inout posix_spawnattr_t
    ) -> Result<pid_t, SpawnErrorNumber> {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        return code == 0 ? .success(child) : .failure(SpawnErrorNumber(code: code))
    }

    /// posix_spawn's error number, with its text.
    struct SpawnErrorNumber: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
    }
#endif
