#ifndef C_CURL_LOOP_EVENTS_H
#define C_CURL_LOOP_EVENTS_H
// The descriptors the transport's multi-socket loop sleeps on (Linux): one epoll set holding
// libcurl's sockets, a timerfd for libcurl's next timeout and an eventfd that ends the loop.
// Plain C because struct epoll_event is packed on x86_64, which Swift does not import. Every
// function returns 0 or a descriptor on success and -errno on failure, unless it says otherwise.
// Every symbol is prefixed `fcc_`. Defined on Linux only.

/// epoll_create1(EPOLL_CLOEXEC).
int fcc_epoll_open(void);

/// Watches `fd` in `epoll` for `what`, one of libcurl's CURL_POLL_IN, CURL_POLL_OUT and
/// CURL_POLL_INOUT (level-triggered): added when `is_new`, otherwise changed; each falls back to
/// the other when epoll says the descriptor is (or is not) in the set already.
int fcc_epoll_watch(int epoll, int fd, int what, int is_new);

/// Stops watching `fd`; a descriptor that is not watched (or already closed) is not an error.
int fcc_epoll_unwatch(int epoll, int fd);

/// epoll_wait for at most `capacity` events (at most 64) and `timeout_ms` (-1: no limit). Writes
/// each ready descriptor to `fds` and what it is ready for to `actions`, as libcurl's
/// CURL_CSELECT_IN / CURL_CSELECT_OUT / CURL_CSELECT_ERR bits. Returns how many (0 after the
/// timeout or an interrupting signal).
int fcc_epoll_wait(int epoll, int *fds, int *actions, int capacity, int timeout_ms);

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC), disarmed.
int fcc_timer_open(void);

/// Arms `timer` to fire once after `milliseconds` (at least 1); a negative value disarms it.
int fcc_timer_set(int timer, long milliseconds);

/// CLOCK_MONOTONIC (the timerfd's clock) in milliseconds.
long long fcc_monotonic_milliseconds(void);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int fcc_wake_open(void);

/// Makes `wake` readable (adds 1 to its counter).
int fcc_wake_signal(int wake);

/// Reads a timerfd's or eventfd's counter, so that it is no longer readable; nothing to read is
/// not an error.
int fcc_descriptor_drain(int fd);

/// close(2), never retried (Linux closes the descriptor even when close reports EINTR).
void fcc_descriptor_close(int fd);

#endif
