/* Read-only file mappings protected by a read lease: see arrowipc_leased_map.h.
 *
 * Every mapping has a slot in a fixed table; its state moves only by atomic compare-and-swap,
 * so the lease-break handler (which may run on any thread, or interrupt this one anywhere) and
 * the code that sets up and releases mappings never act on the same mapping at once:
 *
 *   FREE -> CLAIMED -> RESERVED -(mapped)-> ACTIVE -(handler)-> BUSY -> PRIVATE | PINNED
 *   RESERVED -(handler: the lease broke before the mapping was published)-> BROKEN
 *   ACTIVE | PRIVATE | PINNED -(release)-> CLOSING -> FREE
 *
 * The handler only touches ACTIVE and RESERVED slots; release waits while a slot is BUSY. */
#define _GNU_SOURCE
#include "arrowipc_leased_map.h"

#include <errno.h>

#if defined(__linux__)
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>

enum {
    SLOT_FREE = 0, SLOT_CLAIMED, SLOT_RESERVED, SLOT_ACTIVE, SLOT_BUSY, SLOT_PRIVATE,
    SLOT_PINNED, SLOT_BROKEN, SLOT_CLOSING
};

typedef struct {
    _Atomic int state;
    _Atomic int fd;          /* the leased descriptor; -1 once the handler closed it */
    void* addr;              /* written before the slot becomes ACTIVE, read after */
    size_t length;           /* the mapping's length (the file's size) */
    pid_t pid;               /* the process that took the lease (a forked child must not drop it) */
} leased_slot;

static leased_slot slots[ARROWIPC_LEASE_SLOTS];
static _Atomic int live_slots = 0;
/* Real-time signal the kernel sends on a lease break: SIGRTMIN + 7 (glibc's SIGRTMIN is already
 * past the signals it reserves for itself; Python installs no handler on real-time signals). */
static int lease_signal = 0;
static struct sigaction previous_action;
static int install_error = 0;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

/* The lease broke: another process (or thread) is opening the file for writing or truncating it
 * and waits until we release the lease. Replace the file's pages under the mapping by private
 * copies first, at the same address, so no pointer into it can fault or see new bytes. */
static void privatize(leased_slot* s) {
    int fd = atomic_load(&s->fd);
    void* copy = mmap(NULL, s->length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) {
        /* No memory for the copy: keep the lease, so the writer keeps waiting; the kernel breaks
         * the lease itself after /proc/sys/fs/lease-break-time seconds (the residual risk). */
        atomic_store(&s->state, SLOT_PINNED);
        return;
    }
    memcpy(copy, s->addr, s->length);
    mprotect(copy, s->length, PROT_READ);
    if (mremap(copy, s->length, s->length, MREMAP_MAYMOVE | MREMAP_FIXED, s->addr) == MAP_FAILED) {
        munmap(copy, s->length);
        atomic_store(&s->state, SLOT_PINNED);
        return;
    }
    fcntl(fd, F_SETLEASE, F_UNLCK);
    atomic_store(&s->fd, -1);
    close(fd);
    atomic_store(&s->state, SLOT_PRIVATE);
}

static void on_lease_break(int sig, siginfo_t* info, void* context) {
    int saved_errno = errno;
    int fd = info ? info->si_fd : -1;
    int ours = 0;
    for (int i = 0; i < ARROWIPC_LEASE_SLOTS && fd >= 0; i++) {
        leased_slot* s = &slots[i];
        int state = atomic_load(&s->state);
        if (state == SLOT_FREE || state == SLOT_CLAIMED || atomic_load(&s->fd) != fd)
            continue;
        ours = 1;
        if (state == SLOT_ACTIVE) {
            int expected = SLOT_ACTIVE;
            if (atomic_compare_exchange_strong(&s->state, &expected, SLOT_BUSY))
                privatize(s);
        } else if (state == SLOT_RESERVED) {
            /* not mapped yet: give the lease up; the setup sees BROKEN and falls back to a copy */
            int expected = SLOT_RESERVED;
            if (atomic_compare_exchange_strong(&s->state, &expected, SLOT_BROKEN))
                fcntl(fd, F_SETLEASE, F_UNLCK);
        }
        break;
    }
    errno = saved_errno;
    if (ours)
        return;
    /* not one of our descriptors: whoever handled this signal before us does */
    if ((previous_action.sa_flags & SA_SIGINFO) && previous_action.sa_sigaction != NULL) {
        previous_action.sa_sigaction(sig, info, context);
    } else if (!(previous_action.sa_flags & SA_SIGINFO) && previous_action.sa_handler != SIG_DFL
               && previous_action.sa_handler != SIG_IGN && previous_action.sa_handler != NULL) {
        previous_action.sa_handler(sig);
    }
    /* A late signal for a descriptor we already closed is ignored, never the default action
     * (which would end the process). */
}

static void install_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_lease_break;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    lease_signal = SIGRTMIN + 7;
    if (lease_signal > SIGRTMAX || sigaction(lease_signal, &action, &previous_action) != 0)
        install_error = errno ? errno : EINVAL;
}

/* Each live mapping holds a descriptor: use at most a quarter of the descriptor limit, so leased
 * reads never make the program's own opens fail with EMFILE. */
static int slot_budget(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return ARROWIPC_LEASE_SLOTS;
    rlim_t quarter = limit.rlim_cur / 4;
    return quarter < (rlim_t)ARROWIPC_LEASE_SLOTS ? (int)quarter : ARROWIPC_LEASE_SLOTS;
}

static int claim_slot(int fd) {
    if (atomic_load(&live_slots) >= slot_budget())
        return -1;
    for (int i = 0; i < ARROWIPC_LEASE_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (atomic_load(&slots[i].state) == SLOT_FREE
                && atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_CLAIMED)) {
            slots[i].addr = NULL;
            slots[i].length = 0;
            slots[i].pid = getpid();
            atomic_store(&slots[i].fd, fd);
            atomic_store(&slots[i].state, SLOT_RESERVED);   /* the handler may now act on it */
            atomic_fetch_add(&live_slots, 1);
            return i;
        }
    }
    return -1;
}

static void free_slot(int i) {
    atomic_store(&slots[i].fd, -1);
    atomic_store(&slots[i].state, SLOT_FREE);
    atomic_fetch_sub(&live_slots, 1);
}

int arrowipc_leased_map_fd(int fd, int* slot, const uint8_t** data, int64_t* size, int* err) {
    struct stat given, st;
    char proc_path[64];
    *err = 0;
    pthread_once(&install_once, install_handler);
    if (install_error) {
        *err = install_error;
        return ARROWIPC_LEASE_SYSTEM;
    }
    if (fstat(fd, &given) != 0) {
        *err = errno;
        return ARROWIPC_LEASE_SYSTEM;
    }
    if (!S_ISREG(given.st_mode))
        return ARROWIPC_LEASE_UNSUPPORTED;
    if (given.st_size == 0)
        return ARROWIPC_LEASE_EMPTY;
    if ((uint64_t)given.st_size > (uint64_t)SIZE_MAX)
        return ARROWIPC_LEASE_UNSUPPORTED;
    /* a descriptor of our own (its own open file): the caller's may be shared or read/write */
    snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
    int own = open(proc_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (own < 0) {
        *err = errno;
        return ARROWIPC_LEASE_UNSUPPORTED;
    }
    if (fstat(own, &st) != 0 || st.st_dev != given.st_dev || st.st_ino != given.st_ino) {
        close(own);
        return ARROWIPC_LEASE_CHANGED;
    }
    int i = claim_slot(own);
    if (i < 0) {
        close(own);
        return ARROWIPC_LEASE_NO_SLOT;
    }
    leased_slot* s = &slots[i];
    int code = ARROWIPC_LEASE_OK;
    if (fcntl(own, F_SETSIG, lease_signal) != 0 || fcntl(own, F_SETOWN, getpid()) != 0) {
        *err = errno;
        code = ARROWIPC_LEASE_SYSTEM;
    } else if (fcntl(own, F_SETLEASE, F_RDLCK) != 0) {
        *err = errno;
        code = ARROWIPC_LEASE_DENIED;
    }
    if (code != ARROWIPC_LEASE_OK) {
        free_slot(i);
        close(own);
        return code;
    }
    /* leased: from here on no process can change the file without our handler running first */
    size_t length = (size_t)st.st_size;
    void* addr = mmap(NULL, length, PROT_READ, MAP_SHARED, own, 0);
    if (addr == MAP_FAILED) {
        *err = errno;
        code = ARROWIPC_LEASE_SYSTEM;
    } else if (fstat(own, &st) != 0 || (size_t)st.st_size != length) {
        code = ARROWIPC_LEASE_CHANGED;      /* truncated or grown between the fstat and the lease */
    } else {
        s->addr = addr;
        s->length = length;
        int expected = SLOT_RESERVED;
        if (atomic_compare_exchange_strong(&s->state, &expected, SLOT_ACTIVE)) {
            *slot = i;
            *data = (const uint8_t*)addr;
            *size = (int64_t)length;
            return ARROWIPC_LEASE_OK;
        }
        code = ARROWIPC_LEASE_CHANGED;      /* BROKEN: a writer came while we were mapping */
    }
    /* RESERVED or BROKEN: the handler no longer acts on either once the fd is gone from the slot */
    atomic_store(&s->state, SLOT_CLOSING);
    if (addr != MAP_FAILED)
        munmap(addr, length);
    fcntl(own, F_SETLEASE, F_UNLCK);
    free_slot(i);
    close(own);
    return code;
}

void arrowipc_leased_map_release(int i) {
    if (i < 0 || i >= ARROWIPC_LEASE_SLOTS)
        return;
    leased_slot* s = &slots[i];
    for (;;) {
        int state = atomic_load(&s->state);
        if (state == SLOT_BUSY) {           /* the handler is copying it, on another thread */
            sched_yield();
            continue;
        }
        if (state != SLOT_ACTIVE && state != SLOT_PRIVATE && state != SLOT_PINNED)
            return;                         /* not a live mapping: nothing to release */
        if (atomic_compare_exchange_strong(&s->state, &state, SLOT_CLOSING))
            break;
    }
    munmap(s->addr, s->length);
    int fd = atomic_load(&s->fd);
    if (fd >= 0) {
        if (s->pid == getpid())             /* a forked child shares the lease: leave it be */
            fcntl(fd, F_SETLEASE, F_UNLCK);
        close(fd);
    }
    free_slot(i);
}

int arrowipc_leased_map_is_file_backed(int i) {
    if (i < 0 || i >= ARROWIPC_LEASE_SLOTS)
        return 0;
    int state = atomic_load(&slots[i].state);
    return state == SLOT_ACTIVE || state == SLOT_PINNED;
}

int arrowipc_leased_map_live(void) { return atomic_load(&live_slots); }

int arrowipc_leased_map_signal(void) {
    pthread_once(&install_once, install_handler);
    return install_error ? 0 : lease_signal;
}

#else   /* no read leases: every read is a copy */

int arrowipc_leased_map_fd(int fd, int* slot, const uint8_t** data, int64_t* size, int* err) {
    (void)fd; (void)slot; (void)data; (void)size;
    *err = 0;
    return ARROWIPC_LEASE_UNSUPPORTED;
}
void arrowipc_leased_map_release(int slot) { (void)slot; }
int arrowipc_leased_map_is_file_backed(int slot) { (void)slot; return 0; }
int arrowipc_leased_map_live(void) { return 0; }
int arrowipc_leased_map_signal(void) { return 0; }
#endif
