#include "dss_private_der.h"

#include <string.h>
#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>

#include "dss_keys.h"

/* The fixed head of a P-256 PKCS#8 PrivateKeyInfo, up to the scalar:
 *   SEQUENCE (135) { INTEGER 0,
 *                    SEQUENCE (19) { OID id-ecPublicKey, OID prime256v1 },
 *                    OCTET STRING (109) { ECPrivateKey: SEQUENCE (107) { INTEGER 1, OCTET STRING (32) <scalar> ...
 * then after the scalar: [1] (68) { BIT STRING (66) { 0 unused bits, <65-byte point> } } } }. */
static const uint8_t dss_pkcs8_head[] = {
    0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE,
    0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x04,
    0x6D, 0x30, 0x6B, 0x02, 0x01, 0x01, 0x04, 0x20,
};
static const uint8_t dss_pkcs8_point_head[] = {0xA1, 0x44, 0x03, 0x42, 0x00};

/* The content octets of the prime256v1 OID (1.2.840.10045.3.1.7). */
static const uint8_t dss_prime256v1_oid[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07};

int dss_p256_write_pkcs8(const EVP_PKEY *pkey, uint8_t *out, size_t out_len) {
    if (pkey == NULL || out == NULL || out_len != DSS_P256_PKCS8_BYTES) return 0;
    _Static_assert(sizeof dss_pkcs8_head + DSS_P256_SCALAR_BYTES + sizeof dss_pkcs8_point_head
                       + DSS_P256_POINT_BYTES == DSS_P256_PKCS8_BYTES,
                   "the PKCS#8 layout adds up");
    uint8_t *p = out;
    memcpy(p, dss_pkcs8_head, sizeof dss_pkcs8_head);
    p += sizeof dss_pkcs8_head;
    /* The scalar goes straight into the output: no other copy of it is made here. */
    if (dss_p256_private_scalar(pkey, p, DSS_P256_SCALAR_BYTES) != 1) goto fail;
    p += DSS_P256_SCALAR_BYTES;
    memcpy(p, dss_pkcs8_point_head, sizeof dss_pkcs8_point_head);
    p += sizeof dss_pkcs8_point_head;
    if (dss_p256_public_point(pkey, p, DSS_P256_POINT_BYTES) != 1) goto fail;
    return 1;
fail:
    OPENSSL_cleanse(out, out_len);
    return 0;
}

/* The size of a DER header (identifier and length octets) for `length` content octets and one
 * of the tags read here (all below 31: one identifier octet), the length in the fewest octets. */
static long dss_der_header_bytes(long length) {
    long bytes = 2;
    for (long rest = length; length >= 0x80 && rest > 0; rest >>= 8) bytes++;
    return bytes;
}

/* One DER element at *p (of the *left bytes that remain): 1 when its tag, class and form are
 * those asked for, with its contents in *content / *content_len and *p, *left past it; else 0.
 * ASN1_get_object checks that the length fits in what remains; an indefinite length, a length in
 * more octets than it needs and a tag in the long form (a header larger than DER's) are BER, not
 * DER, and refused: each structure is read in its one DER form. */
static int dss_der_element(const uint8_t **p, long *left, int tag, int class, int constructed,
                           const uint8_t **content, long *content_len) {
    if (*left <= 0) return 0;
    const uint8_t *q = *p;
    long length = 0;
    int found_tag = 0, found_class = 0;
    int info = ASN1_get_object(&q, &length, &found_tag, &found_class, *left);
    if ((info & 0x80) != 0 || (info & 0x01) != 0) return 0;
    if (found_tag != tag || found_class != class || ((info & V_ASN1_CONSTRUCTED) != 0) != (constructed != 0)) {
        return 0;
    }
    if ((long)(q - *p) != dss_der_header_bytes(length)) return 0;
    *content = q;
    *content_len = length;
    long used = (long)(q - *p) + length;
    *p += used;
    *left -= used;
    return 1;
}

/* Whether the next element is [number] (context class, constructed), without reading it. */
static int dss_der_next_is_context(const uint8_t *p, long left, int number) {
    const uint8_t *content = NULL;
    long content_len = 0;
    return dss_der_element(&p, &left, number, V_ASN1_CONTEXT_SPECIFIC, 1, &content, &content_len);
}

/* The key of an RFC 5915 ECPrivateKey (exactly len bytes at der). `curve_required`: SEC1 on its
 * own must name its curve; inside PKCS#8 the algorithm names it and [0] may be absent. The scalar
 * is read in place; its zero-padded copy lives on this stack frame and is cleared. */
static EVP_PKEY *dss_key_from_ec_private_key(const uint8_t *der, long len, int curve_required, int *status) {
    *status = DSS_KEY_MALFORMED;
    const uint8_t *p = der, *sequence = NULL, *version = NULL, *scalar = NULL, *content = NULL;
    long left = len, sequence_len = 0, version_len = 0, scalar_len = 0, content_len = 0;
    if (!dss_der_element(&p, &left, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, 1, &sequence, &sequence_len) || left != 0) {
        return NULL;
    }
    p = sequence;
    left = sequence_len;
    if (!dss_der_element(&p, &left, V_ASN1_INTEGER, V_ASN1_UNIVERSAL, 0, &version, &version_len)
        || version_len != 1 || version[0] != 1) {
        return NULL;
    }
    if (!dss_der_element(&p, &left, V_ASN1_OCTET_STRING, V_ASN1_UNIVERSAL, 0, &scalar, &scalar_len)) return NULL;
    int named_p256 = 0;
    if (dss_der_next_is_context(p, left, 0)) {
        const uint8_t *oid = NULL;
        long oid_len = 0;
        if (!dss_der_element(&p, &left, 0, V_ASN1_CONTEXT_SPECIFIC, 1, &content, &content_len)) return NULL;
        /* A named curve (an OID) is the only form accepted; explicit parameters count as another curve. */
        if (!dss_der_element(&content, &content_len, V_ASN1_OBJECT, V_ASN1_UNIVERSAL, 0, &oid, &oid_len)
            || content_len != 0 || oid_len != (long)sizeof dss_prime256v1_oid
            || memcmp(oid, dss_prime256v1_oid, sizeof dss_prime256v1_oid) != 0) {
            *status = DSS_KEY_OTHER_CURVE;
            return NULL;
        }
        named_p256 = 1;
    }
    if (curve_required && !named_p256) return NULL;
    const uint8_t *point = NULL;
    long point_len = 0;
    if (dss_der_next_is_context(p, left, 1)) {
        const uint8_t *bits = NULL;
        long bits_len = 0;
        if (!dss_der_element(&p, &left, 1, V_ASN1_CONTEXT_SPECIFIC, 1, &content, &content_len)
            || !dss_der_element(&content, &content_len, V_ASN1_BIT_STRING, V_ASN1_UNIVERSAL, 0, &bits, &bits_len)
            || content_len != 0 || bits_len < 1 || bits[0] != 0) {
            return NULL;
        }
        point = bits + 1;
        point_len = bits_len - 1;
    }
    if (left != 0 || scalar_len < 1 || scalar_len > DSS_P256_SCALAR_BYTES) return NULL;
    if (point != NULL && point_len != DSS_P256_POINT_BYTES && point_len != DSS_P256_COMPRESSED_POINT_BYTES) {
        return NULL;
    }

    uint8_t padded[DSS_P256_SCALAR_BYTES] = {0};
    memcpy(padded + (DSS_P256_SCALAR_BYTES - scalar_len), scalar, (size_t)scalar_len);
    EVP_PKEY *pkey = dss_p256_from_private_scalar(padded, sizeof padded); /* range and pair checked */
    OPENSSL_cleanse(padded, sizeof padded);
    if (pkey == NULL) {
        *status = DSS_KEY_INVALID;
        return NULL;
    }
    if (point != NULL) {
        /* The public key the file states must be the scalar's own (compared in the form given). */
        uint8_t own[DSS_P256_POINT_BYTES];
        int same = dss_p256_public_point(pkey, own, sizeof own) == 1;
        if (same && point_len == DSS_P256_POINT_BYTES) {
            same = memcmp(point, own, sizeof own) == 0;
        } else if (same) {
            same = point[0] == (uint8_t)(0x02 | (own[DSS_P256_POINT_BYTES - 1] & 1))
                && memcmp(point + 1, own + 1, DSS_P256_SCALAR_BYTES) == 0;
        }
        if (!same) {
            EVP_PKEY_free(pkey);
            *status = DSS_KEY_INVALID;
            return NULL;
        }
    }
    *status = DSS_KEY_OK;
    return pkey;
}

EVP_PKEY *dss_p256_key_from_pkcs8(const PKCS8_PRIV_KEY_INFO *p8, int *status) {
    int ignored;
    if (status == NULL) status = &ignored;
    *status = DSS_KEY_MALFORMED;
    const ASN1_OBJECT *algorithm = NULL;
    const unsigned char *key = NULL;
    int key_len = 0;
    const X509_ALGOR *identifier = NULL;
    if (p8 == NULL || PKCS8_pkey_get0(&algorithm, &key, &key_len, &identifier, p8) != 1 || algorithm == NULL
        || key == NULL || identifier == NULL) {
        return NULL;
    }
    if (OBJ_obj2nid(algorithm) != NID_X9_62_id_ecPublicKey) {
        *status = DSS_KEY_NOT_EC;
        return NULL;
    }
    int parameter_type = V_ASN1_UNDEF;
    const void *parameter = NULL;
    X509_ALGOR_get0(NULL, &parameter_type, &parameter, identifier);
    if (parameter_type != V_ASN1_OBJECT || OBJ_obj2nid(parameter) != NID_X9_62_prime256v1) {
        *status = DSS_KEY_OTHER_CURVE;
        return NULL;
    }
    return dss_key_from_ec_private_key(key, key_len, 0, status);
}

/* Whether `der` (len bytes, which d2i read into p8) is DER: d2i also reads BER (indefinite and
 * long-form lengths), and DER is what re-encoding gives. The copy holds the key: cleared. */
static int dss_pkcs8_is_der(const PKCS8_PRIV_KEY_INFO *p8, const uint8_t *der, size_t len) {
    int encoded_len = i2d_PKCS8_PRIV_KEY_INFO(p8, NULL);
    if (encoded_len <= 0 || (size_t)encoded_len != len) return 0;
    unsigned char *encoded = OPENSSL_malloc(len);
    if (encoded == NULL) return 0;
    unsigned char *end = encoded;
    int same = i2d_PKCS8_PRIV_KEY_INFO(p8, &end) == encoded_len && CRYPTO_memcmp(encoded, der, len) == 0;
    OPENSSL_clear_free(encoded, len);
    return same;
}

EVP_PKEY *dss_p256_key_from_der(const uint8_t *der, size_t len, int *status) {
    int ignored;
    if (status == NULL) status = &ignored;
    *status = DSS_KEY_MALFORMED;
    if (der == NULL || len == 0 || len > 16384) return NULL;
    const uint8_t *p = der;
    /* PKCS8_PRIV_KEY_INFO clears its copy of the key when freed. SEC1 fails at its second element
     * (an OCTET STRING where PKCS#8 has a SEQUENCE), before any key octets are copied. */
    PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
    if (p8 != NULL) {
        EVP_PKEY *pkey = (size_t)(p - der) == len && dss_pkcs8_is_der(p8, der, len)
            ? dss_p256_key_from_pkcs8(p8, status) : NULL;
        PKCS8_PRIV_KEY_INFO_free(p8);
        return pkey;
    }
    return dss_key_from_ec_private_key(der, (long)len, 1, status);
}
