internal import CDeviceSigningShim
internal import COpenSSL
import Foundation
import Testing

/// The reference backend's generated TLS identity: its certificates carry public keys only.
/// `X509_set_pubkey` keeps the key it is given, so a certificate made from the key pair kept the
/// CA's private scalar alive and usable for signing for as long as the certificate.
@Suite struct TLSIdentityKeyTests {
    @Test func theCertificatesHoldNoPrivateKey() throws {
        let now = Int64(Date().timeIntervalSince1970)
        var ca: OpaquePointer?
        var leaf: OpaquePointer?
        var leafKey: OpaquePointer?
        try #require(dss_tls_generate_identity(now - 60, now + 3_600, &ca, &leaf, &leafKey) == 1)
        defer {
            X509_free(ca)
            X509_free(leaf)
            EVP_PKEY_free(leafKey)
        }
        #expect(dss_p256_has_private(X509_get0_pubkey(ca)) == 0, "the CA certificate holds the CA's private key")
        #expect(dss_p256_has_private(X509_get0_pubkey(leaf)) == 0, "the server certificate holds its private key")
        #expect(dss_p256_has_private(leafKey) == 1, "the server's key is the pair")
        // The certificate and the key still belong together, and the CA signed the certificate.
        #expect(X509_check_private_key(leaf, leafKey) == 1)
        #expect(X509_verify(leaf, X509_get0_pubkey(ca)) == 1)
        ERR_clear_error()
    }
}
