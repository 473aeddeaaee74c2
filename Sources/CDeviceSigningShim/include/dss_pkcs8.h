#ifndef DSS_PKCS8_H
#define DSS_PKCS8_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// Encrypted PKCS#8 (EncryptedPrivateKeyInfo, PBES2, AES-256-CBC). Building the PBES2 algorithm
// identifier with an explicit KDF cost and wrapping the PrivateKeyInfo takes four objects with
// different owners (X509_ALGOR, PKCS8_PRIV_KEY_INFO, X509_SIG, the DER buffer); `PKCS8_set0_pbe`
// takes ownership of the algorithm only on success.

#define DSS_KDF_SCRYPT 1
#define DSS_KDF_PBKDF2_SHA256 2

#define DSS_DECRYPT_OK 0
#define DSS_DECRYPT_MALFORMED 1   /* not an EncryptedPrivateKeyInfo, or trailing bytes */
#define DSS_DECRYPT_FAILED 2      /* wrong passphrase (or a corrupted ciphertext) */
#define DSS_DECRYPT_NOT_A_KEY 3   /* decrypted, but not a P-256 key: *key_status says why (DSS_KEY_*) */
#define DSS_DECRYPT_COST_OUT_OF_RANGE 4  /* an iteration count outside 1...INT_MAX (see below) */
#define DSS_DECRYPT_UNUSABLE_PARAMETERS 5  /* OpenSSL could not set up the decryption from them */

// Iteration counts cross into OpenSSL as `int` (PKCS5_pbe2_set_iv_ex, and ASN1_INTEGER_get into
// an int when a file is read): a value above INT_MAX turns negative. Encrypting, OpenSSL then
// silently uses its default of 2048 iterations; decrypting, the KDF fails as if the passphrase
// were wrong. Both functions refuse such counts before OpenSSL sees them.

/// Encrypts pkey's PrivateKeyInfo (a P-256 key pair). kdf is DSS_KDF_SCRYPT (cost = N, r, p) or
/// DSS_KDF_PBKDF2_SHA256 (cost = iterations; r and p ignored); cost is 1...INT_MAX. On success
/// *out is an OpenSSL allocation of *out_len bytes for dss_free. Returns 1 on success.
int dss_pkcs8_encrypt_der(const EVP_PKEY *pkey, const uint8_t *pass, size_t pass_len, int kdf,
                          uint64_t cost, uint64_t r, uint64_t p, uint8_t **out, size_t *out_len);

/// Decrypts exactly der_len bytes of EncryptedPrivateKeyInfo into a P-256 key (read as
/// dss_p256_key_from_pkcs8 reads it, without OpenSSL's decoders). Returns the key or NULL with
/// *status set to one of DSS_DECRYPT_*; a PBKDF2 (or PBES1) iteration count outside 1...INT_MAX
/// is DSS_DECRYPT_COST_OUT_OF_RANGE, and nothing is derived. With DSS_DECRYPT_NOT_A_KEY,
/// *key_status (if not NULL) is the DSS_KEY_* reason. The cost is bounded here only by what
/// OpenSSL can hold (scrypt's is not bounded at all): the caller checks the KDF parameters against
/// its own limits first (the Swift side reads them as PBES2Parameters), or a crafted file costs
/// minutes of CPU. The plaintext is decrypted into a buffer cleared on every path.
EVP_PKEY *dss_pkcs8_decrypt_der(const uint8_t *der, size_t der_len, const uint8_t *pass,
                                size_t pass_len, int *status, int *key_status);

#endif
