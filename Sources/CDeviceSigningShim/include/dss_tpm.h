#ifndef DSS_TPM_H
#define DSS_TPM_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// TPM 2.0 keys through OpenSSL's `tpm2` provider (Debian tpm2-openssl). The provider lives in a
// library context of its own, so software keys never see it: opening one means loading two
// providers, and a key made or read there belongs to that context. Generating, reading and
// writing a TPM key go through the encoder/decoder and EVP_PKEY_CTX property queries; ECDH
// takes a context, a peer and a length check. Each is a short sequence whose objects must be
// freed in one place: done here.

/// A library context with the `default` and `tpm2` providers loaded, and their handles.
typedef struct dss_tpm_library dss_tpm_library;

/// The TCTI used when none is given and TPM2OPENSSL_TCTI is not set (or empty): the kernel's
/// resource manager. Never tss2's default search, which ends at a simulator on localhost:2321
/// that any local user could run: a TPM reached over the network is used only when named.
#define DSS_TPM_DEFAULT_TCTI "device:/dev/tpmrm0"
/// The longest TCTI configuration accepted, in bytes.
#define DSS_TPM_TCTI_MAX 1024

/// TPM2OPENSSL_TCTI's value when it is set and not empty, else NULL. Owned by the environment.
const char *dss_tpm_environment_tcti(void);

/// Opens a library context and loads `default` and `tpm2` into it (implicit fetches prefer
/// `default`: hashing and random numbers stay in software). The provider connects to the TPM
/// here. `tcti` is the TCTI configuration to use (1 to DSS_TPM_TCTI_MAX bytes), or NULL for the
/// environment's (dss_tpm_environment_tcti), else DSS_TPM_DEFAULT_TCTI. tpm2-openssl 1.1.1 reads
/// only TPM2OPENSSL_TCTI (its `tcti` configuration parameter never reaches it), so a `tcti` other
/// than the variable's value is put into TPM2OPENSSL_TCTI for the load and the previous value is
/// restored after it (a failed restore fails the open); a variable that was not set is left set
/// and empty. The variable is an entry this shim owns, rewritten in place: only a change adding it
/// can move the environment's array under another thread's getenv (a program that starts threads
/// early sets TPM2OPENSSL_TCTI, even empty, before). The caller serializes calls. A TCTI (or a
/// TPM2OPENSSL_TCTI) over DSS_TPM_TCTI_MAX bytes is refused. NULL on failure (error queue set).
dss_tpm_library *dss_tpm_library_open(const char *tcti);

/// The library context (owned by `library`).
OSSL_LIB_CTX *dss_tpm_library_context(dss_tpm_library *library);

/// Unloads both providers and frees the context. Every key from it must be freed before.
/// 1 when both unloads succeeded; 0 when one failed (error queue set): the context is freed
/// either way, which releases what a failed unload left.
int dss_tpm_library_close(dss_tpm_library *library);

/// A new P-256 key pair generated in the TPM, or NULL (error queue set).
EVP_PKEY *dss_tpm_generate_p256(dss_tpm_library *library);

#define DSS_TPM_LOAD_OK 0
#define DSS_TPM_LOAD_FAILED 1     /* the provider could not read or load it: see the error queue */
#define DSS_TPM_LOAD_NOT_TPM 2    /* it decoded, but not into a key of the tpm2 provider */

/// Reads a `TSS2 PRIVATE KEY` PEM (exactly `len` bytes of text) and loads the key into the TPM.
/// Returns the key or NULL with *status set to one of DSS_TPM_LOAD_*.
EVP_PKEY *dss_tpm_load_pem(dss_tpm_library *library, const uint8_t *pem, size_t len, int *status);

/// The `TSS2 PRIVATE KEY` PEM of a TPM key (the key blob the TPM wrapped; useless without that
/// TPM). On success *out is an OpenSSL allocation of *out_len bytes for dss_free_clear.
int dss_tpm_key_pem(const EVP_PKEY *pkey, uint8_t **out, size_t *out_len);

/// 1 if pkey is held by the tpm2 provider, else 0.
int dss_tpm_is_tpm_key(const EVP_PKEY *pkey);

/// ECDH (EVP_PKEY_derive) of `priv` with `peer`: the shared x coordinate, exactly out_len bytes
/// (32 for P-256). `lib` is priv's library context (NULL for software keys), as for
/// dss_sign_context: the one derive for software and TPM keys. Returns 1 on success; out is
/// cleansed on failure.
int dss_ecdh_derive(EVP_PKEY *priv, OSSL_LIB_CTX *lib, EVP_PKEY *peer, uint8_t *out, size_t out_len);

/// Pops the oldest error of this thread's OpenSSL error queue into `text` (NUL-terminated, with
/// the error's data string when it has one). tpm2-openssl puts the TSS2 return code first in
/// that data string ("%i %s", the words being tss2's "layer:text"): when the data reads so
/// (dss_tpm_parse_error_data), *tss_rc receives the code, `detail` the words, and *has_tss_rc is
/// 1 (else 0). *provider_reason is the error's reason code when tpm2-openssl raised it (an
/// error without a source position: OpenSSL's own always have one), else -1. Returns 0 when
/// the queue is empty.
int dss_tpm_pop_error(char *text, size_t text_cap, char *detail, size_t detail_cap, uint32_t *tss_rc,
                      int *has_tss_rc, int *provider_reason);

/// Reads tpm2-openssl's error data, "<decimal TSS2 code> <layer>:<words>": 1 with *tss_rc and
/// `detail` (the words, NUL-terminated, cut to detail_cap) set, else 0.
int dss_tpm_parse_error_data(const char *data, uint32_t *tss_rc, char *detail, size_t detail_cap);

/// 1 if the tpm2 provider's module file is in OpenSSL's module directory ($OPENSSL_MODULES or the
/// built-in one). Nothing is loaded.
int dss_tpm_provider_installed(void);

#endif
