/*
 * The time-limit policy shared by the POSIX and Windows engines (timelimits.h). Kept apart from
 * the engines so that which limit wins, when the grace starts and when SIGKILL follows are
 * decided by one piece of code on both platforms; the engines differ only in how they signal a
 * tree.
 */
#include "timelimits.h"

#include <signal.h>

void pk__limits_arm(struct pk__limits *l, const pk_command *cmd, int64_t start_ns)
{
    *l = (struct pk__limits){
        .deadline_ns = cmd->timeout_ms > 0 ? start_ns + cmd->timeout_ms * 1000000 : 0,
        .idle_ns = cmd->idle_timeout_ms * 1000000,
        .grace_ns = cmd->grace_ms * 1000000,
        .last_io_ns = start_ns,
    };
}

static enum pk__limit_action begin_end(struct pk__limits *l, pk_outcome_kind kind, int64_t now)
{
    l->ending = kind;
    if (l->grace_ns <= 0)
        return PK__LIMIT_KILL;
    l->kill_at_ns = now + l->grace_ns;
    return PK__LIMIT_SIGNAL;
}

enum pk__limit_action
pk__limits_due(struct pk__limits *l, int64_t now, bool cancelled, int cancel_signo, int *signo)
{
    if (l->ending == PK_OUTCOME_NONE) {
        if (cancelled) {
            *signo = cancel_signo;
            return begin_end(l, PK_OUTCOME_CANCELLED, now);
        }
        *signo = SIGTERM;
        if (l->deadline_ns != 0 && now >= l->deadline_ns)
            return begin_end(l, PK_OUTCOME_TIMED_OUT, now);
        if (l->idle_ns != 0 && now >= l->last_io_ns + l->idle_ns)
            return begin_end(l, PK_OUTCOME_IDLE_TIMED_OUT, now);
    } else if (l->kill_at_ns != 0 && now >= l->kill_at_ns) {
        l->kill_at_ns = 0;
        return PK__LIMIT_KILL;
    }
    return PK__LIMIT_NONE;
}

int64_t pk__limits_next(const struct pk__limits *l)
{
    int64_t t = 0;
    if (l->ending == PK_OUTCOME_NONE) {
        if (l->deadline_ns != 0)
            t = l->deadline_ns;
        if (l->idle_ns != 0 && (t == 0 || l->last_io_ns + l->idle_ns < t))
            t = l->last_io_ns + l->idle_ns;
    } else if (l->kill_at_ns != 0) {
        t = l->kill_at_ns;
    }
    return t;
}
