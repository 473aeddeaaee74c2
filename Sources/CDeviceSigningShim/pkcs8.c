#include "dss_pkcs8.h"
#include "dss_private_der.h"

#include <limits.h>
#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#define DSS_PKCS8_SALT_BYTES 16

/* 1 when `count` is an INTEGER in 1...INT_MAX, the range OpenSSL's int iteration parameters hold. */
static int dss_iterations_fit_int(const ASN1_INTEGER *count) {
    int64_t value = 0;
    return count != NULL && ASN1_INTEGER_get_int64(&value, count) == 1 && value >= 1 && value <= INT_MAX;
}

/* Checks the iteration count of the encryption algorithm before OpenSSL reads it into an int:
   PBES2 with PBKDF2, or a PBES1 / PKCS#12 scheme (PBEPARAM). Returns DSS_DECRYPT_OK when it fits
   (or the scheme has none, as scrypt, whose parameters OpenSSL reads as uint64),
   DSS_DECRYPT_COST_OUT_OF_RANGE when it does not, DSS_DECRYPT_MALFORMED for PBES2 parameters
   that do not parse. */
static int dss_pkcs8_check_iterations(const X509_SIG *enc) {
    const X509_ALGOR *algorithm = NULL;
    X509_SIG_get0(enc, &algorithm, NULL);
    if (algorithm == NULL || algorithm->parameter == NULL) return DSS_DECRYPT_MALFORMED;
    if (OBJ_obj2nid(algorithm->algorithm) == NID_pbes2) {
        PBE2PARAM *pbes2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), algorithm->parameter);
        if (pbes2 == NULL) return DSS_DECRYPT_MALFORMED;
        int status = DSS_DECRYPT_OK;
        if (pbes2->keyfunc == NULL) {
            status = DSS_DECRYPT_MALFORMED;
        } else if (OBJ_obj2nid(pbes2->keyfunc->algorithm) == NID_id_pbkdf2) {
            PBKDF2PARAM *pbkdf2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), pbes2->keyfunc->parameter);
            if (pbkdf2 == NULL) {
                status = DSS_DECRYPT_MALFORMED;
            } else {
                if (!dss_iterations_fit_int(pbkdf2->iter)) status = DSS_DECRYPT_COST_OUT_OF_RANGE;
                PBKDF2PARAM_free(pbkdf2);
            }
        }
        PBE2PARAM_free(pbes2);
        return status;
    }
    PBEPARAM *pbes1 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM), algorithm->parameter);
    if (pbes1 == NULL) return DSS_DECRYPT_OK; /* another scheme: PKCS8_decrypt decides */
    int status = dss_iterations_fit_int(pbes1->iter) ? DSS_DECRYPT_OK : DSS_DECRYPT_COST_OUT_OF_RANGE;
    PBEPARAM_free(pbes1);
    return status;
}

int dss_pkcs8_encrypt_der(const EVP_PKEY *pkey, const uint8_t *pass, size_t pass_len, int kdf,
                          uint64_t cost, uint64_t r, uint64_t p, uint8_t **out, size_t *out_len) {
    if (pkey == NULL || pass == NULL || pass_len == 0 || pass_len > 1024 || out == NULL || out_len == NULL) return 0;
    if (cost == 0 || cost > INT_MAX) return 0; /* PKCS5_pbe2_set_iv_ex takes an int: see dss_pkcs8.h */
    X509_ALGOR *pbe = NULL;
    if (kdf == DSS_KDF_SCRYPT) {
        /* NULL salt and IV: OpenSSL draws them from its CSPRNG. */
        pbe = PKCS5_pbe2_set_scrypt(EVP_aes_256_cbc(), NULL, DSS_PKCS8_SALT_BYTES, NULL, cost, r, p);
    } else if (kdf == DSS_KDF_PBKDF2_SHA256) {
        pbe = PKCS5_pbe2_set_iv_ex(EVP_aes_256_cbc(), (int)cost, NULL, DSS_PKCS8_SALT_BYTES, NULL,
                                   NID_hmacWithSHA256, NULL);
    }
    if (pbe == NULL) return 0;
    /* The PrivateKeyInfo is written here and read back into a PKCS8_PRIV_KEY_INFO, which clears
     * its copy when freed (EVP_PKEY2PKCS8 would leave copies in OpenSSL's encoder buffers). */
    PKCS8_PRIV_KEY_INFO *p8 = NULL;
    uint8_t *plain = OPENSSL_malloc(DSS_P256_PKCS8_BYTES);
    if (plain != NULL && dss_p256_write_pkcs8(pkey, plain, DSS_P256_PKCS8_BYTES) == 1) {
        const uint8_t *cursor = plain;
        p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &cursor, DSS_P256_PKCS8_BYTES);
    }
    OPENSSL_clear_free(plain, DSS_P256_PKCS8_BYTES);
    if (p8 == NULL) {
        X509_ALGOR_free(pbe);
        return 0;
    }
    X509_SIG *enc = PKCS8_set0_pbe((const char *)pass, (int)pass_len, p8, pbe);
    PKCS8_PRIV_KEY_INFO_free(p8); /* set0_pbe encrypted a copy of its DER; p8 is still ours */
    if (enc == NULL) {
        X509_ALGOR_free(pbe); /* set0_pbe takes pbe only on success */
        return 0;
    }
    /* enc now owns pbe */
    uint8_t *der = NULL;
    int len = i2d_X509_SIG(enc, &der);
    X509_SIG_free(enc);
    if (len <= 0 || der == NULL) return 0;
    *out = der;
    *out_len = (size_t)len;
    return 1;
}

/* The PrivateKeyInfo inside `enc`, decrypted into a buffer this shim owns and clears on every
   path, or NULL. Not PKCS8_decrypt: OpenSSL 3.0 (PKCS12_pbe_crypt_ex) frees its plaintext buffer
   without clearing it when the last block's padding is bad, so a damaged file opened with the
   right passphrase left the blocks before it, the private key among them, in freed memory. The
   plaintext must be exactly one PrivateKeyInfo: *trailing is set to 1 when it decrypted (the
   passphrase was right) but bytes follow it. *unusable is set to 1 when OpenSSL could not set up
   the decryption from the algorithm and its parameters (an unsupported cipher or KDF, parameters
   it cannot read): that says nothing about the passphrase. */
static PKCS8_PRIV_KEY_INFO *dss_pkcs8_decrypt_info(const X509_SIG *enc, const uint8_t *pass, size_t pass_len,
                                                   int *trailing, int *unusable) {
    *trailing = 0;
    *unusable = 0;
    const X509_ALGOR *algorithm = NULL;
    const ASN1_OCTET_STRING *ciphertext = NULL;
    X509_SIG_get0(enc, &algorithm, &ciphertext);
    if (algorithm == NULL || ciphertext == NULL || ciphertext->length <= 0 || pass_len > INT_MAX) return NULL;
    /* At most the ciphertext plus one block: EVP_DecryptUpdate holds the last block back. */
    size_t capacity = (size_t)ciphertext->length + EVP_MAX_BLOCK_LENGTH;
    uint8_t *plaintext = OPENSSL_zalloc(capacity);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    PKCS8_PRIV_KEY_INFO *info = NULL;
    int len = 0, final_len = 0;
    int initialized = 0;
    if (plaintext != NULL && ctx != NULL) {
        /* EVP_PBE_CipherInit_ex takes the algorithm's parts as non-const; it only reads them. */
        initialized = EVP_PBE_CipherInit_ex(algorithm->algorithm, (const char *)pass, (int)pass_len,
                                            algorithm->parameter, ctx, 0, NULL, NULL) == 1;
        *unusable = !initialized;
    }
    if (initialized
        && EVP_DecryptUpdate(ctx, plaintext, &len, ciphertext->data, ciphertext->length) == 1
        && len >= 0 && (size_t)len <= capacity - EVP_MAX_BLOCK_LENGTH
        && EVP_DecryptFinal_ex(ctx, plaintext + len, &final_len) == 1
        && final_len >= 0 && final_len <= EVP_MAX_BLOCK_LENGTH) {
        const uint8_t *p = plaintext;
        long total = (long)len + final_len;
        info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, total);
        if (info != NULL && p != plaintext + total) {
            PKCS8_PRIV_KEY_INFO_free(info);   /* clears its copy of the key */
            info = NULL;
            *trailing = 1;
        }
    }
    EVP_CIPHER_CTX_free(ctx);   /* clears the key schedule */
    OPENSSL_clear_free(plaintext, capacity);
    return info;
}

EVP_PKEY *dss_pkcs8_decrypt_der(const uint8_t *der, size_t der_len, const uint8_t *pass,
                                size_t pass_len, int *status, int *key_status) {
    int dummy, key_dummy;
    if (status == NULL) status = &dummy;
    if (key_status == NULL) key_status = &key_dummy;
    *status = DSS_DECRYPT_MALFORMED;
    *key_status = DSS_KEY_MALFORMED;
    if (der == NULL || der_len == 0 || der_len > 16384 || pass == NULL || pass_len > 1024) return NULL;
    const uint8_t *p = der;
    X509_SIG *enc = d2i_X509_SIG(NULL, &p, (long)der_len);
    if (enc == NULL) return NULL;
    /* No encrypted data: nothing a passphrase could open, so malformed, not a wrong passphrase. */
    const ASN1_OCTET_STRING *ciphertext = NULL;
    X509_SIG_get0(enc, NULL, &ciphertext);
    if ((size_t)(p - der) != der_len || ciphertext == NULL || ciphertext->length <= 0) {
        X509_SIG_free(enc);
        return NULL;
    }
    int check = dss_pkcs8_check_iterations(enc);
    if (check != DSS_DECRYPT_OK) {
        X509_SIG_free(enc);
        *status = check;
        return NULL;
    }
    int trailing = 0, unusable = 0;
    PKCS8_PRIV_KEY_INFO *p8 = dss_pkcs8_decrypt_info(enc, pass, pass_len, &trailing, &unusable);
    X509_SIG_free(enc);
    if (p8 == NULL) {
        /* Bytes after the key: it decrypted, so the passphrase was right; the content is no key.
           Parameters OpenSSL could not use: the file is at fault, not the passphrase. */
        *status = trailing ? DSS_DECRYPT_NOT_A_KEY : unusable ? DSS_DECRYPT_UNUSABLE_PARAMETERS : DSS_DECRYPT_FAILED;
        return NULL;
    }
    EVP_PKEY *pkey = dss_p256_key_from_pkcs8(p8, key_status);
    PKCS8_PRIV_KEY_INFO_free(p8); /* clears its copy of the key */
    if (pkey == NULL) {
        *status = DSS_DECRYPT_NOT_A_KEY;
        return NULL;
    }
    *status = DSS_DECRYPT_OK;
    return pkey;
}
