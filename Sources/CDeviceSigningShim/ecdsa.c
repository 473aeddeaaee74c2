#include "dss_ecdsa.h"

#include <stdio.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/provider.h>

EVP_PKEY_CTX *dss_key_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib) {
    if (pkey == NULL) return NULL;
    if (lib == NULL) return EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    const OSSL_PROVIDER *provider = EVP_PKEY_get0_provider(pkey); /* get0: owned by the key */
    const char *name = provider != NULL ? OSSL_PROVIDER_get0_name(provider) : NULL;
    char query[64];
    if (name == NULL) return NULL;
    int written = snprintf(query, sizeof query, "provider=%s", name);
    if (written < 0 || written >= (int)sizeof query) return NULL;
    return EVP_PKEY_CTX_new_from_pkey(lib, pkey, query);
}

/* A context for pkey made ready by `init` (EVP_PKEY_sign_init or EVP_PKEY_verify_init); freed
 * here if init fails. */
static EVP_PKEY_CTX *dss_initialized_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib, int (*init)(EVP_PKEY_CTX *)) {
    EVP_PKEY_CTX *ctx = dss_key_context(pkey, lib);
    if (ctx == NULL) return NULL;
    if (init(ctx) != 1) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

EVP_PKEY_CTX *dss_sign_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib) {
    return dss_initialized_context(pkey, lib, EVP_PKEY_sign_init);
}

EVP_PKEY_CTX *dss_verify_context(EVP_PKEY *pkey, OSSL_LIB_CTX *lib) {
    return dss_initialized_context(pkey, lib, EVP_PKEY_verify_init);
}

/* Reads one DER INTEGER (short-form length, non-negative, at most 32 significant bytes) into a
 * right-aligned 32-byte field. Used on EVP_PKEY_sign's own output, where an ECDSA_SIG and two
 * BIGNUM allocations per signature would cost a measurable share of the signing rate. */
static int dss_read_der_integer(const uint8_t **cursor, const uint8_t *end, uint8_t *out32) {
    const uint8_t *p = *cursor;
    if (end - p < 2 || p[0] != 0x02) return 0;
    size_t len = p[1];
    p += 2;
    if (len == 0 || len >= 0x80 || (size_t)(end - p) < len) return 0;
    if (p[0] & 0x80) return 0;                 /* negative */
    if (len > 1 && p[0] == 0x00) {             /* one leading zero only before a high bit */
        if (!(p[1] & 0x80)) return 0;
        p++;
        len--;
    }
    if (len > 32) return 0;
    memset(out32, 0, 32 - len);
    memcpy(out32 + 32 - len, p, len);
    *cursor = p + len;
    return 1;
}

int dss_sign_digest_raw(EVP_PKEY_CTX *ctx, const uint8_t *digest, size_t digest_len,
                        uint8_t *raw_out, size_t raw_out_len) {
    if (ctx == NULL || digest == NULL || digest_len != DSS_SHA256_BYTES ||
        raw_out == NULL || raw_out_len != DSS_ECDSA_RAW_BYTES) return 0;
    uint8_t der[DSS_ECDSA_DER_MAX_BYTES];
    size_t der_len = sizeof der;
    if (EVP_PKEY_sign(ctx, der, &der_len, digest, digest_len) != 1) return 0;
    if (der_len > sizeof der) return 0;
    const uint8_t *end = der + der_len;
    const uint8_t *p = der;
    int ok = der_len >= 2 && der[0] == 0x30 && der[1] < 0x80 && (size_t)der[1] == der_len - 2;
    p += 2;
    ok = ok && dss_read_der_integer(&p, end, raw_out) && dss_read_der_integer(&p, end, raw_out + 32) && p == end;
    if (!ok) OPENSSL_cleanse(raw_out, raw_out_len);
    return ok;
}

int dss_ecdsa_raw_to_der(const uint8_t *raw, size_t raw_len,
                         uint8_t *der_out, size_t der_cap, size_t *der_len) {
    if (raw == NULL || raw_len != DSS_ECDSA_RAW_BYTES || der_out == NULL || der_len == NULL) return 0;
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL);
    BIGNUM *s = BN_bin2bn(raw + 32, 32, NULL);
    if (sig == NULL || r == NULL || s == NULL) {
        ECDSA_SIG_free(sig);
        BN_free(r);
        BN_free(s);
        return 0;
    }
    if (ECDSA_SIG_set0(sig, r, s) != 1) { /* on success sig owns r and s */
        ECDSA_SIG_free(sig);
        BN_free(r);
        BN_free(s);
        return 0;
    }
    int needed = i2d_ECDSA_SIG(sig, NULL);
    int ok = 0;
    if (needed > 0 && (size_t)needed <= der_cap) {
        uint8_t *p = der_out;
        int written = i2d_ECDSA_SIG(sig, &p);
        if (written == needed) {
            *der_len = (size_t)written;
            ok = 1;
        }
    }
    ECDSA_SIG_free(sig);
    return ok;
}

int dss_ecdsa_der_to_raw(const uint8_t *der, size_t der_len, uint8_t *raw_out, size_t raw_out_len) {
    if (der == NULL || der_len == 0 || der_len > DSS_ECDSA_DER_MAX_BYTES ||
        raw_out == NULL || raw_out_len != DSS_ECDSA_RAW_BYTES) return 0;
    const uint8_t *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
    if (sig == NULL) return 0;
    int ok = 0;
    uint8_t reencoded[DSS_ECDSA_DER_MAX_BYTES];
    const BIGNUM *r = NULL, *s = NULL;
    if ((size_t)(p - der) != der_len) goto done;               /* trailing bytes */
    /* Strict DER: re-encoding must give the same bytes (rejects BER lengths, padding). */
    int needed = i2d_ECDSA_SIG(sig, NULL);
    if (needed <= 0 || (size_t)needed != der_len) goto done;
    uint8_t *q = reencoded;
    if (i2d_ECDSA_SIG(sig, &q) != needed || memcmp(reencoded, der, der_len) != 0) goto done;
    ECDSA_SIG_get0(sig, &r, &s); /* get0: owned by sig */
    if (BN_is_negative(r) || BN_is_negative(s)) goto done;
    if (BN_num_bytes(r) > 32 || BN_num_bytes(s) > 32) goto done;
    if (BN_bn2binpad(r, raw_out, 32) != 32 || BN_bn2binpad(s, raw_out + 32, 32) != 32) goto done;
    ok = 1;
done:
    ECDSA_SIG_free(sig);
    return ok;
}

int dss_verify_digest_raw(EVP_PKEY_CTX *ctx, const uint8_t *digest, size_t digest_len,
                          const uint8_t *raw, size_t raw_len) {
    if (ctx == NULL || digest == NULL || digest_len != DSS_SHA256_BYTES) return -1;
    if (raw == NULL || raw_len != DSS_ECDSA_RAW_BYTES) return 0;
    uint8_t der[DSS_ECDSA_DER_MAX_BYTES];
    size_t der_len = 0;
    if (dss_ecdsa_raw_to_der(raw, raw_len, der, sizeof der, &der_len) != 1) return -1;
    /* EVP_PKEY_verify: 1 valid, 0 invalid, negative on error. OpenSSL checks r, s in [1, n-1]. */
    int rc = EVP_PKEY_verify(ctx, der, der_len, digest, digest_len);
    return rc == 1 ? 1 : (rc == 0 ? 0 : -1);
}
