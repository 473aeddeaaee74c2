#include "dss_tls.h"
#include "dss_keys.h"

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/x509v3.h>

/* Adds one extension written in OpenSSL's configuration syntax (e.g. "critical,CA:TRUE"). */
static int dss_add_extension(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok == 1;
}

/* A random positive 127-bit serial number, as RFC 5280 allows (at most 20 octets). */
static int dss_set_random_serial(X509 *cert) {
    BIGNUM *serial = BN_new();
    if (serial == NULL) return 0;
    int ok = BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
             BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) != NULL;
    BN_free(serial);
    return ok;
}

static int dss_set_common_name(X509 *cert, const char *common_name) {
    X509_NAME *name = X509_NAME_new();
    if (name == NULL) return 0;
    int ok = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)common_name, -1, -1, 0) == 1 &&
             X509_set_subject_name(cert, name) == 1;   /* copies name */
    X509_NAME_free(name);
    return ok;
}

/* The parts both certificates share: version 3, serial, subject, issuer, validity, public key.
 * The certificate gets a public-only copy of subject_key: X509_set_pubkey keeps a reference to
 * the key it is given, and a certificate that held the key pair would keep the private scalar
 * alive (and usable for signing, through X509_get0_pubkey) for as long as the certificate. */
static X509 *dss_new_certificate(EVP_PKEY *subject_key, const char *common_name, X509 *issuer,
                                 int64_t not_before, int64_t not_after) {
    EVP_PKEY *public_key = dss_public_only_copy(subject_key);
    if (public_key == NULL) return NULL;
    X509 *cert = X509_new();
    if (cert == NULL) {
        EVP_PKEY_free(public_key);
        return NULL;
    }
    int ok = X509_set_version(cert, X509_VERSION_3) == 1 &&
        dss_set_random_serial(cert) &&
        dss_set_common_name(cert, common_name) &&
        /* get_subject_name is get0: the name stays owned by its certificate; set_issuer_name copies. */
        X509_set_issuer_name(cert, X509_get_subject_name(issuer != NULL ? issuer : cert)) == 1 &&
        ASN1_TIME_set(X509_getm_notBefore(cert), (time_t)not_before) != NULL &&
        ASN1_TIME_set(X509_getm_notAfter(cert), (time_t)not_after) != NULL &&
        X509_set_pubkey(cert, public_key) == 1;   /* takes its own reference to the key */
    EVP_PKEY_free(public_key);
    if (!ok) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* One extension in OpenSSL's configuration syntax. */
typedef struct {
    int nid;
    const char *value;
} dss_extension;

/* A certificate for subject_key with `extensions`, signed by issuer_key: issuer NULL makes it
 * self-issued (the CA), whose extensions then name itself as issuer. Frees what it made on any
 * failure. */
static X509 *dss_new_signed_certificate(EVP_PKEY *subject_key, const char *common_name, X509 *issuer,
                                        EVP_PKEY *issuer_key, const dss_extension *extensions, size_t count,
                                        int64_t not_before, int64_t not_after) {
    X509 *cert = dss_new_certificate(subject_key, common_name, issuer, not_before, not_after);
    if (cert == NULL) return NULL;
    X509 *extension_issuer = issuer != NULL ? issuer : cert;
    int ok = 1;
    for (size_t i = 0; ok && i < count; i++) {
        ok = dss_add_extension(cert, extension_issuer, extensions[i].nid, extensions[i].value);
    }
    if (ok && X509_sign(cert, issuer_key, EVP_sha256()) > 0) return cert;
    X509_free(cert);
    return NULL;
}

static X509 *dss_new_ca(EVP_PKEY *ca_key, int64_t not_before, int64_t not_after) {
    static const dss_extension extensions[] = {
        {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
        {NID_key_usage, "critical,keyCertSign,cRLSign"},
        {NID_subject_key_identifier, "hash"},
    };
    return dss_new_signed_certificate(ca_key, "FetchChannel reference backend CA", NULL, ca_key, extensions,
                                      sizeof extensions / sizeof extensions[0], not_before, not_after);
}

static X509 *dss_new_leaf(EVP_PKEY *leaf_key, X509 *ca, EVP_PKEY *ca_key, int64_t not_before, int64_t not_after) {
    static const dss_extension extensions[] = {
        {NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature"},
        {NID_ext_key_usage, "serverAuth"},
        {NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost"},
        {NID_subject_key_identifier, "hash"},
        {NID_authority_key_identifier, "keyid:always"},
    };
    return dss_new_signed_certificate(leaf_key, "localhost", ca, ca_key, extensions,
                                      sizeof extensions / sizeof extensions[0], not_before, not_after);
}

int dss_tls_generate_identity(int64_t not_before, int64_t not_after, X509 **ca, X509 **leaf, EVP_PKEY **leaf_key) {
    if (ca == NULL || leaf == NULL || leaf_key == NULL || not_after <= not_before) return 0;
    X509 *new_ca = NULL, *new_leaf = NULL;
    EVP_PKEY *new_leaf_key = NULL;
    /* The CA key signs two certificates and is then freed: nothing else can ever be signed by it
     * (the certificates hold public-only copies of their keys). */
    EVP_PKEY *ca_key = dss_p256_generate();
    if (ca_key == NULL) goto fail;
    new_leaf_key = dss_p256_generate();
    if (new_leaf_key == NULL) goto fail;
    new_ca = dss_new_ca(ca_key, not_before, not_after);
    if (new_ca == NULL) goto fail;
    new_leaf = dss_new_leaf(new_leaf_key, new_ca, ca_key, not_before, not_after);
    if (new_leaf == NULL) goto fail;
    EVP_PKEY_free(ca_key);
    *ca = new_ca;
    *leaf = new_leaf;
    *leaf_key = new_leaf_key;
    return 1;
fail:
    X509_free(new_leaf);
    X509_free(new_ca);
    EVP_PKEY_free(new_leaf_key);
    EVP_PKEY_free(ca_key);
    return 0;
}

int dss_tls_configure_server_context(SSL_CTX *ctx) {
    if (ctx == NULL) return 0;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    // Each read returns after a record without application data (a KeyUpdate, a refused
    // renegotiation), so the caller's deadline and stop signal are checked between records: with
    // libssl's default auto-retry, one SSL_read kept reading for as long as a client sent them.
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    return 1;
}
