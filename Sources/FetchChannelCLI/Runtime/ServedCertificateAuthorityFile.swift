import Foundation
import Glibc

/// The CA certificate `serve --tls` generated, written where clients can read it: `ca.pem` (0644)
/// in a fresh directory (0700) under the temporary directory, removed again when the server stops,
/// since the CA's key died with the process that made it.
struct ServedCertificateAuthorityFile {
    let path: String
    private let directory: String

    init(pem: String) throws {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/fetchchannel-serve-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {  // mkdtemp creates it 0700
            let reason = String(cString: strerror(errno))
            throw CLIFailure(
                .refusedOutput, "cannot create a directory for the CA certificate under \(base): \(reason)")
        }
        directory = String(cString: made)
        path = directory + "/ca.pem"
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(pem.utf8),
                attributes: [.posixPermissions: 0o644])
        else {
            try? FileManager.default.removeItem(atPath: directory)
            throw CLIFailure(.refusedOutput, "cannot write the CA certificate to \(path)")
        }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
