/*
 * Cancel handles on Linux. Triggering writes to an eventfd that is never read back, so it stays
 * readable for every driver polling it (one handle can serve many runs, in several threads) and
 * the check costs nothing on the fast path. pk_cancel_trigger is async-signal-safe: one atomic
 * store and one write(2), so a program can cancel from its SIGINT handler (pkrun does). The rest
 * of the handle is shared with Windows (cancel.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

int pk__cancel_open(pk_cancel *c)
{
    c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return c->efd < 0 ? -errno : 0;
}

void pk__cancel_close(pk_cancel *c)
{
    close(c->efd);
}

void pk_cancel_trigger_signal(pk_cancel *c, int signo)
{
    if (c == NULL || c->fired)
        return;
    c->signo = signo;
    c->fired = 1;
    uint64_t one = 1;
    ssize_t n = write(c->efd, &one, sizeof one);
    (void)n; /* a full counter still reads as readable: nothing to handle */
}
