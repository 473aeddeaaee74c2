#ifndef C_CURL_SHIM_H
#define C_CURL_SHIM_H
// Typed entry points for libcurl's variadic calls, which Swift cannot call: curl_easy_setopt,
// curl_easy_getinfo and curl_multi_setopt take `...`. Each wrapper passes exactly one argument
// of the type the option documents and returns libcurl's code unchanged. Every symbol is
// prefixed `fcc_`.
//
// curl.h is included here and by the CCurl module both, so its declarations belong to whichever
// of the two Swift loads first for a target; a file that imports only CCurl then finds no
// CURLE_* name when CCurlShim won. A Swift file imports CCurlShim only where it calls an `fcc_`
// function, and the transport's files are so arranged that a clean build compiles (.ci/run
// builds from a clean clone; an incremental build can hide a break).
#include <curl/curl.h>

/// curl_easy_setopt for a CURLOPTTYPE_LONG option (also CURLOPTTYPE_VALUES).
CURLcode fcc_easy_setopt_long(CURL *easy, CURLoption option, long value);

/// curl_easy_setopt for a CURLOPTTYPE_OFF_T option.
CURLcode fcc_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value);

/// curl_easy_setopt for a pointer option: a string (copied by libcurl, except
/// CURLOPT_ERRORBUFFER and CURLOPT_POSTFIELDS), a struct curl_slist, a struct curl_blob, or a
/// callback's user data (CURLOPTTYPE_CBPOINT).
CURLcode fcc_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value);

/// curl_easy_setopt for CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
CURLcode fcc_easy_setopt_write_callback(CURL *easy, CURLoption option, curl_write_callback callback);

/// curl_easy_setopt for CURLOPT_PREREQFUNCTION.
CURLcode fcc_easy_setopt_prereq_callback(CURL *easy, curl_prereq_callback callback);

/// CURLOPT_OPENSOCKETFUNCTION: libcurl's connections are opened with SOCK_CLOEXEC, so that a
/// process started while one is open (or kept alive) does not inherit it.
CURLcode fcc_easy_open_sockets_cloexec(CURL *easy);

/// curl_easy_getinfo for a CURLINFO_LONG item.
CURLcode fcc_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
/* A string item; *value points into libcurl's memory (not to be freed) or is NULL. */
CURLcode fcc_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);

/// curl_multi_setopt for a long option.
CURLMcode fcc_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// curl_multi_setopt for a callback's user data (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA).
CURLMcode fcc_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);

/// curl_multi_setopt for CURLMOPT_SOCKETFUNCTION.
CURLMcode fcc_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback);

/// curl_multi_setopt for CURLMOPT_TIMERFUNCTION.
CURLMcode fcc_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback);

#include "CCurlLoopEvents.h"

#endif
