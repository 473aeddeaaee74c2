#if os(Linux)
    internal import CCurl
    import Foundation

    /// What is known about a transfer that ended without an answer, as Swift values.
    struct CurlFailureFacts: Sendable {
        /// The CURLcode.
        var code: Int
        /// libcurl's error buffer (or its text for the code).
        var message: String
        /// CURLINFO_SSL_VERIFYRESULT: OpenSSL's `X509_V_ERR_*` for the peer's chain, 0 when none.
        var verifyResult: Int
        /// CURLINFO_OS_ERRNO: the `errno` of the failed connect or I/O, 0 when none.
        var osErrno: Int
        var host: String
        var trust: TLSTrust
        var timeout: Duration

        /// The message as a detail quotes it: libcurl ends some with a space ("SSL_ERROR_SYSCALL in
        /// connection to 127.0.0.1:4433 "), which read as "…:4433 )" inside parentheses.
        var readableMessage: String { message.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// A CURLcode as a ``TransportResult``: a ``NetworkFailure`` whose kind a program can act on and
    /// whose detail tells a person what to check (for TLS: which anchors, which pins, which name).
    ///
    /// TLS facts checked against libcurl 7.88 with OpenSSL 3: an unknown CA or a missing
    /// intermediate is CURLE_PEER_FAILED_VERIFICATION with verify result 20 (or 2, 18, 19, 21);
    /// expired 10, not yet valid 9; a host name outside the certificate is the same code with
    /// verify result 1 (libcurl's own check) and a message about the subject name; a wrong pin is
    /// CURLE_SSL_PINNEDPUBKEYNOTMATCH.
    enum CurlFailureMapping {
        /// OpenSSL's `X509_V_ERR_CERT_NOT_YET_VALID` and `X509_V_ERR_CERT_HAS_EXPIRED`.
        static let notYetValid = 9
        static let expired = 10
        /// OpenSSL's `X509_V_ERR_HOSTNAME_MISMATCH` and `X509_V_ERR_IP_ADDRESS_MISMATCH`.
        static let nameMismatches: Set<Int> = [62, 64]

        static func result(for facts: CurlFailureFacts) -> TransportResult {
            let code = CURLcode(UInt32(clamping: facts.code))
            let message = facts.readableMessage
            switch code {
            case CURLE_COULDNT_CONNECT:
                let refused = facts.osErrno == Int(ECONNREFUSED)
                return .failure(NetworkFailure(refused ? .connectionRefused : .other, detail: message))
            case CURLE_COULDNT_RESOLVE_HOST:
                return .failure(NetworkFailure(.hostNotFound, detail: message))
            case CURLE_OPERATION_TIMEDOUT:
                let detail = "no complete answer within \(facts.timeout) (\(message))"
                return .failure(NetworkFailure(.timedOut, detail: detail))
            case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2,
                CURLE_HTTP2_STREAM:
                return .failure(NetworkFailure(.connectionLost, detail: message))
            case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_CONTENT_ENCODING:
                // The scheme was checked before sending: these are about the reply (HTTP/0.9, garbage).
                return .notHTTP(message)
            case CURLE_URL_MALFORMAT:
                return .failure(NetworkFailure(.invalidURL, detail: message))
            case CURLE_ABORTED_BY_CALLBACK:
                return .failure(NetworkFailure(.cancelled, detail: message))
            case CURLE_PEER_FAILED_VERIFICATION:
                return .failure(verificationFailure(facts))
            case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
                let pins = facts.trust.pins.joined(separator: ", ")
                return .failure(
                    NetworkFailure(
                        .tlsPinMismatch,
                        detail: "The public key of \(facts.host) matches none of "
                            + "the pins \(pins) (\(message)). Check the pins against the key of the server's current certificate."
                    ))
            case CURLE_SSL_CACERT_BADFILE:
                let anchors = capitalized(facts.trust.anchorsDescription)
                return .failure(
                    NetworkFailure(
                        .tlsUntrustedCertificate,
                        detail: "\(anchors) could not be loaded "
                            + "(\(message)). Check that it exists, is readable and holds PEM certificates."))
            case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR,
                CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED,
                CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED:
                return .failure(
                    NetworkFailure(
                        .tlsHandshake,
                        detail: "No TLS connection to \(facts.host) (\(message)). "
                            + "Check that the server speaks TLS 1.2 or later on this port."))
            default:
                return .failure(NetworkFailure(.other, detail: "\(message) (libcurl \(facts.code))"))
            }
        }

        /// CURLE_PEER_FAILED_VERIFICATION: the chain, the validity period or the name.
        private static func verificationFailure(_ facts: CurlFailureFacts) -> NetworkFailure {
            let host = facts.host
            let message = facts.readableMessage
            // libcurl's words for a name that does not match, and for a certificate that names
            // nothing at all (no subjectAltName, no common name).
            if nameMismatches.contains(facts.verifyResult) || message.contains("subject name")
                || message.contains("does not match target host") || message.contains("unable to obtain common name")
            {
                return NetworkFailure(
                    .tlsHostnameMismatch,
                    detail: "The certificate of \(host) is not issued for the "
                        + "name \(host) (\(message)). Check the host name in the server URL against the names the "
                        + "certificate lists.")
            }
            switch facts.verifyResult {
            case expired:
                return NetworkFailure(
                    .tlsCertificateExpired,
                    detail: "The certificate of \(host) has expired "
                        + "(\(message)). Check the device's date and time; if they are right, the server's certificate must "
                        + "be renewed.")
            case notYetValid:
                return NetworkFailure(
                    .tlsCertificateExpired,
                    detail: "The certificate of \(host) is not valid yet "
                        + "(\(message)). Check the device's date and time.")
            default:
                let anchors = facts.trust.anchorsDescription
                return NetworkFailure(
                    .tlsUntrustedCertificate,
                    detail: "The certificate chain of \(host) does not lead to "
                        + "a CA in \(anchors) (\(message)). Check that \(anchors) holds the CA that issued the server's "
                        + "certificate, and that the server sends its intermediate certificates.")
            }
        }

        static func capitalized(_ text: String) -> String {
            text.prefix(1).uppercased() + text.dropFirst()
        }
    }
#endif
