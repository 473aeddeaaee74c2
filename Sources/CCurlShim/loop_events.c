#define _GNU_SOURCE
#include "CCurlLoopEvents.h"

#if defined(__linux__)  // epoll, timerfd and eventfd; the transport is built on Linux only

#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { fcc_epoll_capacity = 64 };

int fcc_epoll_open(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int fcc_epoll_watch(int epoll, int fd, int what, int is_new) {
    struct epoll_event event = {0};
    event.data.fd = fd;
    switch (what) {
    case CURL_POLL_IN: event.events = EPOLLIN; break;
    case CURL_POLL_OUT: event.events = EPOLLOUT; break;
    case CURL_POLL_INOUT: event.events = EPOLLIN | EPOLLOUT; break;
    default: return -EINVAL;
    }
    int first = is_new ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (epoll_ctl(epoll, first, fd, &event) == 0) return 0;
    // The caller's idea of the set was wrong (never seen): the other operation, once.
    if (errno != (is_new ? EEXIST : ENOENT)) return -errno;
    return epoll_ctl(epoll, is_new ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0 ? 0 : -errno;
}

int fcc_epoll_unwatch(int epoll, int fd) {
    struct epoll_event unused = {0};
    if (epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &unused) == 0) return 0;
    return (errno == ENOENT || errno == EBADF) ? 0 : -errno;
}

int fcc_epoll_wait(int epoll, int *fds, int *actions, int capacity, int timeout_ms) {
    if (capacity <= 0 || capacity > fcc_epoll_capacity) return -EINVAL;
    struct epoll_event events[fcc_epoll_capacity];
    int count = epoll_wait(epoll, events, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < count; i++) {
        uint32_t ready = events[i].events;
        int action = 0;
        // A peer's close is EPOLLIN (a read returns 0) or EPOLLHUP, which epoll always reports;
        // libcurl learns which from its read. EPOLLRDHUP is never asked for, so never seen.
        if (ready & (EPOLLIN | EPOLLHUP)) action |= CURL_CSELECT_IN;
        if (ready & EPOLLOUT) action |= CURL_CSELECT_OUT;
        if (ready & EPOLLERR) action |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        actions[i] = action;
    }
    return count;
}

int fcc_timer_open(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int fcc_timer_set(int timer, long milliseconds) {
    struct itimerspec when = {0};
    if (milliseconds >= 0) {
        long ms = milliseconds < 1 ? 1 : milliseconds;
        when.it_value.tv_sec = ms / 1000;
        when.it_value.tv_nsec = (ms % 1000) * 1000000L;
    }
    return timerfd_settime(timer, 0, &when, NULL) == 0 ? 0 : -errno;
}

long long fcc_monotonic_milliseconds(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 0;  // cannot fail for this clock
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int fcc_wake_open(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int fcc_wake_signal(int wake) {
    uint64_t one = 1;
    ssize_t written = write(wake, &one, sizeof one);
    if (written == (ssize_t)sizeof one) return 0;
    // A full counter (never in practice) is already readable: the loop wakes either way.
    return (written < 0 && errno == EAGAIN) ? 0 : -(written < 0 ? errno : EIO);
}

int fcc_descriptor_drain(int fd) {
    uint64_t counter;
    ssize_t got = read(fd, &counter, sizeof counter);
    if (got == (ssize_t)sizeof counter) return 0;
    return (got < 0 && errno == EAGAIN) ? 0 : -(got < 0 ? errno : EIO);
}

void fcc_descriptor_close(int fd) {
    (void)close(fd);
}

#endif
