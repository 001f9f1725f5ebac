/*
 * The steps of one run's engine that do not depend on how the platform waits: handing complete
 * lines to the callback, acting on the time limits and a cancel handle, and building the result.
 * Each platform's engine (engine.linux.c: ppoll and an epoll loop; engine.windows.c: a completion
 * port) calls them from its own I/O and exit steps, so a run ends and reports the same way on
 * both.
 */
#define _GNU_SOURCE
#include "internal.h"

void pk__engine_deliver(struct pk_process *p, int i)
{
    if (p->pulling)
        return;
    struct pk__stream *s = &p->streams[i];
    pk_line line;
    int r;
    /* The inline step first, the full one only when it cannot decide (pump.h). */
    while ((r = pk__stream_take_line(s, &line)) == 1 ||
           (r == 0 && (r = pk__stream_next_line(s, &line)) == 1))
        if (p->on_line != NULL)
            (void)p->on_line(p->line_user, &line);
    pk__engine_note_error(p, r < 0 ? r : 0);
}

void pk__engine_timers(struct pk_process *p, int64_t now)
{
    if (p->exited)
        return;
    int signo = 0;
    bool cancelled = p->cancel != NULL && p->cancel->fired;
    switch (
        pk__limits_due(&p->lim, now, cancelled, cancelled ? (int)p->cancel->signo : 0, &signo)) {
    case PK__LIMIT_SIGNAL:
        pk__engine_signal(p, signo);
        break;
    case PK__LIMIT_KILL:
        pk__engine_kill(p);
        break;
    case PK__LIMIT_NONE:
        break;
    }
}

int pk__engine_pull(struct pk_process *p, pk_line *line)
{
    for (;;) {
        bool any_open = false;
        for (int i = 1; i < 3; i++) {
            struct pk__stream *s = &p->streams[i];
            if (!s->lines)
                continue;
            int r = pk__stream_next_line(s, line);
            if (r == 1)
                return 0;
            if (r < 0)
                return r;
            any_open |= pk__engine_pull_more(p, i);
        }
        if (!any_open)
            return PK_EOF;
        int rc = pk__engine_wait(p);
        if (rc != 0)
            return rc;
    }
}

int64_t pk__engine_next_wakeup(const struct pk_process *p)
{
    return p->exited ? 0 : pk__limits_next(&p->lim);
}

int pk__engine_result(struct pk_process *p, pk_result *res)
{
    if (p->pulling) {
        /* Lines the caller did not pull are still accounted and captured. */
        p->pulling = false;
        for (int i = 1; i < 3; i++)
            if (p->streams[i].lines)
                pk__engine_deliver(p, i);
    }
    res->outcome = p->outcome;
    if (p->lim.ending != PK_OUTCOME_NONE)
        res->outcome.kind = p->lim.ending; /* code/signo keep how the child actually ended */
    res->outcome.pid = p->pid;
    res->outcome.wall_ns = pk__now_ns() - p->start_ns;
    res->containment = p->containment;
    int rc = p->error;
    bool too_large = false;
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        too_large |= s->keep == PK_KEEP_FAIL && s->truncated;
        int r = pk__stream_finish(s, i == 1 ? &res->out : &res->err);
        if (rc == 0)
            rc = r;
    }
    if (rc == 0 && too_large)
        rc = PK_ETOOLARGE;
    return rc;
}
