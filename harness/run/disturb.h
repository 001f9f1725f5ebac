/*
 * disturb — how much other work disturbed one stretch of a run (a repetition), measured from the
 * kernel's own counters around it rather than guessed from the timings.
 *
 * Around a stretch, pkb_disturb_begin and pkb_disturb_end read:
 *
 *   others_cpu     the share of the machine's CPU capacity (wall time × logical CPUs) that other
 *                  processes used: the busy time of every CPU (/proc/stat: user, nice, system,
 *                  irq, softirq) minus the CPU of pkbench and the children it reaped
 *                  (getrusage SELF + CHILDREN). /proc/stat counts in clock ticks (10 ms), so the
 *                  share is exact to about two ticks per CPU: ±4% on a 0.25 s repetition of two
 *                  CPUs, coarse on the quick profile's 30 ms ones.
 *   steal          the share of the capacity the hypervisor gave to other guests (/proc/stat).
 *   procs_running  runnable tasks at the end (/proc/stat), as before.
 *   started        when the stretch began (CLOCK_REALTIME), to line marks up with events.
 *   nivcsw         involuntary context switches of pkbench and its reaped children (getrusage):
 *                  preemptions, by other work or by the benchmark's own tasks.
 *   migrations     moves of pkbench's main thread between CPUs (/proc/self/sched, when the
 *                  kernel has CONFIG_SCHED_DEBUG; -1 otherwise).
 *
 * The stretch is marked disturbed when others_cpu > PKB_DISTURB_OTHERS or steal >
 * PKB_DISTURB_STEAL: another process, or another guest, used a real share of the CPUs while it
 * ran. The last two counters are recorded for the reader but do not mark: a fan-out's own
 * children preempt and move each other on two CPUs, so they do not tell foreign load apart.
 */
#ifndef PKB_RUN_DISTURB_H
#define PKB_RUN_DISTURB_H

#include "results/results.h" /* pkb_disturbance: what a stretch saw */

#include <jansson.h>
#include <stdbool.h>

#define PKB_DISTURB_OTHERS 0.25 /* others used more than a quarter of the machine */
#define PKB_DISTURB_STEAL  0.05 /* the hypervisor took more than 5% */

/* A snapshot taken at the start of a stretch. Plain value. */
typedef struct pkb_disturb_mark {
    double t_ns;              /* CLOCK_MONOTONIC */
    double started;           /* CLOCK_REALTIME, seconds */
    double busy_ns, steal_ns; /* /proc/stat, all CPUs; NaN when unreadable */
    double own_ns;            /* pkbench + reaped children, user + sys */
    /* The CPU the stretch's own work used in another process — a measuring worker and its
     * children, which pkbench neither is nor reaps — as the work itself reported it
     * (plugin/sample.h's self-timed fields): the caller adds it up before pkb_disturb_end, which
     * counts it as pkbench's own, not as other processes'. pkb_disturb_begin sets it to 0. */
    double worker_ns;
    long nivcsw;          /* pkbench + reaped children */
    long long migrations; /* main thread; -1 unknown */
} pkb_disturb_mark;

void pkb_disturb_begin(pkb_disturb_mark *m);
void pkb_disturb_end(const pkb_disturb_mark *m, pkb_disturbance *out);

/* The rule as the results file's settings record it (new reference). */
json_t *pkb_disturb_rule_json(void);

#endif /* PKB_RUN_DISTURB_H */
