// The socket and shared-memory calls of a broadcast endpoint that Swift cannot reach from
// Glibc (memfd_create, the seal constants, SO_PEERCRED, the CMSG macros of SCM_RIGHTS).
#ifndef SR_BROADCAST_SHIM_H
#define SR_BROADCAST_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// A memfd that allows sealing, close-on-exec; -1 with errno on failure.
int srb_memfd_create(const char *name);
/// Seals `fd` against growing, shrinking and further seals; 0, or -1 with errno.
int srb_seal(int fd);
/// 0 when `fd` is a memfd of exactly `size` bytes sealed against growing, shrinking and
/// further seals; otherwise which check failed: -1 not a regular file, -2 sealing not
/// supported (not a memfd), -3 a seal missing, -4 another size.
int srb_check_sealed(int fd, uint64_t size);
/// Sends one datagram with `count` descriptors beside it (SCM_RIGHTS); never raises SIGPIPE.
/// Returns the bytes sent, or -1 with errno.
ssize_t srb_send(int socket, const void *bytes, size_t length, const int *fds, int count);
/// Receives one datagram into `bytes` (`capacity`), and up to `max_fds` descriptors into
/// `fds` (close-on-exec; `*fd_count` says how many). `*truncated` is 1 when the datagram or
/// its descriptors did not fit (the host refuses such a message). Returns the datagram's
/// length, 0 at the peer's end, or -1 with errno.
ssize_t srb_receive(int socket, void *bytes, size_t capacity, int *fds, int max_fds, int *fd_count, int *truncated);
/// The peer's user and process (SO_PEERCRED); 0, or -1 with errno.
int srb_peer_credentials(int socket, uid_t *uid, pid_t *pid);
#endif
