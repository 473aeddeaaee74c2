#ifndef DSS_DIGEST_H
#define DSS_DIGEST_H
#include <stddef.h>
#include <stdint.h>

// SHA-256 through an implementation fetched once per process. OpenSSL 3's one-shot SHA256()
// looks the algorithm up by name on every call (a locked search of the providers' method
// stores), which costs more than hashing a Device-Signature's signing input.

/// SHA-256 of in_len bytes at `in` (NULL only with in_len 0) into `out`, which holds out_len
/// bytes and must hold exactly 32. Returns 1 on success, 0 on failure (nothing else to free).
int dss_sha256(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

#endif
