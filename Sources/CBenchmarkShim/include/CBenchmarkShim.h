#ifndef C_BENCHMARK_SHIM_H
#define C_BENCHMARK_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

// The C baseline of the benchmark only (never linked into the libraries): `iterations`
// EVP_PKEY_sign / EVP_PKEY_verify calls on one 32-byte SHA-256 digest with a kept context, as a
// program written directly against OpenSSL would do. In C so that the loop itself costs what it
// costs in C. The caller owns `ctx` (initialised for sign or verify) and every buffer; nothing
// is allocated or freed here. Returns the number of successful operations.
long cbs_bench_sign(EVP_PKEY_CTX *ctx, const uint8_t *digest, long iterations);
long cbs_bench_verify(EVP_PKEY_CTX *ctx, const uint8_t *digest, const uint8_t *der, size_t der_len,
                      long iterations);

// The emulator-tls-handshakes benchmark's client: one SSL_CTX (TLS 1.2 or later, peer and name
// verification on, the CA read once from memory, no session cache and no tickets), so that every
// handshake is a full one on a new loopback connection and costs the client only the handshake.
// A libcurl transport per handshake would rebuild its context and re-read the CA bundle each
// time, and the row would measure that instead of the emulator. In C so that the client costs
// what a C client costs. The caller owns the client (cbs_tls_client_free, once) and every
// buffer; a handshake frees all it makes. Writes go through write(2): the process must ignore
// SIGPIPE (the reference backend does so when it starts with TLS).
typedef struct cbs_tls_client cbs_tls_client;

// A client trusting the PEM certificates of `ca_pem` (`len` bytes); NULL when none can be read.
cbs_tls_client *cbs_tls_client_new(const uint8_t *ca_pem, size_t len);
void cbs_tls_client_free(cbs_tls_client *client);

// Connects to 127.0.0.1:`port`, runs a full handshake verifying the chain and `host` (a DNS
// name, sent as SNI, or an IP literal), then closes both ways (close_notify, the server's
// close_notify). 1 on success; 0 on any failure, the OpenSSL error queue left empty. Blocking,
// every socket read and write bounded by a few seconds.
int cbs_tls_handshake(cbs_tls_client *client, int port, const char *host);

// The fetch-client-cpu rows' baseline: a client written directly against libcurl, as its own
// examples do: one easy handle reused for every request (its connection kept alive),
// curl_easy_perform on the calling thread, the body counted and dropped. Each request sends
// `Accept: application/json` and one of the Device-Signature values the caller made beforehand,
// so the loop costs the transport and nothing else. The caller owns the client
// (cbs_curl_client_free, once) and every string; `ca_pem` (NULL for none) is copied.
typedef struct cbs_curl_client cbs_curl_client;

cbs_curl_client *cbs_curl_client_new(const char *url, const uint8_t *ca_pem, size_t ca_len);
void cbs_curl_client_free(cbs_curl_client *client);

// GETs the client's URL once per signature, in order; stops at the first request that fails, is
// not answered 200, or whose body is empty or not as long as the first one (`*body_bytes`, 0 when
// none succeeded). Returns the requests that succeeded.
long cbs_curl_fetch(cbs_curl_client *client, const char *const *signatures, long count, size_t *body_bytes);

#endif
