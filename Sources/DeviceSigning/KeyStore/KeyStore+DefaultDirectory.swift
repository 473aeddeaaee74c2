import Foundation

extension KeyStore {
    /// `$XDG_DATA_HOME/fetchchannel/keys` when XDG_DATA_HOME is set to an absolute path (the XDG
    /// Base Directory rule), else `~/.local/share/fetchchannel/keys`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if defaultDirectoryVariable(environment: environment) == "XDG_DATA_HOME",
            let dataHome = environment["XDG_DATA_HOME"]
        {
            base = URL(fileURLWithPath: dataHome, isDirectory: true)
        } else {
            let home =
                environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? FileManager.default.homeDirectoryForCurrentUser.path
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
                ".local/share", isDirectory: true)
        }
        return base.appendingPathComponent("fetchchannel/keys", isDirectory: true)
    }

    /// The variable ``defaultDirectory(environment:)`` finds the store by: `XDG_DATA_HOME` when it
    /// is an absolute path, else `HOME`.
    public static func defaultDirectoryVariable(environment: [String: String]) -> String {
        environment["XDG_DATA_HOME"]?.hasPrefix("/") == true ? "XDG_DATA_HOME" : "HOME"
    }
}
