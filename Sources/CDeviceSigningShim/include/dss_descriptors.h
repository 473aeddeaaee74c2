#ifndef DSS_DESCRIPTORS_H
#define DSS_DESCRIPTORS_H

// No <sys/socket.h> here: through this module it would hide Glibc's own socket names from Swift.
struct sockaddr;

// accept4(2) and pipe2(2) are not visible to Swift through Glibc. The reference backend's server
// makes its descriptors with them, so that each is close-on-exec from its first instant: set
// afterwards, a child spawned by another thread in between would inherit it.

/// accept4(listener, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK) where the system has it;
/// elsewhere (Apple platforms) accept followed by both flags set with fcntl, the accepted
/// descriptor closed again when that fails. Returns the descriptor, or -errno: the caller reads
/// the code from the result, not from errno, which Swift code between the call and its check may
/// change.
/// `length` is a socklen_t, which is an unsigned int on every platform built.
int dss_accept_cloexec_nonblocking(int listener, struct sockaddr *address, unsigned int *length);

/// pipe2(descriptors, O_CLOEXEC | O_NONBLOCK) where the system has it; elsewhere pipe followed by
/// both flags set with fcntl, both descriptors closed again when that fails. Returns 0, or -1
/// with errno set (and no descriptor open).
int dss_pipe_cloexec_nonblocking(int descriptors[2]);

// O_TMPFILE and AT_EMPTY_PATH are not visible to Swift through Glibc either. The CLI's
// `--output FILE` writes to an unnamed file and names it once complete, so that a command killed
// halfway leaves nothing behind.

/// open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600): an unnamed file in `directory`.
/// Returns the descriptor, or -1 with errno set (EOPNOTSUPP where the file system, or the
/// system, has no unnamed files).
int dss_open_unnamed_file(const char *directory);

/// Links the unnamed file `fd` as `path` (never replacing anything there: EEXIST), through
/// /proc/self/fd, else by the descriptor itself (AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH).
/// Returns 0, or -1 with errno set.
int dss_link_unnamed_file(int fd, const char *path);

#endif
