#include "CBenchmarkShim.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* No read or write of a handshake on loopback takes this long: a stalled server fails, never hangs. */
#define CBS_TLS_SOCKET_TIMEOUT_SECONDS 5
/* What may follow the handshake before the server's close_notify: TLS 1.3 session tickets. */
#define CBS_TLS_MAX_READS_BEFORE_CLOSE 16

struct cbs_tls_client {
    SSL_CTX *ctx;
};

/* Adds every certificate of the PEM bundle to `store`; 1 when there was at least one. */
static int cbs_load_anchors(X509_STORE *store, const uint8_t *pem, size_t len) {
    if (len == 0 || len > INT_MAX) return 0;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL) return 0;
    int loaded = 0;
    X509 *cert;
    while ((cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        int added = X509_STORE_add_cert(store, cert); /* up-refs: ours is freed here */
        X509_free(cert);
        if (added != 1) {
            BIO_free(bio);
            return 0;
        }
        loaded++;
    }
    BIO_free(bio);
    /* The loop ends on PEM_R_NO_START_LINE at the end of the bundle: not an error once one was read. */
    ERR_clear_error();
    return loaded > 0;
}

cbs_tls_client *cbs_tls_client_new(const uint8_t *ca_pem, size_t len) {
    if (ca_pem == NULL) return NULL;
    cbs_tls_client *client = calloc(1, sizeof *client);
    if (client == NULL) return NULL;
    client->ctx = SSL_CTX_new(TLS_client_method());
    if (client->ctx == NULL
        || SSL_CTX_set_min_proto_version(client->ctx, TLS1_2_VERSION) != 1
        || !cbs_load_anchors(SSL_CTX_get_cert_store(client->ctx), ca_pem, len)) {
        cbs_tls_client_free(client);
        ERR_clear_error();
        return NULL;
    }
    SSL_CTX_set_verify(client->ctx, SSL_VERIFY_PEER, NULL);
    /* Every handshake full: no session kept to resume, no ticket asked for. */
    SSL_CTX_set_session_cache_mode(client->ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(client->ctx, SSL_OP_NO_TICKET);
    return client;
}

void cbs_tls_client_free(cbs_tls_client *client) {
    if (client == NULL) return;
    SSL_CTX_free(client->ctx); /* NULL-safe */
    free(client);
}

/* A blocking TCP socket connected to 127.0.0.1:port with send/receive timeouts; -1 on failure. */
static int cbs_connect_loopback(int port) {
    if (port < 1 || port > 65535) return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct timeval timeout = {.tv_sec = CBS_TLS_SOCKET_TIMEOUT_SECONDS, .tv_usec = 0};
    int one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* SO_SNDTIMEO bounds connect(2) too. TCP_NODELAY: each flight is one write, as libcurl sends it. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0
        || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0
        || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0
        || connect(fd, (const struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The name to verify, and SNI unless it is an IP literal (RFC 6066 allows only host names there). */
static int cbs_set_peer_name(SSL *ssl, const char *host) {
    if (host == NULL || host[0] == '\0') return 0;
    /* OpenSSL 3: SSL_set1_host checks an IP literal against the IP SANs, a name against the DNS SANs. */
    if (SSL_set1_host(ssl, host) != 1) return 0;
    unsigned char address[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, host, address) == 1 || inet_pton(AF_INET6, host, address) == 1) return 1;
    return SSL_set_tlsext_host_name(ssl, host) == 1;
}

/* Our close_notify, then the server's: reads (and drops) what comes first, e.g. TLS 1.3 tickets. */
static int cbs_close_both_ways(SSL *ssl) {
    if (SSL_shutdown(ssl) < 0) return 0;
    uint8_t discard[512];
    for (int i = 0; i < CBS_TLS_MAX_READS_BEFORE_CLOSE; i++) {
        size_t count = 0;
        if (SSL_read_ex(ssl, discard, sizeof discard, &count) == 1) continue;
        return SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN;
    }
    return 0;
}

int cbs_tls_handshake(cbs_tls_client *client, int port, const char *host) {
    if (client == NULL) return 0;
    ERR_clear_error();
    int fd = cbs_connect_loopback(port);
    if (fd < 0) return 0;
    SSL *ssl = SSL_new(client->ctx);
    int ok = ssl != NULL
        && SSL_set_fd(ssl, fd) == 1 /* a socket BIO that leaves the fd to us */
        && cbs_set_peer_name(ssl, host)
        && SSL_connect(ssl) == 1
        && SSL_get_verify_result(ssl) == X509_V_OK
        && SSL_get0_peer_certificate(ssl) != NULL
        && cbs_close_both_ways(ssl);
    SSL_free(ssl); /* NULL-safe */
    close(fd);
    ERR_clear_error();
    return ok;
}
