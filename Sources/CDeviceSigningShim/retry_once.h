#ifndef DSS_RETRY_ONCE_H
#define DSS_RETRY_ONCE_H
#include <pthread.h>
#include <stdatomic.h>

/* A one-time setup that is tried again when it fails. CRYPTO_THREAD_run_once runs its function
 * once whatever comes of it: a setup that failed (out of memory at the first use, say) left the
 * functions that need it failing for the life of the process. Here `ready` is set, with release
 * order, only once `setup` returned 1, after it stored what it made; a caller that sees it unset
 * takes the lock and tries again. `setup` stores nothing when it fails (it frees what it made). */
typedef struct {
    pthread_mutex_t lock;
    atomic_int ready;
} dss_retry_once;

#define DSS_RETRY_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, 0}

/* 1 once `setup` has succeeded (now or before); 0 when it failed this time. */
static inline int dss_retry_once_run(dss_retry_once *once, int (*setup)(void)) {
    if (atomic_load_explicit(&once->ready, memory_order_acquire)) return 1;
    if (pthread_mutex_lock(&once->lock) != 0) return 0;
    int ok = atomic_load_explicit(&once->ready, memory_order_relaxed) || setup() == 1;
    if (ok) atomic_store_explicit(&once->ready, 1, memory_order_release);
    pthread_mutex_unlock(&once->lock);
    return ok;
}

#endif
