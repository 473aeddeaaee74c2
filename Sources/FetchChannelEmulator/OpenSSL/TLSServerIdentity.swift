internal import CDeviceSigningShim
internal import COpenSSL
import DeviceSigning
import Foundation
import Glibc

/// The certificate and key the emulator's HTTP server presents over TLS, held as one libssl server
/// context that every connection's session is made from (docs/ARCHITECTURE.md, "Transport and trust").
///
/// Either generated in memory (a fresh P-256 CA and a leaf for 127.0.0.1, ::1 and localhost, whose
/// CA certificate clients trust) or loaded from PEM files. `pin` is the leaf's SPKI pin in the
/// `sha256//BASE64` form libcurl and RFC 7469 use.
public final class TLSServerIdentity: @unchecked Sendable {
    // @unchecked: `context` is immutable after init; libssl allows SSL_new on one SSL_CTX from
    // several threads at once, and nothing else touches it after configuration.
    let context: OpaquePointer
    /// The generated CA's certificate (PEM), for clients to trust; nil for an identity from files.
    public let certificateAuthorityPEM: String?
    /// `sha256//` + base64 of SHA-256 of the leaf's DER SubjectPublicKeyInfo.
    public let pin: String

    /// The largest certificate or key file read: PEM files are a few KiB; this bounds a wrong path.
    static let maximumFileBytes = 1 << 20

    /// A fresh CA and leaf, valid from one hour before `now` (seconds since the Unix epoch) for 30 days.
    public static func generate(now: Int64 = Int64(Date().timeIntervalSince1970)) throws(HTTPServerError)
        -> TLSServerIdentity
    {
        let (notBefore, early) = now.subtractingReportingOverflow(3_600)
        let (notAfter, late) = now.addingReportingOverflow(30 * 86_400)
        guard !early, !late else {
            throw failure("cannot generate a certificate valid around \(now) (seconds since 1970)")
        }
        ERR_clear_error()
        var ca: OpaquePointer?
        var leaf: OpaquePointer?
        var key: OpaquePointer?
        guard dss_tls_generate_identity(notBefore, notAfter, &ca, &leaf, &key) == 1,
            let ca, let leaf, let key
        else {
            throw failure("cannot generate the TLS certificate authority and server certificate")
        }
        defer {
            // The context took its own references (use_certificate / use_PrivateKey up-ref them).
            X509_free(leaf)
            EVP_PKEY_free(key)
            X509_free(ca)
        }
        let context = try newContext()
        guard SSL_CTX_use_certificate(context, leaf) == 1, SSL_CTX_use_PrivateKey(context, key) == 1 else {
            SSL_CTX_free(context)
            throw failure("cannot install the generated server certificate")
        }
        let pem: String
        do {
            pem = try certificatePEM(ca)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return try TLSServerIdentity(takingOwnershipOf: context, certificateAuthorityPEM: pem)
    }

    /// The certificate chain (leaf first, then any intermediates) and its P-256 private key, both
    /// PEM. The key is read by the package's own reader (``readPrivateKey(_:)``), not libssl's.
    public static func load(certificateFile: String, keyFile: String) throws(HTTPServerError) -> TLSServerIdentity {
        try checkReadable(certificateFile, what: "certificate")
        try checkReadable(keyFile, what: "private key")
        let key = try readPrivateKey(keyFile)
        ERR_clear_error()
        let context = try newContext()
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            SSL_CTX_free(context)
            throw failure("cannot read a PEM certificate chain from \(certificateFile)")
        }
        guard (try? key.withOpenSSLKey({ SSL_CTX_use_PrivateKey(context, $0) })) == 1 else {
            SSL_CTX_free(context)
            throw failure("cannot use the private key in \(keyFile)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            SSL_CTX_free(context)
            throw failure("the private key in \(keyFile) does not belong to the certificate in \(certificateFile)")
        }
        return try TLSServerIdentity(takingOwnershipOf: context, certificateAuthorityPEM: nil)
    }

    /// Takes ownership of `context` (freed in deinit, or here if the pin cannot be computed).
    private init(takingOwnershipOf context: OpaquePointer, certificateAuthorityPEM: String?) throws(HTTPServerError) {
        // get0: the certificate stays owned by the context.
        guard let leaf = SSL_CTX_get0_certificate(context), let pin = Self.pin(of: leaf) else {
            SSL_CTX_free(context)
            throw Self.failure("cannot compute the server certificate's key pin")
        }
        self.context = context
        self.certificateAuthorityPEM = certificateAuthorityPEM
        self.pin = pin
    }

    deinit {
        SSL_CTX_free(context)
    }

    // MARK: - Helpers

    private static func newContext() throws(HTTPServerError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw failure("cannot create a TLS server context")
        }
        guard dss_tls_configure_server_context(context) == 1 else {
            SSL_CTX_free(context)
            throw failure("cannot require TLS 1.2 or later")
        }
        // An encrypted key must fail, not make OpenSSL's default callback prompt on the terminal.
        SSL_CTX_set_default_passwd_cb(context) { _, _, _, _ in 0 }
        return context
    }

    /// A regular file of at most `maximumFileBytes`: a device or FIFO given by mistake would never end.
    /// The unencrypted P-256 key of the PEM file at `path` (PKCS#8 or SEC1), read into zeroed
    /// storage and parsed as the key store parses keys: OpenSSL's decoders would leave the
    /// private scalar in freed memory (`dss_private_der.h`).
    private static func readPrivateKey(_ path: String) throws(HTTPServerError) -> P256.Signing.PrivateKey {
        let text: SecureBytes
        switch BoundedRead.contents(of: path, maximumBytes: maximumFileBytes) {
        case .success(var data):
            text = SecureBytes(data)
            data.withUnsafeMutableBytes { secureZero($0) }
        case .failure:
            throw failure("cannot read the private key file \(path)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: text)
        } catch let error as DeviceSigningError where [.unsupportedCurve, .unsupportedKeyType].contains(error.code) {
            throw failure("the private key in \(path) is not an ECDSA P-256 key")
        } catch {
            throw failure("cannot read an unencrypted PEM private key from \(path)")
        }
    }

    private static func checkReadable(_ path: String, what: String) throws(HTTPServerError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw HTTPServerError(.tlsIdentityFailed, "cannot read the \(what) file \(path)", errno: errno)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maximumFileBytes else {
            throw HTTPServerError(
                .tlsIdentityFailed,
                "the \(what) file \(path) is not a regular file of at most \(maximumFileBytes) bytes")
        }
    }

    private static func certificatePEM(_ certificate: OpaquePointer) throws(HTTPServerError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("cannot allocate a memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, certificate) == 1 else { throw failure("cannot encode the CA certificate") }
        let length = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: length)
        guard length > 0, BIO_read(bio, &bytes, Int32(clamping: length)) == Int32(clamping: length) else {
            throw failure("cannot encode the CA certificate")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `sha256//BASE64` of the certificate's DER SubjectPublicKeyInfo; nil on failure.
    static func pin(of certificate: OpaquePointer) -> String? {
        // get0: the key stays owned by the certificate.
        guard let key = X509_get0_pubkey(certificate) else { return nil }
        var der: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard dss_public_key_to_spki_der(key, &der, &length) == 1, let der else { return nil }
        defer { dss_free(der) }
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        guard SHA256(der, length, &digest) != nil else { return nil }
        return "sha256//" + Data(digest).base64EncodedString()
    }

    /// An error carrying the drained libssl error queue, which names what OpenSSL disliked.
    private static func failure(_ reason: String) -> HTTPServerError {
        var details: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            details.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let text = details.isEmpty ? reason : "\(reason) (\(details.joined(separator: "; ")))"
        return HTTPServerError(.tlsIdentityFailed, text)
    }
}
