#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
// Include-only: the libcurl headers the transport uses (Debian libcurl4-openssl-dev). No logic here.
#include <curl/curl.h>
#endif
