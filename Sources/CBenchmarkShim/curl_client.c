#include "CBenchmarkShim.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

/* The longest header line the loop builds: a Device-Signature is a few hundred bytes. */
#define CBS_CURL_MAX_HEADER_BYTES 2048

struct cbs_curl_client {
    CURL *easy;
    struct curl_slist *fixed_headers; /* Accept */
    size_t received;                  /* body bytes of the current transfer */
};

static size_t cbs_curl_count_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    struct cbs_curl_client *client = user;
    client->received += size * count;
    return size * count;
}

cbs_curl_client *cbs_curl_client_new(const char *url, const uint8_t *ca_pem, size_t ca_len) {
    if (url == NULL) return NULL;
    cbs_curl_client *client = calloc(1, sizeof *client);
    if (client == NULL) return NULL;
    client->easy = curl_easy_init();
    client->fixed_headers = curl_slist_append(NULL, "Accept: application/json");
    if (client->easy == NULL || client->fixed_headers == NULL) {
        cbs_curl_client_free(client);
        return NULL;
    }
    CURL *easy = client->easy;
    int ok = curl_easy_setopt(easy, CURLOPT_URL, url) == CURLE_OK &&
             curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, cbs_curl_count_body) == CURLE_OK &&
             curl_easy_setopt(easy, CURLOPT_WRITEDATA, client) == CURLE_OK &&
             curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
             /* No proxy, whatever http_proxy says: the baseline goes to loopback as the package's
              * transport does. */
             curl_easy_setopt(easy, CURLOPT_PROXY, "") == CURLE_OK &&
             curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 5000L) == CURLE_OK &&
             curl_easy_setopt(easy, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) == CURLE_OK;
    if (ok && ca_pem != NULL) {
        struct curl_blob blob = {.data = (void *)ca_pem, .len = ca_len, .flags = CURL_BLOB_COPY};
        ok = curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob) == CURLE_OK;
    }
    if (!ok) {
        cbs_curl_client_free(client);
        return NULL;
    }
    return client;
}

void cbs_curl_client_free(cbs_curl_client *client) {
    if (client == NULL) return;
    if (client->easy != NULL) curl_easy_cleanup(client->easy);
    curl_slist_free_all(client->fixed_headers);
    free(client);
}

long cbs_curl_fetch(cbs_curl_client *client, const char *const *signatures, long count, size_t *body_bytes) {
    if (client == NULL || signatures == NULL || body_bytes == NULL) return 0;
    *body_bytes = 0;
    long done = 0;
    char line[CBS_CURL_MAX_HEADER_BYTES];
    static const char prefix[] = "Device-Signature: ";
    for (long i = 0; i < count; i++) {
        size_t length = strlen(signatures[i]);
        if (length >= sizeof line - sizeof prefix) break;
        memcpy(line, prefix, sizeof prefix - 1);
        memcpy(line + sizeof prefix - 1, signatures[i], length + 1);
        /* The request's own list: the fixed headers with this request's signature in front. */
        struct curl_slist head = {.data = line, .next = client->fixed_headers};
        client->received = 0;
        long status = 0;
        int ok = curl_easy_setopt(client->easy, CURLOPT_HTTPHEADER, &head) == CURLE_OK &&
                 curl_easy_perform(client->easy) == CURLE_OK &&
                 curl_easy_getinfo(client->easy, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK;
        /* The list lives on this stack frame: libcurl must not keep it past the transfer. */
        curl_easy_setopt(client->easy, CURLOPT_HTTPHEADER, NULL);
        if (!ok || status != 200 || client->received == 0) break;
        if (done == 0) *body_bytes = client->received;
        if (client->received != *body_bytes) break;
        done++;
    }
    return done;
}
