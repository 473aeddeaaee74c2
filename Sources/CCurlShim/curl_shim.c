#include "CCurlShim.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

CURLcode fcc_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode fcc_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode fcc_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode fcc_easy_setopt_write_callback(CURL *easy, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

CURLcode fcc_easy_setopt_prereq_callback(CURL *easy, curl_prereq_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode fcc_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode fcc_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    char *text = NULL;
    CURLcode code = curl_easy_getinfo(easy, info, &text);
    *value = code == CURLE_OK ? text : NULL;
    return code;
}

CURLMcode fcc_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode fcc_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode fcc_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

CURLMcode fcc_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

/* CURLOPT_OPENSOCKETFUNCTION: the socket libcurl would open, with SOCK_CLOEXEC. libcurl makes it
 * non-blocking and closes it itself. */
static curl_socket_t fcc_open_socket_cloexec(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)context;
    (void)purpose;
    if (address == NULL) return CURL_SOCKET_BAD;
#if defined(SOCK_CLOEXEC)
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    return fd >= 0 ? fd : CURL_SOCKET_BAD;
#else
    /* No SOCK_CLOEXEC (Apple platforms, where the transport is not built): set it after. */
    int fd = socket(address->family, address->socktype, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        (void)close(fd);
        return CURL_SOCKET_BAD;
    }
    return fd;
#endif
}

CURLcode fcc_easy_open_sockets_cloexec(CURL *easy) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, fcc_open_socket_cloexec);
}
