/*
 * cell — one observer, one workload, one fresh network namespace (cell.h). In order:
 *
 *   1. enter a fresh network namespace (netns.h), loopback up
 *   2. the observer's setup (its CPU is measured apart: loading BPF is not watching)
 *   3. start `pk_churn server` and `pk_churn client` with processkit (pk_spawn; stdin a pipe of
 *      ours, stdout and stderr captured and read line by line), the client opening its
 *      long-lived connections
 *   4. T0 = now + 30 ms, told to both; the observer runs until T0 + duration
 *   5. the client reports its freeze, the server accepts what is pending (sync); the observer
 *      takes its final look at the frozen state, then reports its counters
 *   6. the server reports its CPU and accepted sockets, the client its ledger (inodes), both are
 *      told to finish (EOF) and reaped; the observer is torn down; back to our namespace
 *   7. the join: every ledger inode looked up in what the observer saw
 *
 * The observer runs on this thread, so its CPU is this thread's (CLOCK_THREAD_CPUTIME_ID) over
 * run + final; the workload's is what its processes measure themselves from T0. Nothing here
 * trusts a port: ledgers and observers speak socket inodes.
 */
#define _GNU_SOURCE
#include "suites/observe/cell.h"

#include "processkit.h"
#include "suites/observe/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct role {
    const char *name; /* "server", "client" */
    pk_process *proc;
    int in; /* our end of its stdin */
};

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void thread_rusage(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int start(struct role *r, const char *const *argv, int64_t timeout_ms, char *why, size_t cap)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, cap, "pipe2: %s", strerror(errno));
        return -errno;
    }
    pk_result failure;
    memset(&failure, 0, sizeof failure);
    int rc = pk_spawn(&(pk_command){.argv = argv,
                                    .in = {.kind = PK_STDIO_FD, .fd = p[0]},
                                    .out.kind = PK_STDIO_CAPTURE,
                                    .err.kind = PK_STDIO_CAPTURE,
                                    .timeout_ms = timeout_ms},
                      &r->proc, &failure);
    close(p[0]);
    pk_result_release(&failure);
    if (rc != 0) {
        close(p[1]);
        snprintf(why, cap, "cannot start %s (%s): %s", argv[0], r->name, pk_strerror(rc));
        return rc;
    }
    r->in = p[1];
    return 0;
}

/* The next stdout line of r into buf; stderr lines become the error message. */
static int next_line(struct role *r, char *buf, size_t bufcap, char *why, size_t cap)
{
    pk_line line;
    int rc;
    while ((rc = pk_process_read_line(r->proc, &line)) == 0) {
        if (line.stream == 1) {
            snprintf(buf, bufcap, "%s", line.data);
            return 0;
        }
        snprintf(why, cap, "the workload's %s said: %s", r->name, line.data);
    }
    if (rc == PK_EOF && why[0] == '\0')
        snprintf(why, cap, "the workload's %s ended without a word", r->name);
    else if (rc != PK_EOF)
        snprintf(why, cap, "reading the workload's %s: %s", r->name, pk_strerror(rc));
    return rc == PK_EOF ? -EPIPE : rc;
}

static int tell(struct role *r, const char *text, char *why, size_t cap)
{
    size_t n = strlen(text);
    if (write(r->in, text, n) != (ssize_t)n) {
        snprintf(why, cap, "telling the workload's %s: %s", r->name, strerror(errno));
        return -EPIPE;
    }
    return 0;
}

/* Ends a role: EOF on its stdin, then the reap; 0 when it exited 0. */
static int finish(struct role *r, char *why, size_t cap)
{
    if (r->proc == NULL)
        return 0;
    if (r->in >= 0)
        close(r->in);
    r->in = -1;
    pk_result res;
    int rc = pk_process_wait(r->proc, &res);
    if (rc == 0 && (res.outcome.kind != PK_OUTCOME_EXITED || res.outcome.code != 0)) {
        snprintf(why, cap, "the workload's %s ended %s (code %d, signal %d): %.120s", r->name,
                 pk_outcome_kind_name(res.outcome.kind), res.outcome.code, res.outcome.signo,
                 res.err.data ? res.err.data : "");
        rc = -ECHILD;
    }
    pk_result_release(&res);
    pk_process_free(r->proc);
    r->proc = NULL;
    return rc;
}

/* The value of "key=" in a report line (0 when absent). */
static double field(const char *line, const char *key)
{
    char pat[40];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    return p != NULL ? strtod(p + strlen(pat), NULL) : 0;
}

/* Reads "<tag> INODE" lines up to "end" into the sets named by their tags. */
static int read_ledger(struct role *r, const char *tags, pkb_obsmap *sets, char *why, size_t cap)
{
    char line[128];
    int rc;
    while ((rc = next_line(r, line, sizeof line, why, cap)) == 0 && strcmp(line, "end") != 0) {
        const char *t = strchr(tags, line[0]);
        unsigned long long inode;
        if (t == NULL || sscanf(line + 1, " %llu", &inode) != 1) {
            snprintf(why, cap, "the workload's %s sent \"%.40s\"", r->name, line);
            return -EBADMSG;
        }
        if (pkb_obsmap_put(&sets[t - tags], inode) == NULL)
            return -ENOMEM;
    }
    return rc;
}

/* How many of `set` the observer saw; of those, how many with owner `pid`, and with another. */
static void join(const pkb_obsmap *set,
                 const pkb_obsmap *seen,
                 uint32_t pid,
                 uint64_t *nseen,
                 uint64_t *nattr,
                 uint64_t *nother)
{
    *nseen = *nattr = 0;
    if (nother != NULL)
        *nother = 0;
    for (size_t i = 0; i < set->cap; i++) {
        const pkb_obs_entry *e = set->keys[i] ? pkb_obsmap_get(seen, set->keys[i]) : NULL;
        if (e == NULL)
            continue;
        (*nseen)++;
        *nattr += e->pid == pid;
        if (nother != NULL)
            *nother += e->pid != 0 && e->pid != pid;
    }
}

static void tally(pkb_cell_result *res, pkb_obsmap *sets /* l, c, s */)
{
    pkb_obs_view *v = &res->view;
    join(&sets[1], &v->seen, (uint32_t)res->client_pid, &res->seen, &res->attributed,
         &res->misattributed);
    join(&sets[0], &v->seen, (uint32_t)res->client_pid, &res->long_seen, &res->long_attributed,
         NULL);
    join(&sets[2], &v->seen, (uint32_t)res->server_pid, &res->server_seen, &res->server_attributed,
         NULL);
    res->open_observed = 0;
    for (size_t i = 0; i < v->open.cap; i++)
        res->open_observed +=
            v->open.keys[i] != 0 && v->open.vals[i].pid == (uint32_t)res->client_pid;
}

/* The longest line of the workload's protocol we keep ("frozen churned=... cpu_ns=..."). */
enum { LINE_CAP = 512 };

/* A line of the workload's protocol that is not the one expected: why, and -EBADMSG. */
static int unexpected(const struct role *r, const char *line, char *why, size_t cap)
{
    snprintf(why, cap, "the workload's %s said \"%.60s\"", r->name, line);
    return -EBADMSG;
}

/* What the steps of one cell work on. */
struct cell {
    const pkb_cell_config *c;
    const pkb_observer *ob;
    void *state; /* the observer's, from its setup */
    struct role roles[2];
    pkb_cell_result *res;
    pkb_obsmap sets[3]; /* the ledgers: long-lived, churned (client); accepted (server) */
};

/* Step 3: the server listening, then the client ready with its long-lived connections. */
static int start_workload(struct cell *x, char *why, size_t cap)
{
    const pkb_cell_config *c = x->c;
    struct role *roles = x->roles;
    int64_t limit = c->duration_ms + 120000;
    char line[LINE_CAP], arg[5][32];
    int rc =
        start(&roles[0], (const char *const[]){c->churn_path, "server", NULL}, limit, why, cap);
    unsigned port = 0;
    if (rc == 0 && (rc = next_line(&roles[0], line, sizeof line, why, cap)) == 0 &&
        sscanf(line, "listening %u", &port) != 1)
        rc = unexpected(&roles[0], line, why, cap);
    if (rc != 0)
        return rc;
    snprintf(arg[0], sizeof arg[0], "%u", port);
    snprintf(arg[1], sizeof arg[1], "%d", c->long_lived);
    snprintf(arg[2], sizeof arg[2], "%.6g", c->rate);
    snprintf(arg[3], sizeof arg[3], "%d", c->duration_ms);
    snprintf(arg[4], sizeof arg[4], "%d", c->hold_ms);
    rc = start(&roles[1],
               (const char *const[]){c->churn_path, "client", arg[0], arg[1], arg[2], arg[3],
                                     arg[4], NULL},
               limit, why, cap);
    if (rc == 0 && (rc = next_line(&roles[1], line, sizeof line, why, cap)) == 0 &&
        strcmp(line, "ready") != 0)
        rc = unexpected(&roles[1], line, why, cap);
    if (rc != 0)
        return rc;
    x->res->server_pid = pk_process_pid(roles[0].proc);
    x->res->client_pid = pk_process_pid(roles[1].proc);
    return 0;
}

/* Steps 4 and 5: the observer watches from T0 until the client froze; once the server has caught
 * up (its pending accepts), its last look and its counters, with the CPU it took. The client's
 * "frozen" line is left in `line` (LINE_CAP bytes). */
static int watch(struct cell *x, char *line, char *why, size_t cap)
{
    struct role *roles = x->roles;
    pkb_cell_result *res = x->res;
    int64_t t0 = pkb_obs_now_ns() + 30000000;
    snprintf(line, LINE_CAP, "go %" PRId64 "\n", t0);
    int rc;
    if ((rc = tell(&roles[0], line, why, cap)) != 0 || (rc = tell(&roles[1], line, why, cap)) != 0)
        return rc;
    double u0, s0, u1, s1, cpu0 = thread_cpu_s();
    thread_rusage(&u0, &s0);
    int64_t w0 = pkb_obs_now_ns();
    if ((rc = x->ob->run(x->state, t0 + (int64_t)x->c->duration_ms * 1000000, &res->view, why,
                         cap)) != 0)
        return rc;
    if ((rc = next_line(&roles[1], line, LINE_CAP, why, cap)) != 0)
        return rc;
    if (strncmp(line, "frozen ", 7) != 0)
        return unexpected(&roles[1], line, why, cap);
    char ack[64];
    if ((rc = tell(&roles[0], "sync\n", why, cap)) != 0 ||
        (rc = next_line(&roles[0], ack, sizeof ack, why, cap)) != 0)
        return rc;
    if (strcmp(ack, "synced") != 0)
        return unexpected(&roles[0], ack, why, cap);
    if ((rc = x->ob->final(x->state, &res->view, why, cap)) != 0)
        return rc;
    res->cpu_s = thread_cpu_s() - cpu0;
    res->wall_s = (double)(pkb_obs_now_ns() - w0) / 1e9;
    thread_rusage(&u1, &s1);
    res->user_s = u1 - u0;
    res->sys_s = s1 - s0;
    x->ob->report(x->state, &res->view);
    return 0;
}

/* Steps 3 to 6 with the observer set up; the roles are finished by the caller. */
static int observe(struct cell *x, char *why, size_t cap)
{
    struct role *roles = x->roles;
    pkb_cell_result *res = x->res;
    char line[LINE_CAP];
    int rc = start_workload(x, why, cap);
    if (rc == 0)
        rc = watch(x, line, why, cap);
    if (rc != 0)
        return rc;
    res->churned = (uint64_t)field(line, "churned");
    res->failures = (uint64_t)field(line, "failures");
    res->open_truth = (uint64_t)field(line, "open");
    res->late_max_us = (int64_t)field(line, "late_max_us");
    res->late_1ms = (uint64_t)field(line, "late_1ms");
    res->client_cpu_s = field(line, "cpu_ns") / 1e9;
    res->long_lived = (uint64_t)x->c->long_lived;
    if ((rc = tell(&roles[0], "stop\n", why, cap)) != 0 ||
        (rc = next_line(&roles[0], line, sizeof line, why, cap)) != 0)
        return rc;
    res->server_cpu_s = field(line, "cpu_ns") / 1e9;
    res->accepted = (uint64_t)field(line, "accepted");
    if ((rc = read_ledger(&roles[0], "s", &x->sets[2], why, cap)) != 0)
        return rc;
    if ((rc = tell(&roles[1], "ledger\n", why, cap)) != 0)
        return rc;
    return read_ledger(&roles[1], "lc", x->sets, why, cap);
}

int pkb_cell_run(
    const pkb_cell_config *c, const pkb_observer *ob, pkb_cell_result *res, char *why, size_t cap)
{
    memset(res, 0, sizeof *res);
    why[0] = '\0';
    pkb_netns ns;
    int rc = pkb_netns_enter(&ns, why, cap);
    if (rc != 0)
        return rc;
    res->netns = ns.how;
    pkb_obs_options o = pkb_obs_defaults(&c->obs);
    o.netns_inode = ns.inode;
    struct cell x = {
        .c = c, .ob = ob, .res = res, .roles = {{"server", NULL, -1}, {"client", NULL, -1}}};
    double cpu0 = thread_cpu_s();
    rc = ob->setup(ob, &o, &x.state, why, cap);
    res->setup_cpu_s = thread_cpu_s() - cpu0;
    if (rc == 0)
        rc = observe(&x, why, cap);
    /* The client first: it closes first, as during the churn. */
    char later[256] = "";
    int end1 = finish(&x.roles[1], later, sizeof later);
    int end0 = finish(&x.roles[0], later, sizeof later);
    if (rc == 0 && (end1 != 0 || end0 != 0)) {
        snprintf(why, cap, "%s", later);
        rc = end1 != 0 ? end1 : end0;
    }
    if (x.state != NULL)
        ob->free(x.state);
    pkb_netns_leave(&ns);
    if (rc == 0)
        tally(res, x.sets);
    for (int i = 0; i < 3; i++)
        pkb_obsmap_free(&x.sets[i]);
    if (rc != 0)
        pkb_cell_result_free(res);
    return rc;
}

void pkb_cell_result_free(pkb_cell_result *res)
{
    pkb_obs_view_free(&res->view);
}
