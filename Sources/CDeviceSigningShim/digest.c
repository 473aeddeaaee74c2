#include "dss_digest.h"
#include "retry_once.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

static dss_retry_once dss_digest_once = DSS_RETRY_ONCE_INIT;
static EVP_MD *dss_digest_sha256; /* owned for the life of the process */

static int dss_digest_fetch(void) {
    dss_digest_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    return dss_digest_sha256 != NULL;
}

int dss_sha256(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len) {
    static const uint8_t empty = 0;
    if ((in == NULL && in_len != 0) || out == NULL || out_len != 32) return 0;
    if (!dss_retry_once_run(&dss_digest_once, dss_digest_fetch)) return 0;
    unsigned int written = 0;
    /* EVP_Digest with an already fetched EVP_MD: no lookup by name, one short-lived context. */
    return EVP_Digest(in_len > 0 ? in : &empty, in_len, out, &written, dss_digest_sha256, NULL) == 1
        && written == 32;
}
