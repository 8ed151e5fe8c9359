/* Read-only mappings of local files protected by a read lease (Linux).
 *
 * A shared mapping of a file is zero-copy but not safe: another process that truncates the file
 * kills ours with SIGBUS, one that rewrites it changes bytes already validated. A read lease
 * (fcntl F_SETLEASE, F_RDLCK) makes the kernel tell us, by a signal, before any process opens the
 * file for writing or truncates it, and makes that process wait until we release the lease. The
 * signal handler here then copies the mapped bytes into anonymous memory and moves that memory
 * over the mapping at the same address (mremap), so every pointer into it stays valid and keeps
 * the bytes it had; only then does it release the lease and let the writer go on.
 *
 * Pure C, no Python: functions return 0 or a code, the Cython layer (arrowipc/_core/leased_map)
 * turns codes into fallbacks or exceptions. */
#ifndef ARROWIPC_LEASED_MAP_H
#define ARROWIPC_LEASED_MAP_H
#include <stdint.h>

#define ARROWIPC_LEASE_OK 0
#define ARROWIPC_LEASE_UNSUPPORTED 1   /* not Linux, or no /proc to reopen the descriptor */
#define ARROWIPC_LEASE_DENIED 2        /* F_SETLEASE refused: a writer has it open (EAGAIN), not
                                          our file (EACCES/EPERM), no leases there (EINVAL) */
#define ARROWIPC_LEASE_NO_SLOT 3       /* every slot of the table is in use, or a quarter of the
                                          descriptor limit (RLIMIT_NOFILE) is held by mappings */
#define ARROWIPC_LEASE_CHANGED 4       /* the file changed size, or its lease broke, while mapping */
#define ARROWIPC_LEASE_EMPTY 5         /* a zero-length file: nothing to map */
#define ARROWIPC_LEASE_SYSTEM 6        /* open, fstat, sigaction or mmap failed (errno in *err) */

#define ARROWIPC_LEASE_SLOTS 4096

/* Map the whole file open as `fd` (reopened, so the lease is our own), protected by a read
 * lease. On success *slot, *data and *size describe the mapping: release it with
 * arrowipc_leased_map_release(slot). On failure nothing is left open or mapped; *err is the
 * errno of the failing call (0 when none). */
int arrowipc_leased_map_fd(int fd, int* slot, const uint8_t** data, int64_t* size, int* err);

/* Unmap slot's mapping, releasing its lease and descriptor if it still holds them. */
void arrowipc_leased_map_release(int slot);

/* Whether slot's mapping still views the file (0: the lease broke and its bytes were copied into
 * private memory, or it was never mapped). */
int arrowipc_leased_map_is_file_backed(int slot);

/* How many slots are in use (for leak tests), and the signal lease breaks are delivered by. */
int arrowipc_leased_map_live(void);
int arrowipc_leased_map_signal(void);
#endif
