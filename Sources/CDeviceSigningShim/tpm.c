#include "dss_tpm.h"
#include "dss_ecdsa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/encoder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/provider.h>

#define DSS_TPM_PROVIDER "tpm2"
#define DSS_TPM_TCTI_VARIABLE "TPM2OPENSSL_TCTI"

struct dss_tpm_library {
    OSSL_LIB_CTX *lib;
    OSSL_PROVIDER *base;
    OSSL_PROVIDER *tpm;
};

/* "TPM2OPENSSL_TCTI=" and a value of up to DSS_TPM_TCTI_MAX bytes: the environment entry this
 * shim owns. The first time the variable must change, putenv puts this buffer itself into the
 * environment; later changes rewrite its value in place. So only a change that adds the variable
 * (the first, unless it was set; or one after someone removed it) can move the
 * environment's array (glibc's setenv of a new name reallocates it, its unsetenv shifts it, under
 * any thread's getenv); a value rewritten in place is at worst read half-written by a reader
 * other than the (serialized) loads. The last byte stays NUL, so every read ends inside it. */
static char dss_tcti_entry[sizeof DSS_TPM_TCTI_VARIABLE "=" + DSS_TPM_TCTI_MAX + 1];
#define DSS_TCTI_VALUE (dss_tcti_entry + sizeof DSS_TPM_TCTI_VARIABLE "=" - 1)

/* Makes TPM2OPENSSL_TCTI's value `value` (at most DSS_TPM_TCTI_MAX bytes): in place while the
 * environment holds this shim's entry; otherwise (the first change, or someone's setenv replaced
 * the entry) the entry is filled while nobody can read it, then put in by putenv. */
static int dss_tcti_set(const char *value) {
    size_t len = strlen(value);
    if (len > DSS_TPM_TCTI_MAX) return 0;
    if (getenv(DSS_TPM_TCTI_VARIABLE) == DSS_TCTI_VALUE) {
        memcpy(DSS_TCTI_VALUE, value, len + 1);
        return 1;
    }
    /* The name is written only here, while the entry is not in the environment: any thread's
     * getenv compares every entry's name, so the name of a live entry is never rewritten. */
    memcpy(dss_tcti_entry, DSS_TPM_TCTI_VARIABLE "=", sizeof DSS_TPM_TCTI_VARIABLE "=" - 1);
    memcpy(DSS_TCTI_VALUE, value, len + 1);
    return putenv(dss_tcti_entry) == 0;
}

/* Loads the tpm2 provider into lib, reaching the TPM of tcti. tpm2-openssl 1.1.1 takes its TCTI
 * from TPM2OPENSSL_TCTI only (its "tcti" configuration parameter never reaches it), so a tcti
 * other than the variable's value is put there for the duration of the load (dss_tcti_set), then
 * the previous value comes back; a variable that was not set comes back empty, which every reader
 * here takes as not set. A restore that fails fails the load rather than leave another TPM's
 * TCTI behind. */
static OSSL_PROVIDER *dss_tpm_load_provider(OSSL_LIB_CTX *lib, const char *tcti) {
    const char *current = getenv(DSS_TPM_TCTI_VARIABLE);
    if (current != NULL && strcmp(current, tcti) == 0) return OSSL_PROVIDER_load(lib, DSS_TPM_PROVIDER);
    char previous[DSS_TPM_TCTI_MAX + 1] = "";
    if (current != NULL) {
        size_t len = strlen(current);
        if (len > DSS_TPM_TCTI_MAX) {
            ERR_raise_data(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT,
                           DSS_TPM_TCTI_VARIABLE " is over %d bytes", DSS_TPM_TCTI_MAX);
            return NULL;
        }
        memcpy(previous, current, len + 1);
    }
    OSSL_PROVIDER *provider = NULL;
    if (dss_tcti_set(tcti)) {
        provider = OSSL_PROVIDER_load(lib, DSS_TPM_PROVIDER);
    } else {
        ERR_raise_data(ERR_LIB_USER, ERR_R_SYS_LIB, "could not set " DSS_TPM_TCTI_VARIABLE);
    }
    if (!dss_tcti_set(previous) && provider != NULL) {
        ERR_raise_data(ERR_LIB_USER, ERR_R_SYS_LIB, "could not restore " DSS_TPM_TCTI_VARIABLE);
        OSSL_PROVIDER_unload(provider);
        provider = NULL;
    }
    return provider;
}

const char *dss_tpm_environment_tcti(void) {
    const char *value = getenv(DSS_TPM_TCTI_VARIABLE);
    return value != NULL && value[0] != '\0' ? value : NULL;
}

dss_tpm_library *dss_tpm_library_open(const char *tcti) {
    if (tcti == NULL) tcti = dss_tpm_environment_tcti();
    if (tcti == NULL) tcti = DSS_TPM_DEFAULT_TCTI;
    if (tcti[0] == '\0' || strlen(tcti) > DSS_TPM_TCTI_MAX) {
        ERR_raise_data(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT, "a TCTI is 1 to %d bytes", DSS_TPM_TCTI_MAX);
        return NULL;
    }
    dss_tpm_library *library = OPENSSL_zalloc(sizeof *library);
    if (library == NULL) return NULL;
    library->lib = OSSL_LIB_CTX_new();
    if (library->lib == NULL) goto fail;
    library->base = OSSL_PROVIDER_load(library->lib, "default");
    if (library->base == NULL) goto fail;
    /* A preference, not a requirement: what names no provider (digests, the DRBG) comes from
     * `default`; TPM keys name theirs (dss_key_context). */
    if (EVP_set_default_properties(library->lib, "?provider=default") != 1) goto fail;
    library->tpm = dss_tpm_load_provider(library->lib, tcti);
    if (library->tpm == NULL) goto fail;
    return library;
fail:
    (void)dss_tpm_library_close(library);  /* already failing: the open's error is the one reported */
    return NULL;
}

OSSL_LIB_CTX *dss_tpm_library_context(dss_tpm_library *library) {
    return library != NULL ? library->lib : NULL;
}

int dss_tpm_library_close(dss_tpm_library *library) {
    if (library == NULL) return 1;
    int unloaded = 1;
    if (library->tpm != NULL && OSSL_PROVIDER_unload(library->tpm) != 1) unloaded = 0;
    if (library->base != NULL && OSSL_PROVIDER_unload(library->base) != 1) unloaded = 0;
    OSSL_LIB_CTX_free(library->lib);
    OPENSSL_free(library);
    return unloaded;
}

EVP_PKEY *dss_tpm_generate_p256(dss_tpm_library *library) {
    if (library == NULL) return NULL;
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(library->lib, "EC", "provider=" DSS_TPM_PROVIDER);
    if (ctx == NULL) return NULL;
    if (EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_CTX_set_group_name(ctx, "P-256") != 1 ||
        EVP_PKEY_generate(ctx, &pkey) != 1) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

int dss_tpm_is_tpm_key(const EVP_PKEY *pkey) {
    if (pkey == NULL) return 0;
    const OSSL_PROVIDER *provider = EVP_PKEY_get0_provider(pkey); /* get0: owned by the key */
    const char *name = provider != NULL ? OSSL_PROVIDER_get0_name(provider) : NULL;
    return name != NULL && strcmp(name, DSS_TPM_PROVIDER) == 0;
}

/* The passphrase callback of a load: there is none. Without it OpenSSL would prompt on the
 * terminal for a key with an authorization value; such a key fails to load instead. */
static int dss_tpm_no_passphrase(char *buffer, int size, int writing, void *context) {
    (void)buffer;
    (void)size;
    (void)writing;
    (void)context;
    return -1;
}

EVP_PKEY *dss_tpm_load_pem(dss_tpm_library *library, const uint8_t *pem, size_t len, int *status) {
    int ignored;
    if (status == NULL) status = &ignored;
    *status = DSS_TPM_LOAD_FAILED;
    if (library == NULL || pem == NULL || len == 0 || len > 64 * 1024) return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL) return NULL;
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey_ex(bio, NULL, dss_tpm_no_passphrase, NULL, library->lib, NULL);
    BIO_free(bio);
    if (pkey == NULL) return NULL;
    /* `default` decodes software keys in this context too; only the TPM's own keys are wanted. */
    if (!dss_tpm_is_tpm_key(pkey)) {
        EVP_PKEY_free(pkey);
        *status = DSS_TPM_LOAD_NOT_TPM;
        return NULL;
    }
    *status = DSS_TPM_LOAD_OK;
    return pkey;
}

int dss_tpm_key_pem(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len) {
    if (pkey == NULL || out == NULL || out_len == NULL || !dss_tpm_is_tpm_key(pkey)) return 0;
    OSSL_ENCODER_CTX *ctx = OSSL_ENCODER_CTX_new_for_pkey(pkey, EVP_PKEY_KEYPAIR, "PEM", NULL,
                                                         "provider=" DSS_TPM_PROVIDER);
    if (ctx == NULL) return 0;
    unsigned char *data = NULL;
    size_t len = 0;
    int ok = OSSL_ENCODER_CTX_get_num_encoders(ctx) > 0 && OSSL_ENCODER_to_data(ctx, &data, &len) == 1;
    OSSL_ENCODER_CTX_free(ctx);
    if (!ok || data == NULL || len == 0) {
        OPENSSL_free(data);
        return 0;
    }
    *out = data;
    *out_len = len;
    return 1;
}

int dss_ecdh_derive(EVP_PKEY *priv, OSSL_LIB_CTX *lib, EVP_PKEY *peer, uint8_t *out, size_t out_len) {
    if (priv == NULL || peer == NULL || out == NULL || out_len == 0) return 0;
    /* With a TPM key, OpenSSL exports the peer into the tpm2 provider and caches that copy on the
     * peer's EVP_PKEY, holding the provider: the caller's public key would keep the provider and
     * its TPM connection alive after the session closed, and shut it down later on whatever thread
     * drops the key. The derive gets a copy of its own, freed here. */
    EVP_PKEY *used = lib != NULL ? EVP_PKEY_dup(peer) : peer;
    if (used == NULL) return 0;
    EVP_PKEY_CTX *ctx = dss_key_context(priv, lib);
    int ok = 0;
    if (ctx != NULL) {
        size_t needed = 0;
        size_t written = out_len;
        ok = EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, used) == 1 &&
             EVP_PKEY_derive(ctx, NULL, &needed) == 1 && needed == out_len &&
             EVP_PKEY_derive(ctx, out, &written) == 1 && written == out_len;
        EVP_PKEY_CTX_free(ctx);
    }
    if (used != peer) EVP_PKEY_free(used);
    if (!ok) OPENSSL_cleanse(out, out_len);
    return ok;
}

int dss_tpm_pop_error(char *text, size_t text_cap, char *detail, size_t detail_cap, uint32_t *tss_rc,
                      int *has_tss_rc, int *provider_reason) {
    if (text == NULL || text_cap == 0 || detail == NULL || detail_cap == 0 || tss_rc == NULL ||
        has_tss_rc == NULL || provider_reason == NULL) return 0;
    const char *data = NULL, *file = NULL;
    int flags = 0, line = 0;
    unsigned long code = ERR_get_error_all(&file, &line, NULL, &data, &flags);
    if (code == 0) return 0;
    *has_tss_rc = 0;
    /* The provider's own errors, told by having no source position: tpm2-openssl raises them
     * without one, while OpenSSL's own errors always carry theirs. Their library number says
     * nothing once it has wrapped (see below), and then OpenSSL has no text for the reason. */
    *provider_reason = (file == NULL || file[0] == '\0') && line <= 0 ? ERR_GET_REASON(code) : -1;
    detail[0] = '\0';
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    int has_data = (flags & ERR_TXT_STRING) && data != NULL && data[0] != '\0';
    if (has_data) {
        snprintf(text, text_cap, "%s (%s)", reason, data);
    } else {
        snprintf(text, text_cap, "%s", reason);
    }
    /* Recognised by the data alone: each provider load takes the next error library number from
     * ERR_LIB_USER (128) up, and the packed code keeps 8 bits of it, so after 128 loads in one
     * process (a long-running client that reconnects) a provider's errors carry numbers of
     * OpenSSL's own libraries. */
    if (has_data && dss_tpm_parse_error_data(data, tss_rc, detail, detail_cap)) *has_tss_rc = 1;
    return 1;
}

int dss_tpm_parse_error_data(const char *data, uint32_t *tss_rc, char *detail, size_t detail_cap) {
    if (data == NULL || tss_rc == NULL || detail == NULL || detail_cap == 0) return 0;
    /* 1 to 10 decimal digits (a TSS2_RC is 32 bits), then a space; 0 is success, never an error. */
    size_t digits = strspn(data, "0123456789");
    if (digits == 0 || digits > 10 || data[digits] != ' ') return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long value = strtoull(data, &end, 10);
    if (errno != 0 || end != data + digits || value == 0 || value > UINT32_MAX) return 0;
    /* tss2's decoding of the code: a layer name (or number) and a colon, as "tcti:IO failure". */
    const char *layer = end + 1;
    size_t layer_len = strspn(layer, "abcdefghijklmnopqrstuvwxyz0123456789");
    if (layer_len == 0 || layer[layer_len] != ':') return 0;
    *tss_rc = (uint32_t)value;
    snprintf(detail, detail_cap, "%s", layer);
    return 1;
}

int dss_tpm_provider_installed(void) {
    const char *directory = OPENSSL_info(OPENSSL_INFO_MODULES_DIR);
    const char *override = getenv("OPENSSL_MODULES");
    if (override != NULL && override[0] != '\0') directory = override;
    if (directory == NULL) return 0;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.so", directory, DSS_TPM_PROVIDER) >= (int)sizeof path) return 0;
    return access(path, R_OK) == 0;
}
