#define _GNU_SOURCE
#include "sr_broadcast_shim.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int srb_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }

static const int required_seals = F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL;

int srb_seal(int fd) { return fcntl(fd, F_ADD_SEALS, required_seals); }

int srb_check_sealed(int fd, uint64_t size) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) return -2;
    if ((seals & required_seals) != required_seals) return -3;
    if ((uint64_t)st.st_size != size) return -4;
    return 0;
}

#define SRB_MAX_FDS 16

ssize_t srb_send(int socket, const void *bytes, size_t length, const int *fds, int count) {
    if (count < 0 || count > SRB_MAX_FDS) { errno = EINVAL; return -1; }
    struct iovec iov = { .iov_base = (void *)bytes, .iov_len = length };
    union { char buf[CMSG_SPACE(sizeof(int) * SRB_MAX_FDS)]; struct cmsghdr align; } control;
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (count > 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)count);
    }
    ssize_t n;
    do { n = sendmsg(socket, &msg, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n;
}

ssize_t srb_receive(int socket, void *bytes, size_t capacity, int *fds, int max_fds, int *fd_count, int *truncated) {
    struct iovec iov = { .iov_base = bytes, .iov_len = capacity };
    union { char buf[CMSG_SPACE(sizeof(int) * SRB_MAX_FDS)]; struct cmsghdr align; } control;
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf };
    *fd_count = 0;
    *truncated = 0;
    ssize_t n;
    do { n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); } while (n < 0 && errno == EINTR);
    if (n < 0) return n;
    if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) *truncated = 1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *received = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, received + i, sizeof fd);
            // Kept up to max_fds; the rest closed at once (never left open in the receiver).
            if (*fd_count < max_fds) fds[(*fd_count)++] = fd; else { close(fd); *truncated = 1; }
        }
    }
    return n;
}

int srb_peer_credentials(int socket, uid_t *uid, pid_t *pid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}
