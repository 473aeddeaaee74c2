import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportResult {
    /// What a URLSession error means here. Codes as FoundationNetworking (libcurl) reports them on
    /// Linux, checked on this machine: refused −1004, unknown host −1003, timeout −1001, cancelled
    /// −999, reset −1005, an empty reply −1011, an HTTP/0.9 (non-HTTP) reply −1002 (the scheme was
    /// checked before sending, so −1002 can only mean the reply).
    static func from(urlSessionError error: any Error) -> TransportResult {
        let nsError = error as NSError
        let detail = nsError.localizedDescription
        guard nsError.domain == NSURLErrorDomain else { return .failure(NetworkFailure(.other, detail: detail)) }
        switch nsError.code {
        case NSURLErrorCannotConnectToHost:
            return .failure(NetworkFailure(.connectionRefused, detail: detail))
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return .failure(NetworkFailure(.hostNotFound, detail: detail))
        case NSURLErrorTimedOut:
            return .failure(NetworkFailure(.timedOut, detail: detail))
        case NSURLErrorCancelled:
            return .failure(NetworkFailure(.cancelled, detail: detail))
        case NSURLErrorNetworkConnectionLost, NSURLErrorBadServerResponse, NSURLErrorZeroByteResource:
            return .failure(NetworkFailure(.connectionLost, detail: detail))
        case NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid:
            return .failure(NetworkFailure(.tlsCertificateExpired, detail: detail))
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot:
            return .failure(NetworkFailure(.tlsUntrustedCertificate, detail: detail))
        case -1207 ... -1200:
            // The other TLS codes (secure connection failed, client certificate rejected or required)
            // as one range, −1200…−1207: FoundationNetworking's constants are not numbered as Apple's
            // are (its SecureConnectionFailed is −1201, ClientCertificateRequired −1207).
            return .failure(NetworkFailure(.tlsHandshake, detail: detail))
        case NSURLErrorUnsupportedURL, NSURLErrorCannotParseResponse, NSURLErrorCannotDecodeRawData,
            NSURLErrorCannotDecodeContentData:
            return .notHTTP(detail)
        default:
            return .failure(NetworkFailure(.other, detail: "\(detail) (\(nsError.code))"))
        }
    }
}
