internal import CBenchmarkShim
import FetchChannel
import Foundation

/// The client CPU rows' baseline: GET requests written directly against libcurl (one reused easy
/// handle, `curl_easy_perform` on the calling thread), each with a Device-Signature made before
/// the clock starts. What it costs is what the transport costs a C program on this machine at
/// this moment, the kernel's loopback included, so the rows can say how much the fetch client
/// adds to it (docs/ARCHITECTURE.md, "Where C is, and why"). Blocking: run it on a thread of
/// its own.
package final class LibcurlBaselineClient: @unchecked Sendable {
    // @unchecked: the easy handle is used by one thread at a time; the benchmark hands the client
    // to its blocking thread and awaits the result before it uses the client again.

    /// `cbs_curl_client *`, owned: freed once in `deinit`.
    private let client: OpaquePointer

    /// A client of `url`; with `certificateAuthorityPEM`, HTTPS trusting only those certificates.
    /// Made only once the package's libcurl set-up succeeded (`CurlGlobal`): its own
    /// `curl_easy_init` would otherwise run the set-up itself, and with `SSLKEYLOGFILE` set write
    /// the TLS secrets of its connections there, which the package's transport refuses to do.
    package init(url: URL, certificateAuthorityPEM: String?) throws {
        guard CurlGlobal.initialized else {
            throw BenchmarkError("the libcurl baseline client cannot be made: \(CurlGlobal.problem)")
        }
        let pem = certificateAuthorityPEM.map { Array($0.utf8) }
        let made: OpaquePointer? = url.absoluteString.withCString { url in
            guard let pem else { return cbs_curl_client_new(url, nil, 0) }
            return pem.withUnsafeBufferPointer { cbs_curl_client_new(url, $0.baseAddress, $0.count) }
        }
        guard let made else { throw BenchmarkError("libcurl could not make the baseline client") }
        client = made
    }

    deinit {
        cbs_curl_client_free(client)
    }

    /// Device-Signature values as C strings, made before the clock starts so that the measured
    /// loop copies nothing; freed once when released.
    package final class Signatures: @unchecked Sendable {
        // @unchecked: written once in `init`, then only read.
        fileprivate let pointers: [UnsafePointer<CChar>?]

        /// Nil when a copy could not be allocated.
        package init?(_ values: [String]) {
            let copies = values.map { strdup($0) }
            guard copies.allSatisfy({ $0 != nil }) else {
                copies.forEach { free($0) }
                return nil
            }
            pointers = copies.map { UnsafePointer($0) }
        }

        deinit {
            pointers.forEach { free(UnsafeMutablePointer(mutating: $0)) }
        }
    }

    /// One request per signature, in order: how many were answered 200, each with a body as long
    /// as the first one's (`bodyBytes`); it stops at the first that is not.
    package func fetch(_ signatures: Signatures) -> (answered: Int, bodyBytes: Int) {
        var bodyBytes = 0
        let answered = signatures.pointers.withUnsafeBufferPointer { pointers in
            cbs_curl_fetch(client, pointers.baseAddress, pointers.count, &bodyBytes)
        }
        return (answered, bodyBytes)
    }
}
