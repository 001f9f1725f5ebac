/*
 * pkrun and signals: nothing that ends pkrun leaves the tree behind. Every catchable terminating
 * signal reaches the tree and pkrun ends by it as timeout does; SIGKILL of pkrun takes the command
 * with it; signals ignored at start are handled as timeout handles them (INT, QUIT, HUP, TERM,
 * ALRM caught, any other left ignored); SIGCHLD ignored by the parent changes nothing; a stopped
 * command still acts on the limit's signal; a terminal's Ctrl-C reaches the command once; a
 * command in its own process group can read the terminal.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

static const char *const containments[] = {"--containment=cgroup", "--containment=pgroup"};

/* Whether the containment option can run here (cgroup needs a delegated cgroup). */
static bool usable(const char *containment)
{
    return strcmp(containment, "--containment=cgroup") != 0 ||
           pk_host_containment() == PK_CONTAIN_CGROUP;
}

/* Starts argv (pkrun) uncontained by the test, so that signals go to pkrun itself, and returns
 * the number its command prints first (a pid). */
static pk_process *start(const char *const *argv, int *first_number)
{
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(p, &line));
    *first_number = atoi(line.data);
    ASSERT_GT(*first_number, 0);
    return p;
}

static int shell_status(const pk_result *r)
{
    return r->outcome.kind == PK_OUTCOME_SIGNALED ? 128 + r->outcome.signo : r->outcome.code;
}

/* Each signal sent to pkrun reaches the command (a shell that dies of it) and its background
 * child; pkrun then ends by the same signal, as timeout does. SIGALRM is the limit: 124. */
TEST_IMPL(pkrun_forwards_every_terminating_signal)
{
    /* A QUIT or XCPU death must not leave core files behind. */
    struct rlimit none = {0, 0};
    ASSERT_EQ(setrlimit(RLIMIT_CORE, &none), 0);
    const int sigs[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM, SIGUSR1,      SIGUSR2,
                        SIGPIPE, SIGXCPU, SIGVTALRM, SIGPROF, SIGRTMIN + 1, SIGALRM};
    for (size_t c = 0; c < 2; c++) {
        if (!usable(containments[c]))
            continue;
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            const char *const argv[] = {
                PK_PKRUN_PATH, containments[c], "--", "sh", "-c", "sleep 300 & echo $!; wait",
                NULL};
            int bg;
            pk_process *p = start(argv, &bg);
            ASSERT_OK(pk_process_signal(p, sigs[i]));
            pk_result r;
            ASSERT_OK(pk_process_wait(p, &r));
            int want = sigs[i] == SIGALRM ? 124 : 128 + sigs[i];
            if (shell_status(&r) != want)
                pk_test_fail(__FILE__, __LINE__, "%s, signal %d: status %d, not %d: %s",
                             containments[c], sigs[i], shell_status(&r), want,
                             r.err.data ? r.err.data : "");
            pk_result_release(&r);
            pk_process_free(p);
            bool dead = pk_test_wait_dead(bg, 3000);
            if (!dead)
                kill(bg, SIGKILL);
            if (!dead)
                pk_test_fail(__FILE__, __LINE__, "%s, signal %d: the background child lives",
                             containments[c], sigs[i]);
        }
    }
}

/* kill -9 of pkrun: the command dies with it (PR_SET_PDEATHSIG, on by default). */
TEST_IMPL(pkrun_kill9_leaves_no_direct_child)
{
    for (size_t c = 0; c < 2; c++) {
        if (!usable(containments[c]))
            continue;
        const char *const argv[] = {PK_PKRUN_PATH, containments[c],           "--", "sh",
                                    "-c",          "echo $$; exec sleep 300", NULL};
        int child;
        pk_process *p = start(argv, &child);
        ASSERT_OK(pk_process_signal(p, SIGKILL));
        pk_result r;
        ASSERT_OK(pk_process_wait(p, &r));
        pk_result_release(&r);
        pk_process_free(p);
        bool dead = pk_test_wait_dead(child, 3000);
        if (!dead)
            kill(child, SIGKILL);
        ASSERT(dead);
    }
}

/* Waits (up to 10 s) until `pid` sleeps: the tool has come back from fork and waits for its
 * command. timeout(1) of Debian 12 (coreutils 9.1) handles a HUP that arrives before fork has
 * returned in it by exiting without passing it on, and its command printed first: at load 14 the
 * command outlived a HUP sent to timeout right after it printed (9 of 40 times in a shell loop). */
static void await_sleeping(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    for (int64_t t0 = pk_test_now_ms(); pk_test_now_ms() - t0 < 10000; usleep(5000)) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *state = strrchr(buf, ')');
        if (state != NULL && state[1] == ' ' && state[2] == 'S')
            return;
    }
}

/* Signals ignored at start, as timeout has them: INT, QUIT, HUP, TERM and ALRM (and -s's) are
 * caught all the same, so the command gets them at their default and a HUP ends it even under
 * `trap '' HUP` (nohup); any other ignored signal (USR1) stays ignored, for pkrun and the
 * command. Side by side with timeout, which must do the same. */
TEST_IMPL(pkrun_ignored_signals_as_timeout)
{
    const char *const tools[] = {PK_PKRUN_PATH, "timeout"};
    for (int t = 0; t < 2; t++) {
        const char *const argv[] = {
            "sh", "-c", "trap '' HUP USR1; exec \"$@\"", "sh", tools[t], "300",
            "sh", "-c", "echo $$; exec sleep 300",       NULL};
        int child;
        pk_process *p = start(argv, &child);
        await_sleeping(pk_process_pid(p));
        uint64_t ign = pk_sigign_of(child);
        ASSERT_OK(pk_process_signal(p, SIGUSR1));
        usleep(300 * 1000);
        bool survived_usr1 = pk_test_pid_alive(child);
        ASSERT_OK(pk_process_signal(p, SIGHUP));
        pk_result r;
        ASSERT_OK(pk_process_wait(p, &r));
        pk_process_free(p);
        bool dead = pk_test_wait_dead(child, 5000);
        if (!dead)
            kill(child, SIGKILL);
        if ((ign & (1ULL << (SIGHUP - 1))) != 0 || (ign & (1ULL << (SIGUSR1 - 1))) == 0 ||
            !survived_usr1 || !dead || shell_status(&r) != 128 + SIGHUP)
            pk_test_fail(__FILE__, __LINE__,
                         "%s: SigIgn %llx (want USR1, not HUP); survived USR1 %d; ended by HUP %d, "
                         "status %d",
                         tools[t], (unsigned long long)ign, survived_usr1, dead, shell_status(&r));
        pk_result_release(&r);
    }
}

/* A background job of a non-interactive shell starts with INT and QUIT ignored; `kill -INT` must
 * still end `pkrun 3 sleep 2 &`: 130, as timeout gives. */
TEST_IMPL(pkrun_background_job_takes_sigint)
{
    const char *dir = pk_test_tmpdir();
    const char *const tools[] = {PK_PKRUN_PATH, "timeout"};
    for (int t = 0; t < 2; t++) {
        char ready[600];
        snprintf(ready, sizeof ready, "%s/ready", dir);
        unlink(ready);
        const char *const argv[] = {
            "sh", "-c",
            "\"$0\" 3 sh -c 'touch ready; exec sleep 2' & "
            "until [ -e ready ]; do sleep 0.01; done; kill -INT $!; wait $!; echo $?",
            tools[t], NULL};
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = argv, .cwd = dir, .timeout_ms = 30000}, &r));
        ASSERT_EXITED(r, 0);
        if (strcmp(r.out.data ? r.out.data : "", "130\n") != 0)
            pk_test_fail(__FILE__, __LINE__, "%s: the script printed '%s', not 130", tools[t],
                         r.out.data ? r.out.data : "");
        pk_result_release(&r);
    }
}

/* Runs argv with SIGCHLD ignored (fork, SIG_IGN, exec), its stdout into out; returns its exit
 * status. */
static int run_with_sigchld_ignored(const char *const *argv, char *out, size_t cap)
{
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        signal(SIGCHLD, SIG_IGN);
        dup2(p[1], 1);
        execv(argv[0], (char *const *)argv);
        _exit(120);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(p[0]);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static uint64_t sigign_in(const char *text)
{
    const char *line = strstr(text, "SigIgn:");
    ASSERT(line != NULL);
    return strtoull(line + 7, NULL, 16);
}

/* A parent that ignores SIGCHLD: pkrun still gets the real status (it failed with 125 "No child
 * processes"), and its command does not inherit SIGCHLD ignored. */
TEST_IMPL(pkrun_resets_sigchld)
{
    const uint64_t chld = 1ULL << (SIGCHLD - 1);
    char out[4096];
    const char *const status[] = {PK_PKRUN_PATH, "10", "/bin/sh", "-c", "exit 4", NULL};
    ASSERT_EQ(run_with_sigchld_ignored(status, out, sizeof out), 4);
    /* (grep itself: a shell in between would reset SIGCHLD for its own waits.) */
    const char *const argv[] = {PK_PKRUN_PATH,       "10", "/bin/grep", "SigIgn",
                                "/proc/self/status", NULL};
    ASSERT_EQ(run_with_sigchld_ignored(argv, out, sizeof out), 0);
    ASSERT_EQ(sigign_in(out) & chld, 0);
    /* The control: what the same parent starts directly inherits SIGCHLD ignored. */
    const char *const control[] = {"/bin/grep", "SigIgn", "/proc/self/status", NULL};
    ASSERT_EQ(run_with_sigchld_ignored(control, out, sizeof out), 0);
    ASSERT_NE(sigign_in(out) & chld, 0);
}

/* A stopped command acts on the limit's SIGTERM (SIGCONT follows it): 124 at the limit, not
 * SIGKILL after -k. */
TEST_IMPL(pkrun_stopped_command_gets_sigcont)
{
    const char *const argv[] = {PK_PKRUN_PATH, "-k", "5", "0.3", "sh", "-c", "kill -STOP $$", NULL};
    int64_t t0 = pk_test_now_ms();
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 124);
    ASSERT_LT(pk_test_now_ms() - t0, 2500);
    pk_result_release(&r);
}

/* Runs argv (pkrun) on a pty, waits for `ready`, types `keys` (none when NULL: nothing is
 * awaited before `want`), and returns what the terminal showed once `want` appeared (or the time
 * ran out), with the exit status in *status. */
static void on_terminal(
    const char *const *argv, const char *keys, const char *want, char *out, size_t cap, int *status)
{
    int master;
    pid_t pid = pk_run_on_pty(argv, &master);
    out[0] = '\0';
    bool ready = keys == NULL || pk_pty_wait_for(master, "ready", out, cap, 10000);
    if (ready && keys != NULL)
        ASSERT_EQ(write(master, keys, strlen(keys)), (ssize_t)strlen(keys));
    bool seen = ready && pk_pty_wait_for(master, want, out, cap, 10000);
    if (!seen)
        pk_kill_session(pid);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    close(master);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (!seen)
        pk_test_fail(__FILE__, __LINE__, "'%s' never appeared on the terminal:\n%s", want, out);
}

/* The process group a process is in, from /proc/<pid>/stat (its fifth field). */
static int pgrp_of(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    char state;
    int ppid, pgrp;
    return p != NULL && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 ? pgrp : -1;
}

/* new_pgroup: the child leads a process group of its own with any containment (a cgroup, or
 * none), so its `kill 0` cannot reach the caller's group; without it, a cgroup or no containment
 * leaves the child in the caller's group. */
TEST_IMPL(new_pgroup_child_leads_its_own_group)
{
    const pk_containment kinds[] = {PK_CONTAIN_CGROUP, PK_CONTAIN_NONE};
    for (size_t k = 0; k < 2; k++) {
        if (kinds[k] == PK_CONTAIN_CGROUP && pk_host_containment() != PK_CONTAIN_CGROUP)
            continue;
        for (int want = 1; want >= 0; want--) {
            pk_process *p;
            const char *const argv[] = {"sleep", "5", NULL};
            ASSERT_OK(pk_spawn(
                &(pk_command){.argv = argv, .containment = kinds[k], .new_pgroup = want != 0}, &p,
                NULL));
            int pid = pk_process_pid(p), pgrp = pgrp_of(pid);
            pk_process_free(p);
            if (pgrp != (want ? pid : (int)getpgrp()))
                pk_test_fail(__FILE__, __LINE__, "%s, new_pgroup=%d: pid %d is in group %d",
                             pk_containment_name(kinds[k]), want, pid, pgrp);
        }
    }
}

/* take_terminal: a child leading a new process group is the terminal's foreground from its
 * first instruction, because it took the terminal before exec; without the option nobody gives it
 * the terminal (the helper does not), which shows the probe can tell. */
TEST_IMPL(take_terminal_child_starts_in_foreground)
{
    for (int want = 1; want >= 0; want--) {
        const char *const argv[] = {pk_test_self(), "--helper", "take-terminal", want ? "1" : "0",
                                    NULL};
        char out[4096];
        int status;
        on_terminal(argv, NULL, "done", out, sizeof out, &status);
        const char *expect = want ? "rc=0 fg=1" : "rc=0 fg=0";
        if (strstr(out, expect) == NULL)
            pk_test_fail(__FILE__, __LINE__, "take_terminal=%d: expected '%s' in:\n%s", want,
                         expect, out);
    }
}

/* How many times pkrun said it sent SIGINT. */
static int ints_sent(const char *out)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, "sending signal INT")) != NULL; p++)
        n++;
    return n;
}

/* Ctrl-C on the terminal reaches the command once. With --foreground the command shares pkrun's
 * group, the terminal's foreground: the terminal sends it to both and pkrun sends none. Otherwise
 * the command leads a group of its own, and while pkrun's group has the terminal the terminal
 * sends it to pkrun, which passes it on, once; once the command has taken the terminal (it read
 * from it), the terminal sends it to the command's group and pkrun sends none. */
TEST_IMPL(pkrun_terminal_ctrl_c_reaches_command_once)
{
    const char *const opts[] = {"--containment=cgroup", "--containment=pgroup", "--foreground"};
    for (int i = 0; i < 3; i++) {
        if (!usable(opts[i]))
            continue;
        const char *const argv[] = {PK_PKRUN_PATH, "-v",           opts[i], "30", pk_test_self(),
                                    "--helper",    "count-sigint", "300",   NULL};
        char out[4096];
        int status;
        on_terminal(argv, "\003", "ints ", out, sizeof out, &status);
        /* Counted by the command, and (since two SIGINTs close together may merge into one)
         * pkrun's own word of what it sent. */
        if (strstr(out, "ints 1\r\n") == NULL || ints_sent(out) != (i < 2 ? 1 : 0))
            pk_test_fail(__FILE__, __LINE__, "%s: %s", opts[i], out);
        ASSERT_EQ(status, 0);
    }
    /* The command reads a line from the terminal first: it is handed the terminal then, and
     * the Ctrl-C after goes to it alone. */
    for (int i = 0; i < 2; i++) {
        if (!usable(opts[i]))
            continue;
        const char *const argv[] = {PK_PKRUN_PATH,
                                    "-v",
                                    opts[i],
                                    "30",
                                    "sh",
                                    "-c",
                                    "read x; exec \"$0\" --helper count-sigint 300",
                                    pk_test_self(),
                                    NULL};
        int master;
        pid_t pid = pk_run_on_pty(argv, &master);
        char out[4096] = "";
        ASSERT_EQ(write(master, "go\n", 3), 3);
        bool seen = pk_pty_wait_for(master, "ready", out, sizeof out, 10000);
        if (seen)
            ASSERT_EQ(write(master, "\003", 1), 1);
        size_t len = strlen(out);
        seen = seen && pk_pty_wait_for(master, "ints ", out + len, sizeof out - len, 10000);
        if (!seen)
            pk_kill_session(pid);
        int st;
        ASSERT_EQ(waitpid(pid, &st, 0), pid);
        close(master);
        if (!seen || strstr(out, "ints 1\r\n") == NULL || ints_sent(out) != 0)
            pk_test_fail(__FILE__, __LINE__, "%s, after a read: %s", opts[i], out);
    }
}

/* A pipeline's other members keep the terminal while the command does not need it: a reader of
 * /dev/tty after `pkrun ... |` (a pager) reads what is typed while the command runs, where a
 * terminal handed to the command at its start would have stopped it (SIGTTIN) and hung the
 * pipeline. */
TEST_IMPL(pkrun_pipeline_peer_keeps_the_terminal)
{
    const char *const argv[] = {"/bin/sh", "-c",
                                "\"$0\" 30 sh -c 'sleep 1.5; echo out' | "
                                "{ sleep 0.5; echo ready; read x </dev/tty; echo got:$x; cat; }",
                                PK_PKRUN_PATH, NULL};
    char out[4096];
    int status;
    on_terminal(argv, "hello\n", "out\r\n", out, sizeof out, &status);
    if (strstr(out, "got:hello") == NULL)
        pk_test_fail(__FILE__, __LINE__, "the pipeline's reader did not read: %s", out);
    ASSERT_EQ(status, 0);
}

/* In process-group mode the command leads a group of its own; pkrun hands it the terminal when it
 * reads from it, so the read does not stop it (SIGTTIN) and hang the run. */
TEST_IMPL(pkrun_pgroup_command_reads_terminal)
{
    const char *const argv[] = {
        PK_PKRUN_PATH, "--containment=pgroup", "30", "sh", "-c", "echo ready; read x; echo got:$x",
        NULL};
    char out[4096];
    int status;
    on_terminal(argv, "hello\n", "got:hello", out, sizeof out, &status);
    ASSERT_EQ(status, 0);
}

/* Job control in process-group mode, with bash as the shell: a background pkrun whose command
 * reads the terminal shows as Stopped, and `fg` lets it read; Ctrl-Z stops a foreground one, and
 * `fg` continues it. */
TEST_IMPL(pkrun_pgroup_job_control_with_bash)
{
    if (access("/bin/bash", X_OK) != 0)
        pk_test_skip_gate("package:bash",
                          "needs /bin/bash for an interactive shell with job control");
    const char *const argv[] = {"/bin/bash", "--norc", "--noprofile", "-i", NULL};
    int master;
    pid_t pid = pk_run_on_pty(argv, &master);
    char out[16384] = "", line[1024];
    const struct {
        const char *type, *want;
    } steps[] = {
        {"echo ready\n", "ready\r\n"},
        {"%s --containment=pgroup 30 sh -c 'read x; echo got:$x' &\n", "[1]"},
        {"jobs\n", "Stopped"},
        {"fg\n", "read x"},
        {"hello\n", "got:hello"},
        {"echo status=$?\n", "status=0"},
        {"%s --containment=pgroup 30 sh -c 'sleep 1; echo slept'\n", NULL},
        {"\032", "Stopped"},
        {"fg\n", "slept"},
        {"echo status=$?\n", "status=0\r\n"},
        {"exit\n", NULL},
    };
    bool ok = true;
    size_t i = 0;
    for (; i < sizeof steps / sizeof steps[0] && ok; i++) {
        snprintf(line, sizeof line, steps[i].type, PK_PKRUN_PATH);
        ASSERT_EQ(write(master, line, strlen(line)), (ssize_t)strlen(line));
        if (steps[i].want == NULL)
            usleep(500 * 1000); /* let the command start before the next keys */
        /* Each expected text after what was already seen. `jobs` says what is now: asked again
         * until the background job has stopped. */
        size_t seen = strlen(out);
        bool again = strcmp(line, "jobs\n") == 0;
        if (steps[i].want != NULL)
            ok = pk_pty_wait_for(master, steps[i].want, out + seen, sizeof out - seen,
                                 again ? 300 : 10000);
        for (int k = 0; again && !ok && k < 30; k++) {
            ASSERT_EQ(write(master, line, strlen(line)), (ssize_t)strlen(line));
            ok = pk_pty_wait_for(master, steps[i].want, out + seen, sizeof out - seen, 300);
        }
    }
    if (!ok)
        pk_kill_session(pid);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    close(master);
    if (!ok)
        pk_test_fail(__FILE__, __LINE__, "step %zu, the terminal showed:\n%s", i - 1, out);
}
