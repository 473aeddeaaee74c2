#ifndef DSS_BASE64_H
#define DSS_BASE64_H
#include <stddef.h>
#include <stdint.h>

// The bulk of a base64url decode (a JWE's ciphertext) 16 or 32 characters at a time with SSSE3
// or AVX2 byte shuffles, which Swift cannot issue: one table-free validation and translation of a
// whole block, then two multiply-adds and a shuffle pack it into twelve bytes. Strictness stays
// with the caller's decoder: this only decodes whole blocks of alphabet characters (no padding,
// no tail), so the tail and its leftover bits are the caller's. Nothing is allocated or kept; the
// caller owns both buffers.

/// The widest block decoder a call may use: tests pin each one, whatever the CPU.
enum {
    DSS_BASE64_PORTABLE = 0,
    DSS_BASE64_SSSE3 = 1,
    DSS_BASE64_AVX2 = 2,
};

/// Decodes `blocks` blocks of 16 base64url characters at `in` into 12 bytes each at `out`,
/// writing 16 bytes per block (the last 4 are overwritten by the next block or left for the caller:
/// `out` must have 4 bytes to spare after the last block's 12). Uses the widest decoder that the
/// CPU has and `widest` allows. Returns how many blocks it decoded: all of them, or 0 when neither
/// may be used (no SSSE3, not x86-64, or `widest` is DSS_BASE64_PORTABLE), and then nothing is
/// written. Sets *invalid to 1 when a character of a decoded block is outside the alphabet (the
/// output is then not to be used), and leaves it alone otherwise.
size_t dss_base64url_decode_blocks(const uint8_t *in, size_t blocks, uint8_t *out, int *invalid, int widest);

#endif
