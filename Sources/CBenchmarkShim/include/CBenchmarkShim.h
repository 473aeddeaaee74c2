#ifndef C_BENCHMARK_SHIM_H
#define C_BENCHMARK_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// The C baseline of the benchmark only (never linked into the libraries): `iterations`
// EVP_PKEY_sign / EVP_PKEY_verify calls on one 32-byte SHA-256 digest with a kept context, as a
// program written directly against OpenSSL would do. In C so that the loop itself costs what it
// costs in C. The caller owns `ctx` (initialised for sign or verify) and every buffer; nothing
// is allocated or freed here. Returns the number of successful operations.
long cbs_bench_sign(EVP_PKEY_CTX *ctx, const uint8_t *digest, long iterations);
long cbs_bench_verify(EVP_PKEY_CTX *ctx, const uint8_t *digest, const uint8_t *der, size_t der_len,
                      long iterations);

#endif
