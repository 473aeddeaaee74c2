#ifndef DSS_JWE_H
#define DSS_JWE_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// The primitives of JWE with ECDH-ES (RFC 7516, RFC 7518 §4.6, §5.2, §5.3). Each one is a
// sequence Swift cannot call cleanly: OSSL_PARAM arrays (HMAC's digest), cipher
// contexts whose flags, IV length, AAD and tag must be set in a fixed order (GCM, key wrap), and
// the CBC-HMAC tag over four inputs compared with CRYPTO_memcmp. Every function returns 1 on
// success and 0 on any failure, and writes nothing usable on failure (outputs are cleansed).
// Keys and secrets are only borrowed: the caller owns and zeroes them.

#define DSS_ECDH_P256_SECRET_BYTES 32
#define DSS_AES_KEY_WRAP_OVERHEAD 8
#define DSS_GCM_IV_BYTES 12
#define DSS_GCM_TAG_BYTES 16
#define DSS_CBC_IV_BYTES 16
#define DSS_AES_BLOCK_BYTES 16

/// A kept ECDH slot of the software key priv: a derive context initialised for ECDH. Kept by the
/// caller and lent to one derive at a time: creating one costs as much as a small derive. The
/// slot keeps a reference to the last peer until its next derive or its release.
typedef struct dss_ecdh_slot dss_ecdh_slot;
dss_ecdh_slot *dss_ecdh_slot_new(EVP_PKEY *priv);
void dss_ecdh_slot_free(dss_ecdh_slot *slot);

/// ECDH on P-256 (SEC 1 §3.3.1) through a slot of dss_ecdh_slot_new: the 32-byte x coordinate of
/// priv * peer. The peer is not validated again here: every public key the Swift side builds was
/// checked when it was decoded (on the curve, not infinity), a JWE's epk included
/// (dss_p256_peer_key_set_point).
int dss_ecdh_p256_derive(dss_ecdh_slot *slot, EVP_PKEY *peer, uint8_t *out, size_t out_len);

/// The Concat KDF of NIST SP 800-56A §5.8.1 with SHA-256 (what OpenSSL's SSKDF computes): out_len
/// (1 to 64) bytes from the shared secret z and other_info
/// (AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo).
int dss_concat_kdf_sha256(const uint8_t *z, size_t z_len, const uint8_t *other_info, size_t other_info_len,
                          uint8_t *out, size_t out_len);

/// AES Key Wrap (RFC 3394, default IV) with a 16-, 24- or 32-byte KEK. Wrapping writes
/// key_len + 8 bytes; unwrapping writes wrapped_len - 8 and fails when the integrity check does.
int dss_aes_key_wrap(const uint8_t *kek, size_t kek_len, const uint8_t *key, size_t key_len,
                     uint8_t *out, size_t out_len);
int dss_aes_key_unwrap(const uint8_t *kek, size_t kek_len, const uint8_t *wrapped, size_t wrapped_len,
                       uint8_t *out, size_t out_len);

/// AES-GCM (RFC 7518 §5.3): a 16-, 24- or 32-byte key, a 12-byte IV, a 16-byte tag. The
/// ciphertext has the plaintext's length. Opening fails unless the tag verifies.
int dss_aes_gcm_seal(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *plaintext, size_t plaintext_len,
                     uint8_t *ciphertext, uint8_t *tag, size_t tag_len);
int dss_aes_gcm_open(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *ciphertext, size_t ciphertext_len,
                     const uint8_t *tag, size_t tag_len, uint8_t *plaintext);

/// AES_CBC_HMAC_SHA2 (RFC 7518 §5.2.2): key = MAC key || encryption key (32, 48 or 64 bytes, for
/// HMAC-SHA-256/384/512 and AES-128/192/256-CBC), a 16-byte IV, a tag of half the key. Sealing
/// pads (PKCS #7) into ciphertext (capacity plaintext_len + 16) and sets *ciphertext_len.
/// Opening checks the tag in constant time before it decrypts, and fails the same way for a bad
/// tag, a bad length and bad padding; *plaintext_len receives the length (capacity ciphertext_len).
int dss_aes_cbc_hmac_seal(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                          const uint8_t *aad, size_t aad_len, const uint8_t *plaintext, size_t plaintext_len,
                          uint8_t *ciphertext, size_t ciphertext_cap, size_t *ciphertext_len,
                          uint8_t *tag, size_t tag_len);
int dss_aes_cbc_hmac_open(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                          const uint8_t *aad, size_t aad_len, const uint8_t *ciphertext, size_t ciphertext_len,
                          const uint8_t *tag, size_t tag_len,
                          uint8_t *plaintext, size_t plaintext_cap, size_t *plaintext_len);

#endif
