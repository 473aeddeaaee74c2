#include "dss_keys.h"
#include "dss_private_der.h"
#include "retry_once.h"

#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>

static const char dss_group_name[] = "prime256v1";

EVP_PKEY *dss_p256_generate(void) {
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    if (EVP_PKEY_keygen_init(ctx) == 1 &&
        EVP_PKEY_CTX_set_group_name(ctx, dss_group_name) == 1 &&
        EVP_PKEY_generate(ctx, &pkey) == 1) {
        EVP_PKEY_CTX_free(ctx);
        return pkey;
    }
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(ctx);
    return NULL;
}

/* Builds an EVP_PKEY from OSSL_PARAMs; priv may be NULL for a public key. */
static EVP_PKEY *dss_p256_fromdata(const BIGNUM *priv, const uint8_t *point, size_t point_len) {
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bld == NULL) return NULL;
    if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, dss_group_name, 0) != 1) goto done;
    if (OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, point_len) != 1) goto done;
    if (priv != NULL && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, priv) != 1) goto done;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (params == NULL) goto done;
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) goto done;
    if (EVP_PKEY_fromdata_init(ctx) != 1) goto done;
    if (EVP_PKEY_fromdata(ctx, &pkey, priv != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) != 1) {
        pkey = NULL;
        goto done;
    }
done:
    EVP_PKEY_CTX_free(ctx);
    /* priv is a BN_secure_new BIGNUM, so the builder put its copy in the params' secure block,
     * which OSSL_PARAM_free releases with OPENSSL_secure_clear_free. */
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/* Full validation of a freshly built key pair: the point on the curve and not infinity, the
 * private scalar in range and matching the point. (A public key is checked on its encoded point,
 * before it becomes a key: dss_p256_point_is_valid.) */
static EVP_PKEY *dss_checked_pair(EVP_PKEY *pkey) {
    if (pkey == NULL) return NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = 0;
    if (ctx != NULL) ok = EVP_PKEY_pairwise_check(ctx);
    EVP_PKEY_CTX_free(ctx);
    if (ok != 1) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return pkey;
}

EVP_PKEY *dss_p256_from_private_scalar(const uint8_t *scalar, size_t scalar_len) {
    if (scalar == NULL || scalar_len != DSS_P256_SCALAR_BYTES) return NULL;
    EVP_PKEY *result = NULL;
    uint8_t point[DSS_P256_POINT_BYTES];
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT *pub = NULL;
    BN_CTX *bnctx = BN_CTX_new();
    BIGNUM *priv = BN_secure_new();
    if (group == NULL || bnctx == NULL || priv == NULL) goto done;
    if (BN_bin2bn(scalar, (int)scalar_len, priv) == NULL) goto done;
    /* Range [1, n-1]. */
    if (BN_is_zero(priv) || BN_cmp(priv, EC_GROUP_get0_order(group)) >= 0) goto done;
    pub = EC_POINT_new(group);
    if (pub == NULL) goto done;
    if (EC_POINT_mul(group, pub, priv, NULL, NULL, bnctx) != 1) goto done;
    if (EC_POINT_point2oct(group, pub, POINT_CONVERSION_UNCOMPRESSED, point, sizeof point, bnctx) != sizeof point) goto done;
    result = dss_checked_pair(dss_p256_fromdata(priv, point, sizeof point));
done:
    BN_clear_free(priv);
    BN_CTX_free(bnctx);
    EC_POINT_free(pub);
    EC_GROUP_free(group);
    return result;
}

/* The P-256 domain parameters as a key without a point, made once and never freed (it lives as
 * long as the process, like the default provider). A public key is a duplicate of it given the
 * point: building the group from its name on every import (EVP_PKEY_fromdata) costs about a
 * third of an ECDH derive, which every JWE's ephemeral key would pay. */
static dss_retry_once dss_p256_template_once = DSS_RETRY_ONCE_INIT;
static EVP_PKEY *dss_p256_template;
/* The group itself, for the explicit point check of dss_p256_point_is_valid (only read). */
static EC_GROUP *dss_p256_group;

/* Both or neither: a failure frees what was made, and the next use tries again. */
static int dss_p256_make_template(void) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)dss_group_name, 0),
        OSSL_PARAM_construct_end(),
    };
    EVP_PKEY *template = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1
        || EVP_PKEY_fromdata(ctx, &template, EVP_PKEY_KEY_PARAMETERS, params) != 1) {
        EVP_PKEY_free(template);
        template = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    if (group == NULL || template == NULL) {
        EC_GROUP_free(group);
        EVP_PKEY_free(template);
        return 0;
    }
    dss_p256_group = group;
    dss_p256_template = template;
    return 1;
}

/* The public-key check, done explicitly on the encoded point before any key is built from it:
 * each coordinate below p (the decoding refuses others), the point on the curve, and not the point
 * at infinity: the partial validation of NIST SP 800-56A §5.6.2.3.4, which for P-256 (cofactor 1)
 * is full validation, and the invalid-curve defence of RFC 7518 §4.6. It is OpenSSL's quick check without the round trip
 * through a key: EVP_PKEY_public_check_quick converts the point back to affine coordinates (a field
 * inversion) and costs more than a tenth of an ECDH derive, which every JWE's epk would pay. */
int dss_p256_point_is_valid(const uint8_t *point, size_t point_len) {
    if (point == NULL || (point_len != DSS_P256_POINT_BYTES && point_len != DSS_P256_COMPRESSED_POINT_BYTES)) return 0;
    /* EC_POINT_oct2point also takes the hybrid forms (0x06, 0x07); only these two are allowed. */
    if (point_len == DSS_P256_POINT_BYTES ? point[0] != 0x04 : point[0] != 0x02 && point[0] != 0x03) return 0;
    if (!dss_retry_once_run(&dss_p256_template_once, dss_p256_make_template)) return 0;
    EC_POINT *decoded = EC_POINT_new(dss_p256_group);
    BN_CTX *bnctx = BN_CTX_new();
    int ok = decoded != NULL && bnctx != NULL
        && EC_POINT_oct2point(dss_p256_group, decoded, point, point_len, bnctx) == 1
        && EC_POINT_is_at_infinity(dss_p256_group, decoded) == 0
        && EC_POINT_is_on_curve(dss_p256_group, decoded, bnctx) == 1;
    BN_CTX_free(bnctx);
    EC_POINT_free(decoded);
    return ok;
}

EVP_PKEY *dss_p256_from_public_point(const uint8_t *point, size_t point_len, int allow_compressed) {
    if (point == NULL) return NULL;
    if (point_len == DSS_P256_POINT_BYTES) {
        if (point[0] != 0x04) return NULL;
    } else if (point_len == DSS_P256_COMPRESSED_POINT_BYTES && allow_compressed) {
        if (point[0] != 0x02 && point[0] != 0x03) return NULL;
    } else {
        return NULL;
    }
    /* The point is checked first (and so the template made). */
    if (!dss_p256_point_is_valid(point, point_len) || dss_p256_template == NULL) return NULL;
    EVP_PKEY *pkey = EVP_PKEY_dup(dss_p256_template);
    if (pkey == NULL) return NULL;
    /* Decoding the point refuses one off the curve as well. A key given compressed is kept in the
     * uncompressed form, as every other key (its DER, its JWK). */
    if (EVP_PKEY_set1_encoded_public_key(pkey, point, point_len) != 1
        || (point_len == DSS_P256_COMPRESSED_POINT_BYTES
            && EVP_PKEY_set_utf8_string_param(pkey, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                              OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED) != 1)) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return pkey;
}

EVP_PKEY *dss_p256_peer_key_new(void) {
    if (!dss_retry_once_run(&dss_p256_template_once, dss_p256_make_template)) return NULL;
    return EVP_PKEY_dup(dss_p256_template);
}

/* The point is checked as dss_p256_point_is_valid checks it, by the decoding itself: the key's
 * EC_KEY_oct2key runs EC_POINT_oct2point, which refuses a coordinate of p or more and (through
 * EC_POINT_set_affine_coordinates) a point off the curve; 0x04 || x || y cannot encode infinity.
 * One decoding instead of a check and then a decoding into the key the derive uses.
 *
 * A refused point can stay in the key (EC_POINT_set_affine_coordinates stores the coordinates
 * before it checks the curve), and a derive does not check its peer again: so the key is freed
 * here, and no caller can hand it to a derive (an invalid-curve attack on the recipient key). */
int dss_p256_peer_key_set_point(EVP_PKEY **peer, const uint8_t *point, size_t point_len) {
    if (peer == NULL || *peer == NULL) return 0;
    if (point != NULL && point_len == DSS_P256_POINT_BYTES && point[0] == 0x04
        && EVP_PKEY_set1_encoded_public_key(*peer, point, point_len) == 1) {
        return 1;
    }
    EVP_PKEY_free(*peer);
    *peer = NULL;
    return 0;
}

int dss_p256_is_p256(const EVP_PKEY *pkey) {
    if (pkey == NULL || EVP_PKEY_is_a(pkey, "EC") != 1) return 0;
    char name[64];
    size_t name_len = 0;
    if (EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof name, &name_len) != 1) return 0;
    return strcmp(name, dss_group_name) == 0 ? 1 : 0;
}

int dss_p256_has_private(const EVP_PKEY *pkey) {
    BIGNUM *priv = NULL;
    if (pkey == NULL || EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &priv) != 1) return 0;
    BN_clear_free(priv);
    return 1;
}

int dss_p256_public_point(const EVP_PKEY *pkey, uint8_t *out, size_t out_len) {
    if (pkey == NULL || out == NULL || out_len != DSS_P256_POINT_BYTES) return 0;
    /* Ask for the uncompressed form explicitly: a key imported compressed may prefer that form. */
    EC_GROUP *group = NULL;
    EC_POINT *pub = NULL;
    uint8_t buf[DSS_P256_POINT_BYTES];
    size_t len = 0;
    int ok = 0;
    if (EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof buf, &len) != 1) goto done;
    if (len == DSS_P256_POINT_BYTES && buf[0] == 0x04) {   /* already uncompressed: no group needed */
        memcpy(out, buf, len);
        ok = 1;
        goto done;
    }
    group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    if (group == NULL) goto done;
    pub = EC_POINT_new(group);
    if (pub == NULL || EC_POINT_oct2point(group, pub, buf, len, NULL) != 1) goto done;
    if (EC_POINT_point2oct(group, pub, POINT_CONVERSION_UNCOMPRESSED, out, out_len, NULL) != out_len) goto done;
    ok = 1;
done:
    EC_POINT_free(pub);
    EC_GROUP_free(group);
    return ok;
}

int dss_p256_private_scalar(const EVP_PKEY *pkey, uint8_t *out, size_t out_len) {
    if (pkey == NULL || out == NULL || out_len != DSS_P256_SCALAR_BYTES) return 0;
    BIGNUM *priv = NULL;
    if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &priv) != 1) return 0;
    int ok = BN_bn2binpad(priv, out, (int)out_len) == (int)out_len;
    BN_clear_free(priv);
    return ok;
}

int dss_private_key_to_pkcs8_der(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len) {
    if (pkey == NULL || out == NULL || out_len == NULL) return 0;
    uint8_t *der = OPENSSL_malloc(DSS_P256_PKCS8_BYTES);
    if (der == NULL) return 0;
    if (dss_p256_write_pkcs8(pkey, der, DSS_P256_PKCS8_BYTES) != 1) {
        OPENSSL_clear_free(der, DSS_P256_PKCS8_BYTES);
        return 0;
    }
    *out = der;
    *out_len = DSS_P256_PKCS8_BYTES;
    return 1;
}

int dss_public_key_to_spki_der(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len) {
    if (pkey == NULL || out == NULL || out_len == NULL) return 0;
    uint8_t *der = NULL;
    int len = i2d_PUBKEY(pkey, &der);
    if (len <= 0 || der == NULL) return 0;
    *out = der;
    *out_len = (size_t)len;
    return 1;
}

/* A key read by `read` (a d2i_ function) from the whole of der: at most 16 KiB, and refused
 * (freed here) when the DER value ends before the input does. */
static EVP_PKEY *dss_key_from_whole_der(const uint8_t *der, size_t len,
                                        EVP_PKEY *(*read)(EVP_PKEY **, const unsigned char **, long)) {
    if (der == NULL || len == 0 || len > 16384) return NULL;
    const uint8_t *p = der;
    EVP_PKEY *pkey = read(NULL, &p, (long)len);
    if (pkey == NULL) return NULL;
    if ((size_t)(p - der) != len) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return pkey;
}

int dss_public_point_prefix(const EVP_PKEY *pkey) {
    if (pkey == NULL) return -1;
    uint8_t buf[DSS_P256_POINT_BYTES];
    size_t len = 0;
    if (EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof buf, &len) != 1 || len == 0) {
        return -1;
    }
    return buf[0];
}

EVP_PKEY *dss_public_key_from_spki_der(const uint8_t *der, size_t len) {
    return dss_key_from_whole_der(der, len, d2i_PUBKEY);
}

EVP_PKEY *dss_public_only_copy(const EVP_PKEY *pkey) {
    uint8_t point[DSS_P256_POINT_BYTES];
    if (dss_p256_public_point(pkey, point, sizeof point) != 1) return NULL;
    return dss_p256_from_public_point(point, sizeof point, 0);
}

void dss_free(void *ptr) { OPENSSL_free(ptr); }
void dss_free_clear(void *ptr, size_t len) { OPENSSL_clear_free(ptr, len); }
void dss_cleanse(void *ptr, size_t len) { if (ptr != NULL && len > 0) OPENSSL_cleanse(ptr, len); }
