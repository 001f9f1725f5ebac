/*
 * pkrun — a tree-safe timeout(1): runs a command in a private group so that nothing it starts
 * outlives it, ends the whole tree at a time limit, and passes the command's bytes through
 * untouched.
 *
 * The run, in order: parse (args.c); give closed standard descriptors a placeholder so nothing of
 * pkrun's lands on 0..2; catch the terminating signals (signals.posix.c); check the --json path;
 * set up the relay only when an option needs the output (relay.posix.c), else the command inherits
 * pkrun's stdin, stdout and stderr; spawn it with processkit (its own group, PR_SET_PDEATHSIG, a
 * shebang-less script run by /bin/sh as execvp does); hand it the terminal if it leads its own
 * process group (tty.posix.c). Then one ppoll loop waits on the command's pidfd, the signal
 * self-pipe, the relay's descriptors and the next deadline:
 *   - a limit (DURATION, --idle-timeout, or SIGALRM, which means "time is up" as for timeout)
 *     sends -s's signal to the tree, then SIGCONT, and SIGKILL after -k;
 *   - a terminating signal pkrun receives goes to the tree the same way, except one the terminal
 *     sent that already reached the command in pkrun's own process group;
 *   - the command's exit ends the run: processkit tears the group down and reaps, the relay
 *     delivers what is left (dropping only what a stalled reader has not taken, after pkrun was
 *     told to stop).
 * Last, the terminal goes back, the JSON is written, and pkrun exits as timeout does: the
 * command's status; 124 after a limit (137 when SIGKILL was needed, the command's own with
 * --preserve-status); or, when the command died of a signal, by that same signal.
 */
#define _GNU_SOURCE
#include "args.h"
#include "output.h"
#include "relay.posix.h"
#include "signals.posix.h"
#include "tty.posix.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run {
    struct pkr_options o;
    struct pkr_relay relay;
    struct pkr_tty tty;
    pk_process *proc;
    int pidfd;
    bool exited; /* the command exited and processkit reaped it (into res) */
    pk_result res;
    int wait_rc;
    bool same_pgrp;        /* the command shares pkrun's process group (and its terminal signals) */
    int64_t deadline_ns;   /* the time limit, absolute; 0: none */
    int64_t kill_at_ns;    /* when SIGKILL follows the first signal; 0: not scheduled */
    bool kill_scheduled;   /* -k runs once, from the first signal, as with timeout */
    pk_outcome_kind limit; /* TIMED_OUT or IDLE_TIMED_OUT once a limit fired */
    int stop_signal;       /* the first terminating signal pkrun received */
    bool forwarded;        /* ... and sent to the tree (it was still running) */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- signals to the tree ------------------------------------------------------------------- */

static void send_tree(struct run *r, int signo)
{
    if (r->o.verbose) {
        char name[16];
        fprintf(stderr, "pkrun: sending signal %s to command '%s'\n", pkr_signal_name(signo, name),
                r->o.argv[0]);
    }
    if (signo != 0)
        (void)pk_process_signal_tree(r->proc, signo);
    /* A stopped process acts on the signal only once continued. */
    if (signo != 0 && signo != SIGKILL && signo != SIGCONT)
        (void)pk_process_signal_tree(r->proc, SIGCONT);
}

static void schedule_kill(struct run *r)
{
    if (r->kill_scheduled)
        return;
    r->kill_scheduled = true;
    r->kill_at_ns = now_ns() + r->o.kill_after_ns;
}

/* The first signal of an ending: with -k 0, SIGKILL straight away (not the signal, then a
 * SIGKILL racing it, which would make the exit status a matter of luck). */
static void begin_ending(struct run *r, int signo)
{
    if (r->o.kill_after_ns == 0 && !r->kill_scheduled) {
        r->kill_scheduled = true;
        send_tree(r, SIGKILL);
        return;
    }
    send_tree(r, signo);
    if (signo != SIGKILL)
        schedule_kill(r);
}

static void fire_limit(struct run *r, pk_outcome_kind kind)
{
    if (r->limit != PK_OUTCOME_NONE || r->exited)
        return;
    r->limit = kind;
    begin_ending(r, r->o.signo);
}

static void on_signal(struct run *r, struct pkr_signal s)
{
    if (s.signo == SIGCHLD) {
        pkr_tty_check_stop(&r->tty, r->pidfd);
        return;
    }
    if (r->exited) {
        /* Told to stop while delivering the last output: stop waiting for the reader. */
        if (r->stop_signal == 0 && s.signo != SIGALRM)
            r->stop_signal = s.signo;
        return;
    }
    if (s.signo == SIGALRM) {
        fire_limit(r, PK_OUTCOME_TIMED_OUT); /* timeout's meaning: the time is up now */
        return;
    }
    if (s.from_kernel && r->same_pgrp)
        return; /* the terminal sent it to its foreground group: the command has it already */
    if (r->stop_signal == 0)
        r->stop_signal = s.signo;
    r->forwarded = true;
    begin_ending(r, s.signo);
}

static void on_timers(struct run *r, int64_t now)
{
    if (r->exited)
        return;
    if (r->deadline_ns != 0 && now >= r->deadline_ns)
        fire_limit(r, PK_OUTCOME_TIMED_OUT);
    if (r->o.idle_ns != 0 && !pkr_relay_stalled(&r->relay) &&
        now >= r->relay.last_io_ns + r->o.idle_ns)
        fire_limit(r, PK_OUTCOME_IDLE_TIMED_OUT);
    if (r->kill_at_ns != 0 && now >= r->kill_at_ns) {
        r->kill_at_ns = 0;
        send_tree(r, SIGKILL);
    }
}

static int64_t next_wakeup(const struct run *r)
{
    if (r->exited)
        return 0;
    int64_t t = r->kill_at_ns;
    if (r->limit == PK_OUTCOME_NONE) {
        if (r->deadline_ns != 0 && (t == 0 || r->deadline_ns < t))
            t = r->deadline_ns;
        int64_t idle = r->relay.last_io_ns + r->o.idle_ns;
        if (r->o.idle_ns != 0 && !pkr_relay_stalled(&r->relay) && (t == 0 || idle < t))
            t = idle;
    }
    return t;
}

/* ---- the loop ------------------------------------------------------------------------------ */

static void command_exited(struct run *r)
{
    r->wait_rc = pk_process_wait(r->proc, &r->res); /* tears the group down, then reaps */
    r->exited = true;
    r->relay.draining = true;
}

/* Without a pidfd (kernels before 5.3) the exit is looked for at every wake-up. */
static bool exited_without_pidfd(const struct run *r)
{
    siginfo_t si = {0};
    return waitid(P_PID, (id_t)pk_process_pid(r->proc), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid != 0;
}

static void wait_once(struct run *r)
{
    struct pollfd pfd[8];
    int tags[8];
    int n = 0;
    pfd[n++] = (struct pollfd){pkr_signals_fd(), POLLIN, 0};
    int pid_slot = -1;
    if (!r->exited && r->pidfd >= 0) {
        pid_slot = n;
        pfd[n++] = (struct pollfd){r->pidfd, POLLIN, 0};
    }
    int relay_at = n;
    n += pkr_relay_poll_set(&r->relay, pfd + n, tags);

    struct timespec ts, *tsp = NULL;
    int64_t wake = next_wakeup(r), now = now_ns();
    if (wake != 0) {
        int64_t left = wake > now ? wake - now : 0;
        ts = (struct timespec){left / 1000000000, left % 1000000000};
        tsp = &ts;
    }
    if (!r->exited && r->pidfd < 0 && (tsp == NULL || ts.tv_sec > 0 || ts.tv_nsec > 10000000)) {
        ts = (struct timespec){0, 10000000};
        tsp = &ts;
    }
    if (ppoll(pfd, (nfds_t)n, tsp, NULL) < 0 && errno != EINTR) {
        fprintf(stderr, "pkrun: ppoll: %s\n", strerror(errno));
        exit(PKR_EXIT_OWN); /* the command dies with pkrun (PR_SET_PDEATHSIG) */
    }
    struct pkr_signal sigs[32];
    size_t ns = pfd[0].revents != 0 ? pkr_signals_take(sigs, 32) : 0;
    for (size_t i = 0; i < ns; i++)
        on_signal(r, sigs[i]);
    /* The relay first: what the command wrote before it exited is read before the exit. */
    pkr_relay_handle(&r->relay, pfd + relay_at, tags, n - relay_at);
    bool exited = pid_slot >= 0 ? pfd[pid_slot].revents != 0
                                : !r->exited && r->pidfd < 0 && exited_without_pidfd(r);
    if (exited)
        command_exited(r);
    on_timers(r, now_ns());
}

static void run_loop(struct run *r)
{
    for (;;) {
        if (r->exited && r->stop_signal != 0 && pkr_relay_stalled(&r->relay))
            pkr_relay_give_up(&r->relay); /* told to stop: the reader is not taking more */
        if (r->exited && pkr_relay_done(&r->relay))
            return;
        if (r->exited)
            pkr_relay_handle(&r->relay, NULL, NULL, 0); /* drain what is buffered */
        if (r->exited && pkr_relay_done(&r->relay))
            return;
        wait_once(r);
    }
}

/* ---- the start ----------------------------------------------------------------------------- */

/* Starts the command; a file without a #! line (ENOEXEC) is run by /bin/sh, as execvp (and so
 * timeout) does. */
static int spawn(struct run *r, pk_command *cmd, pk_result *failure)
{
    int rc = pk_spawn(cmd, &r->proc, failure);
    if (rc != -ENOEXEC || failure->outcome.stage != PK_STAGE_EXEC)
        return rc;
    char *path = NULL;
    if (pk_resolve_program(r->o.argv[0], NULL, &path, NULL) != 0)
        return rc;
    size_t n = 0;
    while (r->o.argv[n] != NULL)
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    if (argv != NULL) {
        argv[0] = "/bin/sh";
        argv[1] = path;
        for (size_t i = 1; i < n; i++)
            argv[i + 1] = r->o.argv[i];
        pk_command sh = *cmd;
        sh.program = "/bin/sh";
        sh.argv = argv;
        pk_result_release(failure);
        rc = pk_spawn(&sh, &r->proc, failure);
        free(argv);
    }
    free(path);
    return rc;
}

/* The containment to ask for: --foreground keeps the command in pkrun's process group, so it may
 * be a cgroup (the whole tree still ends) or, without one, only the command itself. */
static pk_containment containment_for(const struct pkr_options *o)
{
    if (!o->foreground || o->containment != PK_CONTAIN_AUTO)
        return o->containment;
    return pk_host_containment() == PK_CONTAIN_CGROUP ? PK_CONTAIN_CGROUP : PK_CONTAIN_NONE;
}

/* ---- the end ------------------------------------------------------------------------------- */

/* pkrun's exit status (128 + N when it must end by signal N: *die_by then says N). */
static int final_status(const struct run *r, int *die_by)
{
    const pk_outcome *oc = &r->res.outcome;
    *die_by = 0;
    if (oc->kind != PK_OUTCOME_EXITED && oc->kind != PK_OUTCOME_SIGNALED) {
        fprintf(stderr, "pkrun: waiting for '%s' failed: %s\n", r->o.argv[0],
                pk_strerror(r->wait_rc));
        return PKR_EXIT_OWN;
    }
    if (oc->core_dumped)
        fprintf(stderr, "pkrun: the command dumped core\n");
    int own = oc->kind == PK_OUTCOME_SIGNALED ? 128 + oc->signo : oc->code;
    if (pkr_relay_error(&r->relay) != 0)
        return PKR_EXIT_OWN; /* its output could not be delivered (said when it happened) */
    if (r->limit != PK_OUTCOME_NONE) {
        if (r->o.preserve_status)
            return own;
        return oc->signo == SIGKILL ? 128 + SIGKILL : PKR_EXIT_TIMEOUT;
    }
    if (oc->kind == PK_OUTCOME_SIGNALED)
        *die_by = oc->signo;
    return own;
}

/* The JSON outcome, with how each stream reached pkrun's output. */
static void write_json(struct run *r, pk_outcome_kind kind, int rc, int status)
{
    struct pkr_report rep = {
        .o = &r->o, .res = &r->res, .run_rc = rc, .kind = kind, .status = status};
    pkr_relay_report(&r->relay, rep.streams);
    pkr_json_write(&rep);
}

/* --keep fail: the output did not fit. */
static bool over_fail_cap(struct run *r)
{
    struct pkr_stream_report streams[2];
    pkr_relay_report(&r->relay, streams);
    return pkr_over_fail_cap(streams);
}

/* The command did not start: said on stderr (and for --verbose and --json); returns the status
 * timeout would give. */
static int start_failed(struct run *r, int rc)
{
    int status = pkr_start_failed(&r->o, rc, &r->res);
    if (r->o.verbose)
        pkr_say_end(&r->o, &r->res, PK_OUTCOME_SPAWN_FAILED, status);
    if (r->o.json != NULL)
        write_json(r, PK_OUTCOME_SPAWN_FAILED, rc, status);
    pk_result_release(&r->res);
    return status;
}

/* Everything before the loop: the command line, placeholders for closed standard descriptors,
 * the signals, the relay, the spawn, the terminal and the deadline. Returns -1 once the command
 * runs, else the status pkrun exits with at once. */
static int start(struct run *r, int argc, char **argv)
{
    pkr_parse(argc, argv, &r->o);
    pkr_relay_reserve_std(&r->relay);
    int rc = pkr_signals_init();
    if (rc == 0 && r->o.json != NULL && strcmp(r->o.json, "-") == 0 && r->relay.closed[1]) {
        fprintf(stderr, "pkrun: --json -: pkrun's stdout is closed\n");
        return PKR_EXIT_OWN;
    }
    if (r->o.argv[0][0] == '\0') {
        fprintf(stderr, "pkrun: '': %s\n", strerror(ENOENT)); /* as execvp("") */
        return PKR_EXIT_NOTFOUND;
    }
    pk_command cmd = {
        .argv = (const char *const *)r->o.argv,
        .containment = containment_for(&r->o),
        .pdeathsig = SIGKILL,
        /* In process-group mode the command's group takes the terminal before it runs, so no
         * Ctrl-C typed after its first output can reach pkrun instead (tty.posix.c). */
        .take_terminal = true,
    };
    bool relay = pkr_output_needed(&r->o);
    if (rc == 0)
        rc = pkr_relay_prepare(&r->relay, relay, &r->o, &cmd);
    if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
        return PKR_EXIT_OWN;
    }
    if (r->o.verbose)
        pkr_say_start(&r->o, r->relay.active, r->relay.merged);
    rc = spawn(r, &cmd, &r->res);
    pkr_relay_spawned(&r->relay);
    if (rc != 0)
        return start_failed(r, rc);
    pkr_signals_after_spawn();
    r->pidfd = pk_process_pidfd(r->proc);
    pk_containment got = pk_process_containment(r->proc);
    r->same_pgrp = got != PK_CONTAIN_PGROUP;
    if (got == PK_CONTAIN_PGROUP)
        pkr_tty_start(&r->tty, pk_process_pid(r->proc), r->pidfd);
    else
        r->tty.fd = -1;
    if (r->o.timeout_ns != 0)
        r->deadline_ns = now_ns() + r->o.timeout_ns;
    return -1;
}

/* Everything after the loop: the terminal back, what was not delivered, the status, --verbose
 * and --json, the release. Returns pkrun's exit status, or ends pkrun by the command's signal. */
static int finish(struct run *r)
{
    pkr_tty_restore(&r->tty);
    if (r->relay.dropped > 0)
        fprintf(stderr,
                "pkrun: %llu bytes of the command's output were not delivered: the reader "
                "did not take them before pkrun was told to stop\n",
                (unsigned long long)r->relay.dropped);

    int die_by;
    int status = final_status(r, &die_by);
    if (r->o.keep == PK_KEEP_FAIL && over_fail_cap(r))
        status = PKR_EXIT_OWN, die_by = 0;
    pk_outcome_kind kind = r->limit != PK_OUTCOME_NONE ? r->limit
                           : r->forwarded              ? PK_OUTCOME_CANCELLED
                                                       : r->res.outcome.kind;
    if (r->o.verbose)
        pkr_say_end(&r->o, &r->res, kind, status);
    if (r->o.json != NULL)
        write_json(r, kind, r->wait_rc, status);
    pk_result_release(&r->res);
    pk_process_free(r->proc);
    pkr_relay_release(&r->relay);
    pk_cleanup();
    if (fflush(stdout) != 0 && status == 0)
        status = PKR_EXIT_OWN;
    if (die_by != 0)
        pkr_die_like(die_by);
    return status;
}

int main(int argc, char **argv)
{
    struct run r = {.pidfd = -1};
    int status = start(&r, argc, argv);
    if (status >= 0)
        return status;
    run_loop(&r);
    return finish(&r);
}
