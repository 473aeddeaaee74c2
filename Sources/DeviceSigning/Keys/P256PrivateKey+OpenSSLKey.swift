extension P256.Signing.PrivateKey {
    /// The OpenSSL `EVP_PKEY` of a software key, for the length of `body`: for the reference
    /// backend's TLS server, which hands it to libssl (`SSL_CTX_use_PrivateKey` takes a reference
    /// of its own). A key read by ``init(pemRepresentation:)-(SecureBytes)`` went through the
    /// package's own DER reader, which leaves no copy of the scalar behind, where OpenSSL's
    /// decoders (`SSL_CTX_use_PrivateKey_file`) leave one in freed memory. `.keyNotExportable` for a
    /// TPM key.
    package func withOpenSSLKey<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        let backing = try softwareBacking()
        return try withExtendedLifetime(backing) { try body(backing.pointer) }
    }
}
