#ifndef DSS_RANDOM_H
#define DSS_RANDOM_H
#include <stddef.h>
#include <stdint.h>

// Bytes from the operating system's CSPRNG, in one system call where Swift's generator makes one
// per 64 bits: getrandom on Linux, arc4random_buf on Apple platforms. No state is kept in user
// space, so a forked process never repeats its parent's output.

/// Fills `out` with `len` random bytes, at most 256 (which getrandom returns whole). Returns 1, or
/// 0 when `out` is NULL, `len` is larger or the system generator failed; the bytes at `out` are
/// then not to be used.
int dss_system_random(uint8_t *out, size_t len);

#endif
