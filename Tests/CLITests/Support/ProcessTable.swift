import Foundation

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    /// The system's processes as /proc shows them: which ones name a path on their command line,
    /// and what a process does with a signal.
    enum ProcessTable {
        /// The processes whose command line contains `text` (a sandbox's path: its swtpm's
        /// `--tpmstate dir=…`).
        static func processes(naming text: String) -> [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { pid_t($0) }.filter { pid in
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                // The arguments are separated by NUL bytes.
                return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
            }
        }

        /// Whether no process `pid` exists any more (reaped, not a zombie).
        static func isGone(_ pid: pid_t) -> Bool {
            kill(pid, 0) != 0 && errno == ESRCH
        }

        /// The command line of `pid`, its arguments separated by spaces; nil when it is gone.
        static func commandLine(of pid: pid_t) -> String? {
            FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map {
                String(decoding: $0.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            }
        }

        /// What `pid` does with `signal`: ignores it (`SigIgn` of /proc/PID/status), catches it
        /// (`SigCgt`), or neither (its default action); nil when the status cannot be read.
        static func disposition(of signal: Int32, in pid: pid_t) -> Disposition? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            func mask(_ name: String) -> UInt64? {
                status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap {
                    UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
                }
            }
            guard let ignored = mask("SigIgn"), let caught = mask("SigCgt") else { return nil }
            let bit = UInt64(1) << UInt64(signal - 1)
            return ignored & bit != 0 ? .ignored : caught & bit != 0 ? .caught : .byDefault
        }

        enum Disposition: Equatable {
            case ignored
            case caught
            case byDefault
        }
    }
#endif
