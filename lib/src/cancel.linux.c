/*
 * Cancel handles. Triggering writes to an eventfd that is never read back, so it stays readable
 * for every driver polling it (one handle can serve many runs, in several threads) and the check
 * costs nothing on the fast path. pk_cancel_trigger is async-signal-safe: one atomic store and one
 * write(2), so a program can cancel from its SIGINT handler (pkrun does).
 */
#define _GNU_SOURCE
#include "internal.posix.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int pk_cancel_new(pk_cancel **out)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    pk_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -ENOMEM;
    c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->efd < 0) {
        int err = -errno;
        free(c);
        return err;
    }
    c->signo = SIGTERM;
    *out = c;
    return 0;
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

void pk_cancel_trigger(pk_cancel *c)
{
    pk_cancel_trigger_signal(c, SIGTERM);
}

bool pk_cancel_triggered(const pk_cancel *c)
{
    return c != NULL && c->fired;
}

void pk_cancel_free(pk_cancel *c)
{
    if (c == NULL)
        return;
    close(c->efd);
    free(c);
}
