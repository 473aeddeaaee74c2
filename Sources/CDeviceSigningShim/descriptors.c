#if defined(__linux__)
#define _GNU_SOURCE  /* accept4, pipe2, O_TMPFILE, AT_EMPTY_PATH */
#endif
#include "dss_descriptors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(sizeof(socklen_t) == sizeof(unsigned int) && (socklen_t)-1 > 0, "socklen_t is an unsigned int");

#if !defined(__linux__)
/* FD_CLOEXEC and O_NONBLOCK on `fd`; 0, or -1 with errno set. */
static int set_cloexec_nonblocking(int fd) {
    int descriptorFlags = fcntl(fd, F_GETFD);
    if (descriptorFlags < 0 || fcntl(fd, F_SETFD, descriptorFlags | FD_CLOEXEC) != 0) return -1;
    int statusFlags = fcntl(fd, F_GETFL);
    if (statusFlags < 0 || fcntl(fd, F_SETFL, statusFlags | O_NONBLOCK) != 0) return -1;
    return 0;
}

/* close(2) that keeps errno as it was. */
static void close_keeping_errno(int fd) {
    int saved = errno;
    close(fd);
    errno = saved;
}
#endif

int dss_accept_cloexec_nonblocking(int listener, struct sockaddr *address, unsigned int *length) {
#if defined(__linux__)
    int fd = accept4(listener, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return fd >= 0 ? fd : -errno;
#else
    int fd = accept(listener, address, length);
    if (fd < 0) return -errno;
    if (set_cloexec_nonblocking(fd) != 0) {
        int code = errno;
        close_keeping_errno(fd);
        return -code;
    }
    return fd;
#endif
}

int dss_pipe_cloexec_nonblocking(int descriptors[2]) {
    if (descriptors == NULL) {
        errno = EINVAL;
        return -1;
    }
#if defined(__linux__)
    return pipe2(descriptors, O_CLOEXEC | O_NONBLOCK);
#else
    if (pipe(descriptors) != 0) return -1;
    if (set_cloexec_nonblocking(descriptors[0]) != 0 || set_cloexec_nonblocking(descriptors[1]) != 0) {
        close_keeping_errno(descriptors[0]);
        close_keeping_errno(descriptors[1]);
        return -1;
    }
    return 0;
#endif
}

int dss_open_unnamed_file(const char *directory) {
    if (directory == NULL) {
        errno = EINVAL;
        return -1;
    }
#if defined(__linux__) && defined(O_TMPFILE)
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int dss_link_unnamed_file(int fd, const char *path) {
    if (fd < 0 || path == NULL) {
        errno = EINVAL;
        return -1;
    }
#if defined(__linux__) && defined(AT_EMPTY_PATH)
    char proc[64];
    if (snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd) >= (int)sizeof proc) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != ENOENT) return -1;  /* no /proc: try the descriptor itself */
    return linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}
