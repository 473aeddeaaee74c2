#include "CBenchmarkShim.h"

/* A DER ECDSA-Sig-Value of P-256 is at most 72 bytes; the digest is SHA-256's 32. */
#define CBS_ECDSA_DER_MAX_BYTES 72
#define CBS_SHA256_BYTES 32

long cbs_bench_sign(EVP_PKEY_CTX *ctx, const uint8_t *digest, long iterations) {
    long done = 0;
    uint8_t der[CBS_ECDSA_DER_MAX_BYTES];
    for (long i = 0; i < iterations; i++) {
        size_t der_len = sizeof der;
        if (EVP_PKEY_sign(ctx, der, &der_len, digest, CBS_SHA256_BYTES) == 1) done++;
    }
    return done;
}

long cbs_bench_verify(EVP_PKEY_CTX *ctx, const uint8_t *digest, const uint8_t *der, size_t der_len,
                      long iterations) {
    long done = 0;
    for (long i = 0; i < iterations; i++) {
        if (EVP_PKEY_verify(ctx, der, der_len, digest, CBS_SHA256_BYTES) == 1) done++;
    }
    return done;
}
