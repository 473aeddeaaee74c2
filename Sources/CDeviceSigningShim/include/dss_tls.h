#ifndef DSS_TLS_H
#define DSS_TLS_H
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

// The reference backend's TLS identity (docs/ARCHITECTURE.md, "Transport and trust"). Building an
// X.509 certificate takes many steps (serial, names, validity, extensions through X509V3_CTX,
// signature), each with objects that must be freed: done here, once.

/// A fresh P-256 CA (self-signed, CA:TRUE, keyCertSign) and a leaf for 127.0.0.1, ::1 and localhost
/// (subjectAltName IP + DNS, serverAuth) signed by it, both valid from not_before to not_after
/// (seconds since the Unix epoch). On success returns 1 and the caller owns *ca, *leaf and
/// *leaf_key; on failure returns 0, sets nothing and leaves the error queue set.
int dss_tls_generate_identity(int64_t not_before, int64_t not_after, X509 **ca, X509 **leaf, EVP_PKEY **leaf_key);

/// TLS 1.2 as the minimum version, no renegotiation and no auto-retry (a read returns after any
/// record without application data) on a server context: all set through macros
/// (SSL_CTX_set_min_proto_version, SSL_CTX_clear_mode) Swift cannot call. 1 on success.
int dss_tls_configure_server_context(SSL_CTX *ctx);

#endif
