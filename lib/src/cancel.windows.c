/*
 * Cancel handles on Windows: a manual-reset event that stays signalled once triggered, so every
 * run using the handle sees it (each through a thread-pool wait posting to its port). Triggering
 * is two interlocked stores and SetEvent, safe from a console control handler (pkrun's Ctrl+C).
 */
#include "internal.windows.h"

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
    c->event = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (c->event == NULL) {
        int err = pk__win_error(GetLastError());
        free(c);
        return err;
    }
    c->signo = PK__SIGTERM;
    *out = c;
    return 0;
}

void pk_cancel_trigger_signal(pk_cancel *c, int signo)
{
    if (c == NULL || c->fired)
        return;
    InterlockedExchange(&c->signo, signo);
    InterlockedExchange(&c->fired, 1);
    SetEvent(c->event);
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
    CloseHandle(c->event);
    free(c);
}

void pk_cleanup(void)
{
    pk__stream_cache_release();
}
