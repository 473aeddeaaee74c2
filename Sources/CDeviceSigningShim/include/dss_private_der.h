#ifndef DSS_PRIVATE_DER_H
#define DSS_PRIVATE_DER_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

// P-256 private keys in DER (PKCS#8 PrivateKeyInfo, RFC 5208; SEC1 ECPrivateKey, RFC 5915), read
// and written here rather than by OpenSSL's encoders and decoders: those pass the key through
// temporary buffers that OpenSSL 3.0 frees without clearing, which would leave the private scalar
// in freed memory on every key load. Here the scalar is read in place from the DER (or from a
// PKCS8_PRIV_KEY_INFO, which clears its copy when freed) and the key is built from it with
// dss_p256_from_private_scalar; the DER written is the fixed layout OpenSSL itself writes.

#define DSS_KEY_OK 0
#define DSS_KEY_MALFORMED 1   /* not PKCS#8 or SEC1 DER, trailing bytes, or no curve named */
#define DSS_KEY_NOT_EC 2      /* a PKCS#8 key of another algorithm (RSA, Ed25519, ...) */
#define DSS_KEY_OTHER_CURVE 3 /* an EC key on a curve other than P-256, or explicit parameters */
#define DSS_KEY_INVALID 4     /* a P-256 scalar outside [1, n-1], or a public key that is not its own */

/// The PKCS#8 PrivateKeyInfo of a P-256 key: 138 bytes (version 0, id-ecPublicKey with
/// prime256v1, an ECPrivateKey with the 32-byte scalar and the uncompressed public point).
#define DSS_P256_PKCS8_BYTES 138

/// Writes pkey's PKCS#8 DER, exactly DSS_P256_PKCS8_BYTES, into out (out_len must be that).
/// Returns 1 on success; on failure out is cleared.
int dss_p256_write_pkcs8(const EVP_PKEY *pkey, uint8_t *out, size_t out_len);

/// The P-256 key of a PKCS#8 PrivateKeyInfo, or NULL with *status one of DSS_KEY_*.
EVP_PKEY *dss_p256_key_from_pkcs8(const PKCS8_PRIV_KEY_INFO *p8, int *status);

/// The P-256 key of exactly len bytes of DER: PKCS#8 PrivateKeyInfo, or SEC1 ECPrivateKey naming
/// prime256v1 in its parameters. NULL with *status one of DSS_KEY_* on failure.
EVP_PKEY *dss_p256_key_from_der(const uint8_t *der, size_t len, int *status);

#endif
