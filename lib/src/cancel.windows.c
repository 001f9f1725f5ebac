/*
 * Cancel handles on Windows: a manual-reset event that stays signalled once triggered, so every
 * run using the handle sees it (each through a thread-pool wait posting to its port). Triggering
 * is two interlocked stores and SetEvent, safe from a console control handler (pkrun's Ctrl+C).
 * The rest of the handle is shared with POSIX (cancel.c).
 */
#include "internal.h"

int pk__cancel_open(pk_cancel *c)
{
    c->event = CreateEventW(NULL, TRUE, FALSE, NULL);
    return c->event == NULL ? pk__win_error(GetLastError()) : 0;
}

void pk__cancel_close(pk_cancel *c)
{
    CloseHandle(c->event);
}

void pk_cancel_trigger_signal(pk_cancel *c, int signo)
{
    if (c == NULL || c->fired)
        return;
    InterlockedExchange(&c->signo, signo);
    InterlockedExchange(&c->fired, 1);
    SetEvent(c->event);
}

void pk_cleanup(void)
{
    pk__stream_cache_release();
}
