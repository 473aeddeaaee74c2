#include "dss_random.h"

#include <errno.h>
#if defined(__linux__)
#include <sys/random.h>
#elif defined(__APPLE__)
#include <stdlib.h>
#endif

int dss_system_random(uint8_t *out, size_t len) {
    if (out == NULL || len > 256) return 0;
#if defined(__linux__)
    size_t filled = 0;
    while (filled < len) {
        ssize_t got = getrandom(out + filled, len - filled, 0);
        if (got > 0) {
            filled += (size_t)got;
        } else if (got < 0 && errno == EINTR) {
            continue;   /* only while the kernel's pool is not yet initialised, at boot */
        } else {
            return 0;
        }
    }
    return 1;
#elif defined(__APPLE__)
    arc4random_buf(out, len);
    return 1;
#else
    return 0;
#endif
}
