/*
 * pkrun — a tree-safe timeout(1): runs a command in a private group so that nothing it starts
 * outlives it, ends the whole tree at a time limit, and passes the command's bytes through
 * untouched.
 *
 * The run, in order: parse (args.c, which checks the --json path); give closed standard
 * descriptors a placeholder so nothing of pkrun's lands on 0..2; catch the terminating signals
 * (signals.posix.c); set up the relay only when an option needs the output (relay.posix.c), else
 * the command inherits pkrun's stdin, stdout and stderr; spawn it with processkit: its own
 * containment, a process group of its own unless --foreground (so its `kill 0` reaches neither
 * pkrun nor pkrun's caller, as timeout's own group does), every descriptor pkrun was given (a
 * drop-in must not close what its caller passed on: `<(...)`, `3>f`, make's jobserver; pkrun's
 * own are all close-on-exec), PR_SET_PDEATHSIG, and a shebang-less script run by /bin/sh as execvp
 * does; watch its terminal use and job control (tty.posix.c). Then one ppoll loop waits on the
 * command's pidfd, the signal self-pipe, the relay's descriptors and a timerfd armed at the next
 * deadline, an absolute time on PKR_CLOCK (stopping pkrun does not move a limit; a relative
 * timeout restarted after SIGCONT would):
 *   - a limit (DURATION, --idle-timeout, or SIGALRM, which means "time is up" as for timeout)
 *     sends -s's signal to the tree, then SIGCONT, and SIGKILL after -k when one is given;
 *   - a terminating signal pkrun receives goes to the tree the same way, except one the terminal
 *     sent that already reached the command in pkrun's own process group (--foreground);
 *   - the command's exit ends the run: processkit tears the group down and reaps, the relay
 *     delivers what is left (dropping what a stalled reader has not taken once a limit or a
 *     signal ended the run: pkrun exits on time, as timeout does).
 * As the first process of a PID namespace (a container's entrypoint) pkrun also reaps the orphans
 * the kernel hands it, as tini or dumb-init would.
 * Last, the terminal goes back, the JSON is written, and pkrun exits as timeout does: the
 * command's status; 124 after a limit (137 when SIGKILL was needed, the command's own with
 * --preserve-status); 125 when the outcome or the output could not be written; or, when the
 * command died of a signal, by that same signal.
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
#include <sys/timerfd.h>
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
    bool init;             /* pkrun is PID 1 of its namespace: it reaps the orphans */
    int timer;             /* a timerfd on PKR_CLOCK, armed at the next deadline; -1: none */
    int64_t armed_ns;      /* when it is armed for (absolute); 0: disarmed */
    int64_t deadline_ns;   /* the time limit, absolute; 0: none */
    int64_t kill_at_ns;    /* when SIGKILL follows the first signal; 0: not scheduled */
    bool kill_scheduled;   /* -k runs once, from the first signal, as with timeout */
    pk_outcome_kind limit; /* TIMED_OUT or IDLE_TIMED_OUT once a limit fired */
    int stop_signal;       /* the first terminating signal pkrun received */
    bool forwarded;        /* ... and sent to the tree (it was still running) */
};

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

/* -k: SIGKILL that long after the first signal, once (as timeout); none without -k, or with 0. */
static void schedule_kill(struct run *r)
{
    if (r->kill_scheduled || r->o.kill_after_ns == 0 || r->o.kill_after_ns >= PKR_NEVER_NS)
        return;
    r->kill_scheduled = true;
    r->kill_at_ns = pkr_now_ns() + r->o.kill_after_ns;
}

static void begin_ending(struct run *r, int signo)
{
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

/* As PID 1: reaps every child that exited but the command, whose status is processkit's to take
 * (a zombie the command left first hides the others until then: called again after its reap). */
static void reap_orphans(struct run *r)
{
    for (;;) {
        siginfo_t si = {0};
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
            return;
        if (!r->exited && r->proc != NULL && si.si_pid == pk_process_pid(r->proc))
            return;
        (void)waitpid(si.si_pid, NULL, WNOHANG);
    }
}

static void on_signal(struct run *r, struct pkr_signal s)
{
    if (s.signo == SIGCHLD) {
        pkr_tty_check_stop(&r->tty, r->pidfd);
        if (r->init)
            reap_orphans(r);
        return;
    }
    if (s.signo == SIGTSTP) { /* Ctrl-Z while pkrun's group has the terminal */
        if (!r->exited)
            pkr_tty_on_tstp(&r->tty); /* the command's stop then stops pkrun */
        else
            raise(SIGSTOP); /* delivering the last output: stopped as a job */
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

/* The next time something is due (absolute, PKR_CLOCK), 0 for nothing. */
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
    if (r->init)
        reap_orphans(r); /* those its zombie hid */
}

/* Arms the timerfd at `wake` (absolute; 0: nothing due). An alarm already set earlier stays: it
 * wakes the loop, which arms the next one then (the idle deadline moves with every chunk). */
static void arm_timer(struct run *r, int64_t wake, int64_t now)
{
    if (wake == r->armed_ns || (r->armed_ns != 0 && r->armed_ns > now && r->armed_ns < wake))
        return;
    struct itimerspec its = {0};
    if (wake != 0)
        its.it_value = (struct timespec){wake / 1000000000, wake % 1000000000};
    if (timerfd_settime(r->timer, TFD_TIMER_ABSTIME, &its, NULL) == 0)
        r->armed_ns = wake;
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
    int timer_slot = -1;
    if (r->timer >= 0) {
        timer_slot = n;
        pfd[n++] = (struct pollfd){r->timer, POLLIN, 0};
    }
    int relay_at = n;
    n += pkr_relay_poll_set(&r->relay, pfd + n, tags);

    struct timespec ts, *tsp = NULL;
    int64_t wake = next_wakeup(r), now = pkr_now_ns();
    if (r->timer >= 0) {
        arm_timer(r, wake, now);
    } else if (wake != 0) { /* no timerfd: a relative timeout, which a stop of pkrun delays */
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
    if (timer_slot >= 0 && pfd[timer_slot].revents != 0) {
        uint64_t expirations;
        (void)!read(r->timer, &expirations, sizeof expirations);
        r->armed_ns = 0;
    }
    /* Whatever woke the loop, the signals first: a handler runs before ppoll returns, but after
     * ppoll has filled in revents, so a SIGALRM sent to pkrun's group together with the command
     * (which it kills) is in the self-pipe while only the pidfd says so. Taken now, the limit
     * comes before the exit: 124, every time. */
    struct pkr_signal sigs[32];
    size_t ns = pkr_signals_take(sigs, 32);
    for (size_t i = 0; i < ns; i++)
        on_signal(r, sigs[i]);
    /* The relay first: what the command wrote before it exited is read before the exit. */
    pkr_relay_handle(&r->relay, pfd + relay_at, tags, n - relay_at);
    bool exited = pid_slot >= 0 ? pfd[pid_slot].revents != 0
                                : !r->exited && r->pidfd < 0 && exited_without_pidfd(r);
    if (exited)
        command_exited(r);
    on_timers(r, pkr_now_ns());
}

static void run_loop(struct run *r)
{
    for (;;) {
        /* A limit or a signal ended the run: what the reader is not taking now is dropped, so
         * that a stalled reader cannot hold pkrun past the limit (timeout exits on time too). */
        bool ended = r->stop_signal != 0 || r->limit != PK_OUTCOME_NONE;
        if (r->exited && ended && pkr_relay_stalled(&r->relay))
            pkr_relay_give_up(&r->relay);
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

/* The JSON outcome, with how each stream reached pkrun's output. 0, or -errno when it could not
 * be written (said on stderr): the outcome is lost, and pkrun's status must say so (125). */
static int write_json(struct run *r, pk_outcome_kind kind, int rc, int status)
{
    struct pkr_report rep = {
        .o = &r->o, .res = &r->res, .run_rc = rc, .kind = kind, .status = status};
    pkr_relay_report(&r->relay, rep.streams);
    return pkr_json_write(&rep);
}

/* While --json waits for a FIFO's reader, or for room in its output: whether a signal told pkrun
 * to stop (SIGCHLD only reaps, as PID 1; SIGALRM means a time that is over already). */
static bool told_to_stop(void *user)
{
    struct run *r = user;
    struct pkr_signal sigs[32];
    size_t n = pkr_signals_take(sigs, 32);
    for (size_t i = 0; i < n; i++) {
        if (sigs[i].signo == SIGCHLD && r->init)
            reap_orphans(r);
        else if (sigs[i].signo == SIGTSTP)
            raise(SIGSTOP); /* Ctrl-Z: stopped as a job, the wait goes on once continued */
        else if (sigs[i].signo != SIGCHLD && sigs[i].signo != SIGALRM)
            r->stop_signal = sigs[i].signo;
    }
    return r->stop_signal != 0;
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
    if (r->o.json != NULL && write_json(r, PK_OUTCOME_SPAWN_FAILED, rc, status) != 0)
        status = PKR_EXIT_OWN;
    pk_result_release(&r->res);
    return status;
}

/* Everything before the loop: the command line, placeholders for closed standard descriptors,
 * the signals, the timer, the relay, the spawn, the terminal and the deadline. Returns -1 once
 * the command runs, else the status pkrun exits with at once. */
static int start(struct run *r, int argc, char **argv)
{
    pkr_parse(argc, argv, &r->o);
    pkr_relay_reserve_std(&r->relay);
    int rc = pkr_signals_init(r->o.signo);
    pkr_output_interrupt(&(struct pkr_interrupt){pkr_signals_fd(), told_to_stop, r});
    /* Without one (a kernel before 3.15 has no CLOCK_BOOTTIME timerfd), relative timeouts. */
    r->timer = timerfd_create(PKR_CLOCK, TFD_CLOEXEC | TFD_NONBLOCK);
    r->init = getpid() == 1;
    if (r->init)
        pkr_signals_watch_children();
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
        /* What pkrun's caller gave it reaches the command, as with timeout; pkrun's own
         * descriptors (and processkit's) are all close-on-exec. */
        .inherit_fds = true,
        /* A group of its own, so that its `kill 0` reaches neither pkrun nor pkrun's caller;
         * --foreground keeps it in pkrun's, as timeout's does. */
        .new_pgroup = !r->o.foreground,
        /* It gets the terminal when it needs it, not before (tty.posix.c): the rest of pkrun's
         * group (a pager after it in a pipeline, make) keeps it meanwhile. */
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
    /* From the start, as timeout arms its timer before the fork: a stop of pkrun at any time
     * after this cannot move the limit. */
    if (r->o.timeout_ns != 0)
        r->deadline_ns = pkr_now_ns() + r->o.timeout_ns;
    rc = spawn(r, &cmd, &r->res);
    pkr_relay_spawned(&r->relay);
    if (rc != 0)
        return start_failed(r, rc);
    pkr_signals_after_spawn();
    r->pidfd = pk_process_pidfd(r->proc);
    r->same_pgrp = r->o.foreground;
    if (!r->same_pgrp)
        pkr_tty_start(&r->tty, pk_process_pid(r->proc), r->pidfd);
    else
        r->tty.fd = -1;
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
                "did not take them before %s ended the run\n",
                (unsigned long long)r->relay.dropped,
                r->limit != PK_OUTCOME_NONE ? "the limit" : "a signal");

    int die_by;
    int status = final_status(r, &die_by);
    if (r->o.keep == PK_KEEP_FAIL && over_fail_cap(r))
        status = PKR_EXIT_OWN, die_by = 0;
    pk_outcome_kind kind = r->limit != PK_OUTCOME_NONE ? r->limit
                           : r->forwarded              ? PK_OUTCOME_CANCELLED
                                                       : r->res.outcome.kind;
    if (r->o.verbose)
        pkr_say_end(&r->o, &r->res, kind, status);
    if (r->o.json != NULL && write_json(r, kind, r->wait_rc, status) != 0)
        status = PKR_EXIT_OWN, die_by = 0; /* the outcome is lost: that is what the status says */
    pk_result_release(&r->res);
    pk_process_free(r->proc);
    pkr_relay_release(&r->relay);
    pk_cleanup();
    if (r->init)
        reap_orphans(r);
    if (fflush(stdout) != 0 && status == 0)
        status = PKR_EXIT_OWN;
    if (die_by != 0)
        pkr_die_like(die_by);
    return status;
}

int main(int argc, char **argv)
{
    struct run r = {.pidfd = -1, .timer = -1};
    int status = start(&r, argc, argv);
    if (status >= 0)
        return status;
    run_loop(&r);
    return finish(&r);
}
