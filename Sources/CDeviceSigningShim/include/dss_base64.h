#ifndef DSS_BASE64_H
#define DSS_BASE64_H
#include <stddef.h>
#include <stdint.h>

// The bulk of a base64url decode (a JWE's ciphertext) 32 characters at a time with AVX2 byte
// shuffles, which Swift cannot issue: one table-free validation and translation of two 16-character
// blocks, then two multiply-adds, a shuffle and a permutation pack them into 24 bytes. Strictness
// stays with the caller's decoder: this only decodes whole blocks of alphabet characters (no
// padding, no tail), so the rest and its leftover bits are the caller's. Nothing is allocated or
// kept; the caller owns both buffers.

/// Decodes `pairs_of_blocks` runs of 32 base64url characters at `in` into 24 bytes each at `out`,
/// writing 32 bytes per run (the last 8 are overwritten by the next run or left for the caller:
/// `out` must have 8 bytes to spare after the last run's 24). Returns how many runs it decoded: all
/// of them, or 0 when the CPU or the OS lacks AVX2 (or this is not x86-64), and then nothing is
/// written. Sets *invalid to 1 when a character of a decoded run is outside the alphabet (the
/// output is then not to be used), and leaves it alone otherwise.
size_t dss_base64url_decode_pairs(const uint8_t *in, size_t pairs_of_blocks, uint8_t *out, int *invalid);

#endif
