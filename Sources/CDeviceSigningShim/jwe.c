#include "dss_jwe.h"
#include "dss_keys.h"
#include "retry_once.h"

#include <limits.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

/* ---- Algorithms, fetched once ----------------------------------------------------------------
 * Fetching an implementation from the provider takes locks and a lookup on every call; the JWE
 * algorithms are fetched once per process and kept (never freed: they live as long as the
 * process, like the default provider itself). Index 0, 1, 2 = AES-128, AES-192, AES-256. */

static dss_retry_once dss_jwe_once = DSS_RETRY_ONCE_INIT;
static EVP_CIPHER *dss_gcm[3];
static EVP_CIPHER *dss_cbc[3];
static EVP_CIPHER *dss_wrap[3];
static EVP_MD *dss_sha256;
static EVP_MAC *dss_hmac;

/* All of them or none (the default provider, and the FIPS one, have every one): a failed fetch
 * frees what it got, and the next use tries again. */
static int dss_jwe_fetch(void) {
    static const char *const gcm[3] = {"AES-128-GCM", "AES-192-GCM", "AES-256-GCM"};
    static const char *const cbc[3] = {"AES-128-CBC", "AES-192-CBC", "AES-256-CBC"};
    static const char *const wrap[3] = {"AES-128-WRAP", "AES-192-WRAP", "AES-256-WRAP"};
    EVP_CIPHER *fetched[9] = {NULL};
    for (int i = 0; i < 3; i++) {
        fetched[i] = EVP_CIPHER_fetch(NULL, gcm[i], NULL);
        fetched[3 + i] = EVP_CIPHER_fetch(NULL, cbc[i], NULL);
        fetched[6 + i] = EVP_CIPHER_fetch(NULL, wrap[i], NULL);
    }
    EVP_MD *sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    int complete = sha256 != NULL && hmac != NULL;
    for (int i = 0; i < 9; i++) complete = complete && fetched[i] != NULL;
    if (!complete) {
        for (int i = 0; i < 9; i++) EVP_CIPHER_free(fetched[i]);
        EVP_MD_free(sha256);
        EVP_MAC_free(hmac);
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        dss_gcm[i] = fetched[i];
        dss_cbc[i] = fetched[3 + i];
        dss_wrap[i] = fetched[6 + i];
    }
    dss_sha256 = sha256;
    dss_hmac = hmac;
    return 1;
}

/* The cipher for an AES key of key_len bytes from one of the tables, or NULL. */
static const EVP_CIPHER *dss_aes(EVP_CIPHER *const table[3], size_t key_len) {
    if (!dss_retry_once_run(&dss_jwe_once, dss_jwe_fetch)) return NULL;
    switch (key_len) {
    case 16: return table[0];
    case 24: return table[1];
    case 32: return table[2];
    default: return NULL;
    }
}

/* Every length handed to an int-taking EVP call fits in an int. */
static int dss_fits_int(size_t len) { return len <= (size_t)INT_MAX; }

/* ---- ECDH and the Concat KDF ----------------------------------------------------------------- */

struct dss_ecdh_slot {
    EVP_PKEY_CTX *ctx;
};

dss_ecdh_slot *dss_ecdh_slot_new(EVP_PKEY *priv) {
    if (priv == NULL) return NULL;
    dss_ecdh_slot *slot = OPENSSL_zalloc(sizeof *slot);
    if (slot == NULL) return NULL;
    slot->ctx = EVP_PKEY_CTX_new_from_pkey(NULL, priv, NULL);
    if (slot->ctx == NULL || EVP_PKEY_derive_init(slot->ctx) != 1) {
        dss_ecdh_slot_free(slot);
        return NULL;
    }
    return slot;
}

void dss_ecdh_slot_free(dss_ecdh_slot *slot) {
    if (slot == NULL) return;
    EVP_PKEY_CTX_free(slot->ctx);   /* drops the context's reference to the last peer */
    OPENSSL_free(slot);
}

int dss_ecdh_p256_derive(dss_ecdh_slot *slot, EVP_PKEY *peer, uint8_t *out, size_t out_len) {
    if (slot == NULL || peer == NULL || out == NULL || out_len != DSS_ECDH_P256_SECRET_BYTES) return 0;
    size_t len = 0;
    int ok = EVP_PKEY_derive_set_peer_ex(slot->ctx, peer, 0) == 1
        && EVP_PKEY_derive(slot->ctx, NULL, &len) == 1
        && len == out_len;
    if (ok) {
        len = out_len;
        ok = EVP_PKEY_derive(slot->ctx, out, &len) == 1 && len == out_len;
    }
    if (!ok) OPENSSL_cleanse(out, out_len);
    return ok;
}

int dss_concat_kdf_sha256(const uint8_t *z, size_t z_len, const uint8_t *other_info, size_t other_info_len,
                          uint8_t *out, size_t out_len) {
    if (z == NULL || z_len == 0 || (other_info == NULL && other_info_len > 0) || out == NULL || out_len == 0
        || out_len > 64) return 0;
    if (!dss_retry_once_run(&dss_jwe_once, dss_jwe_fetch)) return 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL) return 0;
    /* K(i) = SHA-256(counter i as 32-bit big-endian || Z || OtherInfo), i = 1, 2, ..., the
     * output their concatenation cut to out_len (NIST SP 800-56A §5.8.1.1; OpenSSL's SSKDF does
     * the same with a context and parameters per call, which cost more than the hashing). */
    uint8_t block[32];
    int ok = 1;
    for (uint32_t counter = 1, done = 0; ok && done < out_len; counter++) {
        const uint8_t be[4] = {(uint8_t)(counter >> 24), (uint8_t)(counter >> 16), (uint8_t)(counter >> 8),
                               (uint8_t)counter};
        unsigned int len = 0;
        ok = EVP_DigestInit_ex2(ctx, dss_sha256, NULL) == 1
            && EVP_DigestUpdate(ctx, be, sizeof be) == 1
            && EVP_DigestUpdate(ctx, z, z_len) == 1
            && EVP_DigestUpdate(ctx, other_info, other_info_len) == 1
            && EVP_DigestFinal_ex(ctx, block, &len) == 1
            && len == sizeof block;
        if (ok) {
            size_t take = out_len - done < sizeof block ? out_len - done : sizeof block;
            memcpy(out + done, block, take);
            done += (uint32_t)take;
        }
    }
    OPENSSL_cleanse(block, sizeof block);
    if (!ok) OPENSSL_cleanse(out, out_len);
    EVP_MD_CTX_free(ctx);   /* cleanses the digest state, which held Z */
    return ok;
}

/* ---- AES Key Wrap (RFC 3394) ----------------------------------------------------------------- */

/* One pass of the wrap cipher: encrypt = 1 wraps, 0 unwraps. expected is the output length. */
static int dss_key_wrap_pass(int encrypt, const uint8_t *kek, size_t kek_len, const uint8_t *in, size_t in_len,
                             uint8_t *out, size_t expected) {
    const EVP_CIPHER *cipher = dss_aes(dss_wrap, kek_len);
    if (cipher == NULL || kek == NULL || in == NULL || out == NULL || !dss_fits_int(in_len)) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int len = 0, final_len = 0;
    /* Wrap ciphers are refused by EVP unless the context allows them explicitly. */
    EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
    int ok = EVP_CipherInit_ex2(ctx, cipher, kek, NULL, encrypt, NULL) == 1
        && EVP_CipherUpdate(ctx, out, &len, in, (int)in_len) == 1
        && len >= 0 && (size_t)len == expected
        && EVP_CipherFinal_ex(ctx, out + len, &final_len) == 1
        && final_len == 0;
    if (!ok) OPENSSL_cleanse(out, expected);
    EVP_CIPHER_CTX_free(ctx);   /* cleanses the key schedule */
    return ok;
}

int dss_aes_key_wrap(const uint8_t *kek, size_t kek_len, const uint8_t *key, size_t key_len,
                     uint8_t *out, size_t out_len) {
    if (key_len < 16 || key_len % 8 != 0 || out_len != key_len + DSS_AES_KEY_WRAP_OVERHEAD) return 0;
    return dss_key_wrap_pass(1, kek, kek_len, key, key_len, out, out_len);
}

int dss_aes_key_unwrap(const uint8_t *kek, size_t kek_len, const uint8_t *wrapped, size_t wrapped_len,
                       uint8_t *out, size_t out_len) {
    if (wrapped_len < 24 || wrapped_len % 8 != 0 || out_len != wrapped_len - DSS_AES_KEY_WRAP_OVERHEAD) return 0;
    return dss_key_wrap_pass(0, kek, kek_len, wrapped, wrapped_len, out, out_len);
}

/* ---- AES-GCM --------------------------------------------------------------------------------- */

/* A GCM context keyed for one message with its AAD already absorbed, or NULL. */
static EVP_CIPHER_CTX *dss_gcm_start(int encrypt, const uint8_t *key, size_t key_len, const uint8_t *iv,
                                     size_t iv_len, const uint8_t *aad, size_t aad_len) {
    const EVP_CIPHER *cipher = dss_aes(dss_gcm, key_len);
    if (cipher == NULL || key == NULL || iv == NULL || iv_len != DSS_GCM_IV_BYTES) return NULL;
    if ((aad == NULL && aad_len > 0) || !dss_fits_int(aad_len)) return NULL;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    int len = 0;
    /* One init with cipher, key and IV: the IV is GCM's default 12 bytes (checked above), so
     * there is no IV length to set between a cipher-only init and a keyed one, and the
     * provider's context is set up once rather than twice. */
    int ok = EVP_CIPHER_get_iv_length(cipher) == DSS_GCM_IV_BYTES
        && EVP_CipherInit_ex2(ctx, cipher, key, iv, encrypt, NULL) == 1
        && EVP_CIPHER_CTX_get_iv_length(ctx) == DSS_GCM_IV_BYTES
        && (aad_len == 0 || EVP_CipherUpdate(ctx, NULL, &len, aad, (int)aad_len) == 1);
    if (!ok) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int dss_aes_gcm_seal(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *plaintext, size_t plaintext_len,
                     uint8_t *ciphertext, uint8_t *tag, size_t tag_len) {
    if (tag == NULL || tag_len != DSS_GCM_TAG_BYTES || !dss_fits_int(plaintext_len)) return 0;
    if (plaintext_len > 0 && (plaintext == NULL || ciphertext == NULL)) return 0;
    EVP_CIPHER_CTX *ctx = dss_gcm_start(1, key, key_len, iv, iv_len, aad, aad_len);
    if (ctx == NULL) return 0;
    int len = 0, final_len = 0;
    uint8_t scratch[DSS_AES_BLOCK_BYTES];   /* GCM's final step writes nothing; ciphertext may be empty */
    int ok = (plaintext_len == 0
              || (EVP_EncryptUpdate(ctx, ciphertext, &len, plaintext, (int)plaintext_len) == 1
                  && (size_t)len == plaintext_len))
        && EVP_EncryptFinal_ex(ctx, scratch, &final_len) == 1
        && final_len == 0
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)tag_len, tag) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {   /* nothing usable on failure (dss_jwe.h) */
        if (plaintext_len > 0) OPENSSL_cleanse(ciphertext, plaintext_len);
        OPENSSL_cleanse(tag, tag_len);
    }
    return ok;
}

int dss_aes_gcm_open(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *ciphertext, size_t ciphertext_len,
                     const uint8_t *tag, size_t tag_len, uint8_t *plaintext) {
    if (tag == NULL || tag_len != DSS_GCM_TAG_BYTES || !dss_fits_int(ciphertext_len)) return 0;
    if (ciphertext_len > 0 && (ciphertext == NULL || plaintext == NULL)) return 0;
    EVP_CIPHER_CTX *ctx = dss_gcm_start(0, key, key_len, iv, iv_len, aad, aad_len);
    if (ctx == NULL) return 0;
    uint8_t expected[DSS_GCM_TAG_BYTES];
    memcpy(expected, tag, sizeof expected);   /* SET_TAG takes a non-const pointer */
    int len = 0, final_len = 0;
    uint8_t scratch[DSS_AES_BLOCK_BYTES];   /* GCM's final step writes nothing; plaintext may be empty */
    int ok = (ciphertext_len == 0
              || (EVP_DecryptUpdate(ctx, plaintext, &len, ciphertext, (int)ciphertext_len) == 1
                  && (size_t)len == ciphertext_len))
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)sizeof expected, expected) == 1
        && EVP_DecryptFinal_ex(ctx, scratch, &final_len) == 1   /* the tag check */
        && final_len == 0;
    if (!ok && ciphertext_len > 0) OPENSSL_cleanse(plaintext, ciphertext_len);
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* ---- AES_CBC_HMAC_SHA2 (RFC 7518 §5.2.2) ------------------------------------------------------ */

/* HMAC over AAD || IV || ciphertext || AL (the AAD's length in bits, 64-bit big-endian), with
 * the digest whose output is twice the MAC key: SHA-256, -384, -512 for 16-, 24-, 32-byte keys.
 * Writes the first tag_len (= mac_key_len) bytes. */
static int dss_cbc_hmac_tag(const uint8_t *mac_key, size_t mac_key_len, const uint8_t *aad, size_t aad_len,
                            const uint8_t *iv, size_t iv_len, const uint8_t *ciphertext, size_t ciphertext_len,
                            uint8_t *tag, size_t tag_len) {
    const char *digest = mac_key_len == 16 ? "SHA256"
        : mac_key_len == 24 ? "SHA384"
        : mac_key_len == 32 ? "SHA512"
        : NULL;
    if (digest == NULL || tag_len != mac_key_len) return 0;
    if (!dss_retry_once_run(&dss_jwe_once, dss_jwe_fetch)) return 0;
    if (aad_len > UINT64_MAX / 8) return 0;
    uint64_t bits = (uint64_t)aad_len * 8;
    uint8_t al[8];
    for (int i = 0; i < 8; i++) al[i] = (uint8_t)(bits >> (56 - 8 * i));
    uint8_t full[64];
    size_t full_len = 0;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(dss_hmac);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_MAC_init(ctx, mac_key, mac_key_len, params) == 1
        && EVP_MAC_update(ctx, aad, aad_len) == 1
        && EVP_MAC_update(ctx, iv, iv_len) == 1
        && EVP_MAC_update(ctx, ciphertext, ciphertext_len) == 1
        && EVP_MAC_update(ctx, al, sizeof al) == 1
        && EVP_MAC_final(ctx, full, &full_len, sizeof full) == 1
        && full_len == 2 * tag_len;
    if (ok) memcpy(tag, full, tag_len);
    OPENSSL_cleanse(full, sizeof full);
    EVP_MAC_CTX_free(ctx);   /* cleanses the HMAC key */
    return ok;
}

/* Checks the shared arguments of seal and open; returns the MAC key's (= tag's) length or 0. */
static size_t dss_cbc_hmac_half(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                                const uint8_t *aad, size_t aad_len, const uint8_t *tag, size_t tag_len) {
    if (key == NULL || iv == NULL || iv_len != DSS_CBC_IV_BYTES || tag == NULL) return 0;
    if (key_len != 32 && key_len != 48 && key_len != 64) return 0;
    if ((aad == NULL && aad_len > 0) || tag_len != key_len / 2) return 0;
    return key_len / 2;
}

int dss_aes_cbc_hmac_seal(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                          const uint8_t *aad, size_t aad_len, const uint8_t *plaintext, size_t plaintext_len,
                          uint8_t *ciphertext, size_t ciphertext_cap, size_t *ciphertext_len,
                          uint8_t *tag, size_t tag_len) {
    size_t half = dss_cbc_hmac_half(key, key_len, iv, iv_len, aad, aad_len, tag, tag_len);
    if (half == 0 || ciphertext == NULL || ciphertext_len == NULL) return 0;
    if (plaintext == NULL && plaintext_len > 0) return 0;
    if (plaintext_len > (size_t)INT_MAX - DSS_AES_BLOCK_BYTES) return 0;
    size_t padded = (plaintext_len / DSS_AES_BLOCK_BYTES + 1) * DSS_AES_BLOCK_BYTES;
    if (ciphertext_cap < padded) return 0;
    const EVP_CIPHER *cipher = dss_aes(dss_cbc, half);
    if (cipher == NULL) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int len = 0, final_len = 0;
    /* ENC_KEY is the second half of the key, MAC_KEY the first (RFC 7518 §5.2.2.1). */
    int ok = EVP_EncryptInit_ex2(ctx, cipher, key + half, iv, NULL) == 1
        && (plaintext_len == 0 || EVP_EncryptUpdate(ctx, ciphertext, &len, plaintext, (int)plaintext_len) == 1)
        && EVP_EncryptFinal_ex(ctx, ciphertext + len, &final_len) == 1
        && (size_t)len + (size_t)final_len == padded;
    EVP_CIPHER_CTX_free(ctx);
    ok = ok && dss_cbc_hmac_tag(key, half, aad, aad_len, iv, iv_len, ciphertext, padded, tag, tag_len);
    if (!ok) {
        OPENSSL_cleanse(ciphertext, ciphertext_cap);
        OPENSSL_cleanse(tag, tag_len);
        return 0;
    }
    *ciphertext_len = padded;
    return 1;
}

int dss_aes_cbc_hmac_open(const uint8_t *key, size_t key_len, const uint8_t *iv, size_t iv_len,
                          const uint8_t *aad, size_t aad_len, const uint8_t *ciphertext, size_t ciphertext_len,
                          const uint8_t *tag, size_t tag_len,
                          uint8_t *plaintext, size_t plaintext_cap, size_t *plaintext_len) {
    size_t half = dss_cbc_hmac_half(key, key_len, iv, iv_len, aad, aad_len, tag, tag_len);
    if (half == 0 || ciphertext == NULL || plaintext == NULL || plaintext_len == NULL) return 0;
    if (ciphertext_len == 0 || ciphertext_len % DSS_AES_BLOCK_BYTES != 0 || !dss_fits_int(ciphertext_len)) return 0;
    if (plaintext_cap < ciphertext_len) return 0;
    const EVP_CIPHER *cipher = dss_aes(dss_cbc, half);
    if (cipher == NULL) return 0;
    uint8_t computed[32];
    /* The tag first, compared in constant time; nothing is decrypted unless it matches, so a
     * bad tag and bad padding cannot be told apart. */
    int ok = dss_cbc_hmac_tag(key, half, aad, aad_len, iv, iv_len, ciphertext, ciphertext_len, computed, half)
        && CRYPTO_memcmp(computed, tag, half) == 0;
    OPENSSL_cleanse(computed, sizeof computed);
    if (!ok) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int len = 0, final_len = 0;
    ok = EVP_DecryptInit_ex2(ctx, cipher, key + half, iv, NULL) == 1
        && EVP_DecryptUpdate(ctx, plaintext, &len, ciphertext, (int)ciphertext_len) == 1
        && EVP_DecryptFinal_ex(ctx, plaintext + len, &final_len) == 1;   /* the padding check */
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        OPENSSL_cleanse(plaintext, plaintext_cap);
        return 0;
    }
    *plaintext_len = (size_t)len + (size_t)final_len;
    return 1;
}
