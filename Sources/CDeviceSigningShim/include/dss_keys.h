#ifndef DSS_KEYS_H
#define DSS_KEYS_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// P-256 key construction and export. OpenSSL 3 builds and reads EC keys through OSSL_PARAM
// sequences (group name, private BIGNUM, public octet string) and EVP_PKEY_fromdata, which take
// several steps with intermediate objects that must each be freed: done here, once.

#define DSS_P256_SCALAR_BYTES 32
#define DSS_P256_POINT_BYTES 65
#define DSS_P256_COMPRESSED_POINT_BYTES 33

/// A fresh P-256 key pair, or NULL (error queue set).
EVP_PKEY *dss_p256_generate(void);

/// A key pair from a 32-byte big-endian scalar in [1, n-1]; the public point is derived.
/// The scalar is copied into a BIGNUM that is cleared before it is freed.
EVP_PKEY *dss_p256_from_private_scalar(const uint8_t *scalar, size_t scalar_len);

/// 1 if point is an SEC1 encoding of a P-256 point (65 bytes 0x04 || x || y, or 33 bytes
/// compressed) with coordinates below p, on the curve and not infinity; else 0. Builds no key.
int dss_p256_point_is_valid(const uint8_t *point, size_t point_len);

/// A public key from an SEC1 point (65 bytes uncompressed; 33 bytes compressed only when
/// allow_compressed is non-zero). The point must be on the curve and not infinity.
EVP_PKEY *dss_p256_from_public_point(const uint8_t *point, size_t point_len, int allow_compressed);

/// A P-256 key with the domain parameters and no point yet, to be given one peer point after
/// another with dss_p256_peer_key_set_point (a JWE's epk): no key is built per peer. NULL on failure.
EVP_PKEY *dss_p256_peer_key_new(void);

/// Decodes point (65 bytes, 0x04 || x || y) into *peer, replacing its point; 1 if it is a valid
/// P-256 point (coordinates below p, on the curve; this encoding is never infinity). Otherwise 0,
/// and *peer is freed and set to NULL: a refused point may still be in the key.
int dss_p256_peer_key_set_point(EVP_PKEY **peer, const uint8_t *point, size_t point_len);

/// 1 if pkey is an EC key on P-256 (prime256v1), else 0.
int dss_p256_is_p256(const EVP_PKEY *pkey);

/// 1 if pkey holds a private scalar, else 0.
int dss_p256_has_private(const EVP_PKEY *pkey);

/// Writes the 65-byte uncompressed public point. Returns 1 on success.
int dss_p256_public_point(const EVP_PKEY *pkey, uint8_t *out, size_t out_len);

/// The first byte of the key's public point as it was decoded (02/03 compressed, 04 uncompressed,
/// 06/07 hybrid, 00 the point at infinity), or -1 when the key has no EC point to give.
int dss_public_point_prefix(const EVP_PKEY *pkey);

/// Writes the 32-byte private scalar. Returns 1 on success. The caller zeroes out.
int dss_p256_private_scalar(const EVP_PKEY *pkey, uint8_t *out, size_t out_len);

/// DER encodings. On success *out is an OpenSSL allocation of *out_len bytes that the caller
/// releases with dss_free_clear (private) or dss_free (public). The private one is written as
/// dss_p256_write_pkcs8 writes it (P-256 only).
int dss_private_key_to_pkcs8_der(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len);
int dss_public_key_to_spki_der(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len);

/// Parses exactly `len` bytes of SubjectPublicKeyInfo DER. Trailing bytes are an error. NULL on
/// failure. (Private keys: dss_p256_key_from_der.)
EVP_PKEY *dss_public_key_from_spki_der(const uint8_t *der, size_t len);

/// A public-only copy of a key pair's public half.
EVP_PKEY *dss_public_only_copy(const EVP_PKEY *pkey);

/// OPENSSL_free / OPENSSL_clear_free are macros: these make them callable from Swift.
void dss_free(void *ptr);
void dss_free_clear(void *ptr, size_t len);

/// OPENSSL_cleanse, named for what it does here.
void dss_cleanse(void *ptr, size_t len);

#endif
