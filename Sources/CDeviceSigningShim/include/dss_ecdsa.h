#ifndef DSS_ECDSA_H
#define DSS_ECDSA_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// ECDSA P-256 over a precomputed SHA-256 digest, converting between OpenSSL's DER
// ECDSA-Sig-Value and the fixed 64-byte r||s of RFC 7518 §3.4. The conversion needs an
// ECDSA_SIG and two BIGNUMs per call; keeping it in C keeps the ownership in one place.

#define DSS_ECDSA_RAW_BYTES 64
#define DSS_ECDSA_DER_MAX_BYTES 72
#define DSS_SHA256_BYTES 32

/// A context for pkey's operations. `lib` is the key's library context: NULL for software keys;
/// for a key held by a provider in a library context of its own (a TPM key), the operation is
/// fetched from that key's provider, whatever order the providers were loaded in. NULL on failure.
EVP_PKEY_CTX *dss_key_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib);

/// A context ready for EVP_PKEY_sign (private keys) or EVP_PKEY_verify. NULL on failure.
EVP_PKEY_CTX *dss_sign_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib);
EVP_PKEY_CTX *dss_verify_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib);

/// Signs a 32-byte digest; writes r||s (64 bytes). Returns 1 on success.
int dss_sign_digest_raw(EVP_PKEY_CTX *ctx, const uint8_t *digest, size_t digest_len,
                        uint8_t *raw_out, size_t raw_out_len);

/// Verifies r||s (exactly 64 bytes) over a 32-byte digest. Returns 1 valid, 0 invalid, -1 error.
int dss_verify_digest_raw(EVP_PKEY_CTX *ctx, const uint8_t *digest, size_t digest_len,
                          const uint8_t *raw, size_t raw_len);

/// Strict DER ECDSA-Sig-Value -> r||s. Returns 1 only when the input is exactly one DER
/// SEQUENCE of two non-negative INTEGERs in minimal encoding (re-encoding gives the same bytes)
/// that each fit in 32 bytes. Range [1, n-1] is checked at verification.
int dss_ecdsa_der_to_raw(const uint8_t *der, size_t der_len, uint8_t *raw_out, size_t raw_out_len);

/// r||s (64 bytes) -> DER. *der_len receives the length. Returns 1 on success.
int dss_ecdsa_raw_to_der(const uint8_t *raw, size_t raw_len,
                         uint8_t *der_out, size_t der_cap, size_t *der_len);

#endif
