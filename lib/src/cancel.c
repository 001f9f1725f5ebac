/*
 * Cancel handles, the half both platforms share: making, reading and freeing one. What a handle is
 * polled through (an eventfd on Linux, an event on Windows) and the trigger itself, which must be
 * safe in a signal or console control handler, are the platforms' own (cancel.linux.c,
 * cancel.windows.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

int pk_cancel_new(pk_cancel **out)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    pk_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -ENOMEM;
    int rc = pk__cancel_open(c);
    if (rc != 0) {
        free(c);
        return rc;
    }
    c->signo = PK__SIGTERM;
    *out = c;
    return 0;
}

void pk_cancel_trigger(pk_cancel *c)
{
    pk_cancel_trigger_signal(c, PK__SIGTERM);
}

bool pk_cancel_triggered(const pk_cancel *c)
{
    return c != NULL && c->fired;
}

void pk_cancel_free(pk_cancel *c)
{
    if (c == NULL)
        return;
    pk__cancel_close(c);
    free(c);
}
