/*
 * Instances of the library side by side (lib/src/leaf.linux.c, guard.linux.c): no instance ever
 * touches a leaf it did not make, whatever it can see of its owner; a process whose pooled leaf is
 * taken from outside recovers on its next run; the death of an owner takes its trees with it; a
 * command that leaves its leaf is still signalled; a holder killed from outside is reaped. And the
 * phases suite's own leaves follow the same rule (phases/attribution/env.c).
 *
 * Ownership is a flock on the leaf's directory, held by its maker's descriptor: these tests hold
 * such a lock themselves on a leaf whose name points at a dead pid, and run a fresh pkrun beside
 * it (which sweeps stale leaves as it makes its first one).
 */
#define _GNU_SOURCE
#include "test.h"

#include "phases/attribution/phases.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

/* ---- helpers: views of the system ------------------------------------------------------------ */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A pid that belonged to a process of ours and is gone (reaped). */
static int dead_pid(void)
{
    pk_result r;
    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("exit", "0"), .containment = PK_CONTAIN_NONE}, &r));
    int pid = r.outcome.pid;
    pk_result_release(&r);
    ASSERT_GT(pid, 0);
    return pid;
}

/* Our processkit leaves ("pk-<pid>-..."): how many, and the path of the last one seen. */
static int leaves_of(int pid, char *last, size_t cap)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", pid);
    const char *base = pk_test_cgroup_dir();
    DIR *d = base != NULL ? opendir(base) : NULL;
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            n++;
            if (last != NULL)
                snprintf(last, cap, "%s/%s", base, e->d_name);
        }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Whether pid's leaves are all gone within ms. */
static bool leaves_gone(int pid, int ms)
{
    for (int waited = 0; waited <= ms; waited += 10, sleep_ms(10))
        if (leaves_of(pid, NULL, 0) == 0)
            return true;
    return false;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, text, strlen(text)), (long)strlen(text));
    close(fd);
}

/* Our children that are zombies (state Z, parent us). */
static int zombie_children(void)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        const char *p = strrchr(buf, ')');
        int ppid = 0;
        char state = 0;
        if (p != NULL && sscanf(p + 2, "%c %d", &state, &ppid) == 2 && ppid == getpid() &&
            state == 'Z')
            n++;
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Makes the leaf "<prefix><dead pid>-0123abcd-<n>" in our cgroup and takes its lock, as an owner
 * would: its path into leaf, the locked descriptor returned. A sweeper may take a fresh leaf before
 * we lock it (and remove it): then another n. */
static int locked_leaf(const char *prefix, char *leaf, size_t cap)
{
    int pid = dead_pid();
    for (int n = 1; n < 100; n++) {
        snprintf(leaf, cap, "%s/%s%d-0123abcd-%d", pk_test_cgroup_dir(), prefix, pid, n);
        if (mkdir(leaf, 0755) != 0)
            continue;
        int fd = open(leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat st;
            if (fstatat(fd, "cgroup.procs", &st, 0) == 0)
                return fd;
        }
        if (fd >= 0)
            close(fd);
    }
    pk_test_fail(__FILE__, __LINE__, "could not make and lock a leaf in %s", pk_test_cgroup_dir());
}

static void run_ok(pk_group *g)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0"), .group = g}, &r));
    ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
}

/* Runs pkrun with args (NULL-terminated), uncontained; its exit code (128 + N for a signal). */
static int pkrun(const char *const *args)
{
    const char *argv[16] = {PK_PKRUN_PATH};
    size_t n = 1;
    for (; args[n - 1] != NULL && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &r));
    int code = r.outcome.kind == PK_OUTCOME_EXITED ? r.outcome.code : 128 + r.outcome.signo;
    pk_result_release(&r);
    return code;
}

/* ---- helper programs ------------------------------------------------------------------------- */

/* The shell tree every owner starts: a background sleep and the shell waiting for it; both pids on
 * its stdout. */
static const char *const tree_sh[] = {"/bin/sh", "-c", "sleep 1000 & echo $!; echo $$; wait", NULL};

/* Starts tree_sh in group g (NULL: a private group from the pool) and says its two pids. */
static bool start_tree(pk_group *g, pk_process **p)
{
    if (pk_spawn(&(pk_command){.argv = tree_sh, .group = g}, p, NULL) != 0)
        return false;
    for (int i = 0; i < 2; i++) {
        pk_line line;
        if (pk_process_read_line(*p, &line) != 0)
            return false;
        dprintf(1, "%s\n", line.data);
    }
    return true;
}

/* The first child of ours named pk-guard (our guardian), or 0. */
static int our_guardian(void)
{
    char path[96], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", getpid(), getpid());
    FILE *f = fopen(path, "re");
    size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    for (char *p = buf; *p;) {
        int pid = (int)strtol(p, &p, 10);
        while (*p == ' ')
            p++;
        char comm[64], name[32] = "";
        snprintf(comm, sizeof comm, "/proc/%d/comm", pid);
        FILE *c = fopen(comm, "re");
        if (c != NULL && fgets(name, sizeof name, c) != NULL && strcmp(name, "pk-guard\n") == 0) {
            fclose(c);
            return pid;
        }
        if (c != NULL)
            fclose(c);
    }
    return 0;
}

/* tree-owner MODE: three trees of ours — in a pooled leaf lent for the first time, in a held
 * pooled leaf (lent a third time), in a shared group — their pids on stdout, then "ready", then
 * by MODE: `wait` sleeps until killed; `exec` execs sleep (dropping everything); `reguard` kills
 * its guardian after its first leaf, then waits as `wait` (the next leaf starts another). */
static int h_tree_owner(int argc, char **argv)
{
    pk_process *first, *held, *shared;
    pk_group *g;
    const char *mode = argc > 1 ? argv[1] : "wait";
    if (strcmp(mode, "reguard") == 0) {
        pk_result r;
        int rc = pk_run(&(pk_command){.program = "/bin/true"}, &r);
        pk_result_release(&r);
        int guardian = our_guardian();
        if (rc != 0 || guardian <= 0 || kill(guardian, SIGKILL) != 0)
            return 6;
    }
    if (!start_tree(NULL, &first))
        return 2;
    for (int i = 0; i < 2; i++) { /* a second leaf, lent twice: it has a holder now */
        pk_result r;
        int rc = pk_run(&(pk_command){.program = "/bin/true"}, &r);
        pk_result_release(&r);
        if (rc != 0)
            return 3;
    }
    if (!start_tree(NULL, &held) || pk_group_new(NULL, &g) != 0 || !start_tree(g, &shared))
        return 4;
    dprintf(1, "ready\n");
    if (strcmp(mode, "exec") == 0) {
        execl("/bin/sleep", "sleep", "1000", (char *)NULL);
        return 5;
    }
    sleep_ms(100000);
    return 0;
}

/* instance-loop SECONDS: for SECONDS, short contained runs of every kind (pooled, held, captured,
 * in a shared group, two at once), 10 ms apart, beside one long run that must still be running
 * at the end. Prints "runs=N bad=M long=ok|ended"; exits 0 when nothing was disturbed. */
static bool loop_step(long i)
{
    static const char *const echo[] = {"/bin/echo", "x", NULL};
    static const char *const yes[] = {"/bin/true", NULL};
    pk_result r;
    bool ok = true;
    if (i % 25 == 0) {
        pk_group *g = NULL;
        pk_process *p;
        ok = pk_group_new(NULL, &g) == 0 &&
             pk_spawn(&(pk_command){.argv = yes, .group = g}, &p, NULL) == 0;
        if (ok) {
            ok = pk_process_wait(p, &r) == 0 && r.outcome.kind == PK_OUTCOME_EXITED &&
                 r.outcome.code == 0;
            pk_result_release(&r);
            pk_process_free(p);
        }
        pk_group_free(g);
        return ok;
    }
    if (i % 10 == 0) {
        ok = pk_run(&(pk_command){.argv = echo}, &r) == 0 && r.outcome.kind == PK_OUTCOME_EXITED &&
             r.outcome.code == 0 && r.out.data != NULL && strcmp(r.out.data, "x\n") == 0;
        pk_result_release(&r);
        return ok;
    }
    if (i % 7 == 0) {
        pk_process *a = NULL, *b = NULL;
        ok = pk_spawn(&(pk_command){.argv = yes}, &a, NULL) == 0 &&
             pk_spawn(&(pk_command){.argv = yes}, &b, NULL) == 0;
        for (int k = 0; k < 2; k++) {
            pk_process *p = k == 0 ? a : b;
            if (p != NULL && pk_process_wait(p, &r) == 0)
                ok = ok && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
            else
                ok = false;
            pk_result_release(&r);
            pk_process_free(p);
        }
        return ok;
    }
    ok = pk_run(&(pk_command){.argv = yes}, &r) == 0 && r.outcome.kind == PK_OUTCOME_EXITED &&
         r.outcome.code == 0;
    if (!ok)
        dprintf(2, "instance-loop: run %ld: rc/outcome %s code %d signo %d stage %s error %s\n", i,
                pk_outcome_kind_name(r.outcome.kind), r.outcome.code, r.outcome.signo,
                pk_stage_name(r.outcome.stage), pk_errname(r.outcome.error));
    pk_result_release(&r);
    return ok;
}

static int h_instance_loop(int argc, char **argv)
{
    long secs = argc > 1 ? atol(argv[1]) : 10;
    static const char *const long_argv[] = {"/bin/sleep", "100000", NULL};
    pk_process *lng;
    if (pk_spawn(&(pk_command){.argv = long_argv}, &lng, NULL) != 0)
        return 2;
    int64_t end = pk_test_now_ms() + secs * 1000;
    long runs = 0, bad = 0;
    while (pk_test_now_ms() < end) {
        if (!loop_step(runs))
            bad++;
        runs++;
        sleep_ms(10);
    }
    size_t index;
    bool long_ok = pk_wait_any(&lng, 1, 0, &index) == -ETIMEDOUT; /* still running */
    pk_process_free(lng);
    dprintf(1, "runs=%ld bad=%ld long=%s\n", runs, bad, long_ok ? "ok" : "ended");
    return bad == 0 && long_ok ? 0 : 1;
}

int pk_test_instances_helper(int argc, char **argv); /* called by helpers.c */
int pk_test_instances_helper(int argc, char **argv)
{
    if (strcmp(argv[0], "tree-owner") == 0)
        return h_tree_owner(argc, argv);
    if (strcmp(argv[0], "instance-loop") == 0)
        return h_instance_loop(argc, argv);
    return -1;
}

/* ---- ownership ------------------------------------------------------------------------------- */

TEST_IMPL(leaf_locked_by_its_owner_is_never_swept)
{
    /* A leaf named after a dead pid, with a live process in it, whose lock we hold: a fresh pkrun
     * (which sweeps stale leaves at its first leaf) leaves it alone. Once the lock is let go the
     * leaf has no owner: the next pkrun kills what is in it and removes it. */
    pk_test_need_cgroup();
    char leaf[4200];
    int lock = locked_leaf("pk-", leaf, sizeof leaf);
    pk_process *sleeper;
    ASSERT_OK(
        pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000"), .containment = PK_CONTAIN_NONE},
                 &sleeper, NULL));
    char pid[16];
    snprintf(pid, sizeof pid, "%d", pk_process_pid(sleeper));
    write_file(leaf, "cgroup.procs", pid);

    ASSERT_EQ(pkrun((const char *const[]){"5", "/bin/true", NULL}), 0);
    struct stat st;
    ASSERT_EQ(stat(leaf, &st), 0);
    ASSERT(pk_test_pid_alive(pk_process_pid(sleeper)));

    close(lock);
    ASSERT_EQ(pkrun((const char *const[]){"5", "/bin/true", NULL}), 0);
    ASSERT(pk_test_wait_dead(pk_process_pid(sleeper), 3000));
    ASSERT(stat(leaf, &st) != 0 && errno == ENOENT);
    pk_process_free(sleeper);
}

TEST_IMPL(leaf_names_carry_a_tag)
{
    /* "pk-<pid>-<8 hex>-<n>": a pid alone is not unique across PID namespaces. Two processes
     * draw different tags. */
    pk_test_need_cgroup();
    pk_cleanup();
    run_ok(NULL);
    char leaf[4200];
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    const char *name = strrchr(leaf, '/') + 1;
    char tag[16] = "";
    unsigned long n = 0;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", getpid());
    ASSERT_EQ(strncmp(name, prefix, strlen(prefix)), 0);
    ASSERT_EQ(sscanf(name + strlen(prefix), "%8[0-9a-f]-%lu", tag, &n), 2);
    ASSERT_EQ(strlen(tag), 8);
    ASSERT_GT(n, 0);
    /* A child process's leaf, seen while it runs: another tag. */
    pk_process *p;
    const char *const argv[] = {PK_PKRUN_PATH, "5", "/bin/sh", "-c", "cat /proc/$$/cgroup", NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(r.out.data != NULL);
    char *other = strstr(r.out.data, "/pk-");
    ASSERT(other != NULL);
    ASSERT(strstr(other, tag) == NULL);
    pk_result_release(&r);
    pk_process_free(p);
}

TEST_IMPL(pid_namespaces_share_one_cgroup_undisturbed)
{
    /* Many instances under one delegated cgroup, in different PID namespaces, where none can see
     * the others' pids: a library process here and one in a namespace of its own, each looping
     * short runs of every kind beside a long run; a stream of pkruns in a third namespace, each
     * of which sweeps stale leaves when it starts; and an outer pkrun whose command runs the
     * whole time. Nothing is disturbed. PK_TEST_INSTANCES_S sets the length (default 60 s; 20 s
     * under ASan). An ASan build's pkrun runs without LeakSanitizer there: it reads
     * /proc/<pid>/task, and the /proc of a PID namespace without --mount-proc is the outer one's.
     */
    pk_test_need_cgroup();
    pk_test_need_root();
    pk_result r;
    const char *const probe[] = {"unshare", "--pid", "--fork", "/bin/true", NULL};
    if (pk_run(&(pk_command){.argv = probe, .containment = PK_CONTAIN_NONE}, &r) != 0 ||
        r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0)
        pk_test_skip("unshare --pid --fork does not work here");
    pk_result_release(&r);
    const char *env = getenv("PK_TEST_INSTANCES_S");
    /* A minute; 20 s under ASan, whose suite runs the same code beside the Debug suite's minute. */
    long secs = env != NULL && atol(env) > 0 ? atol(env) : PK_TEST_UNDER_ASAN ? 20 : 60;
    char s[24], outer_limit[24];
    snprintf(s, sizeof s, "%ld", secs);
    snprintf(outer_limit, sizeof outer_limit, "%ld", secs + 60);

    const char *const here[] = {pk_test_self(), "--helper", "instance-loop", s, NULL};
    const char *const there[] = {"unshare",  "--pid",         "--fork", pk_test_self(),
                                 "--helper", "instance-loop", s,        NULL};
    const char *const stream[] = {
        "unshare",
        "--pid",
        "--fork",
        "/bin/sh",
        "-c",
        "end=$(($(date +%s) + $1)); n=0; bad=0\n"
        "while [ \"$(date +%s)\" -lt \"$end\" ]; do\n"
        "  ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" \"$0\" 5 /bin/true ||\n"
        "    bad=$((bad + 1))\n"
        "  n=$((n + 1)); sleep 0.02\n"
        "done\n"
        "echo \"runs=$n bad=$bad\"; [ \"$bad\" -eq 0 ]",
        PK_PKRUN_PATH,
        s,
        NULL};
    const char *const outer[] = {PK_PKRUN_PATH, outer_limit, "/bin/sleep", s, NULL};
    const char *const *argvs[] = {here, there, stream, outer};
    const char *names[] = {"library here", "library in a namespace", "pkruns in a namespace",
                           "outer pkrun"};
    pk_process *p[4];
    for (int i = 0; i < 4; i++)
        ASSERT_OK(pk_spawn(&(pk_command){.argv = argvs[i],
                                         .containment = PK_CONTAIN_NONE,
                                         .err.kind = PK_STDIO_MERGE},
                           &p[i], NULL));
    int failed = 0;
    long stream_runs = 0;
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(pk_process_wait(p[i], &r));
        const char *out = r.out.data != NULL ? r.out.data : "";
        printf("# %s: %s %d %s\n", names[i], pk_outcome_kind_name(r.outcome.kind),
               r.outcome.kind == PK_OUTCOME_EXITED ? r.outcome.code : r.outcome.signo, out);
        if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0)
            failed++;
        if (i == 2 && strstr(out, "runs=") != NULL)
            stream_runs = atol(strstr(out, "runs=") + 5);
        pk_result_release(&r);
        pk_process_free(p[i]);
    }
    ASSERT_EQ(failed, 0);
    ASSERT_GE(stream_runs, secs); /* many sweeps happened */
}

/* ---- a leaf taken from outside ------------------------------------------------------------- */

TEST_IMPL(pooled_leaf_taken_from_outside_recovers)
{
    /* Someone removes or kills a leaf of ours between runs: the next run still runs, in a fresh
     * leaf, whether the leaf was removed (clone3 finds it gone) or killed (the kernel kills every
     * child cloned into it at birth), held or not, pooled or a shared group's. */
    pk_test_need_cgroup();
    pk_cleanup();
    char leaf[4200];

    run_ok(NULL); /* a pooled leaf, lent once: no holder, removable */
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    ASSERT_EQ(rmdir(leaf), 0);
    run_ok(NULL);

    run_ok(NULL); /* lent again: held */
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    write_file(leaf, "cgroup.kill", "1");
    run_ok(NULL);
    ASSERT_EQ(zombie_children(), 0); /* the killed holder was reaped */

    pk_cleanup(); /* killed, not removed, never held */
    run_ok(NULL);
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    write_file(leaf, "cgroup.kill", "1");
    run_ok(NULL);

    pk_cleanup(); /* a shared group's leaf, killed, then removed */
    pk_group *g;
    ASSERT_OK(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_CGROUP}, &g));
    run_ok(g);
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    write_file(leaf, "cgroup.kill", "1");
    run_ok(g);
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    ASSERT_EQ(rmdir(leaf), 0);
    run_ok(g);
    pk_group_free(g);
}

TEST_IMPL(holder_killed_from_outside_is_reaped)
{
    /* Pooled leaves held by holders, killed from outside while in the pool (not the one runs keep
     * taking): their holders die, and are reaped within a second or so of runs, never left as
     * zombies for the rest of the process's life. */
    pk_test_need_cgroup();
    pk_cleanup();
    for (int round = 0; round < 2; round++) { /* four leaves, lent twice: four holders */
        pk_process *p[4];
        for (int i = 0; i < 4; i++)
            ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "50")}, &p[i], NULL));
        for (int i = 0; i < 4; i++) {
            pk_result r;
            ASSERT_OK(pk_process_wait(p[i], &r));
            ASSERT_EXITED(r, 0);
            pk_result_release(&r);
            pk_process_free(p[i]);
        }
    }
    /* The leaf the next runs take (the pool's top), and the others killed. */
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("own-cgroup")}, &r));
    ASSERT_EXITED(r, 0);
    char top[256];
    snprintf(top, sizeof top, "%s", strrchr(r.out.data, '/') + 1);
    top[strcspn(top, "\n")] = '\0';
    pk_result_release(&r);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", getpid());
    DIR *d = opendir(pk_test_cgroup_dir());
    ASSERT(d != NULL);
    int killed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || strcmp(e->d_name, top) == 0)
            continue;
        char leaf[4200];
        snprintf(leaf, sizeof leaf, "%s/%s", pk_test_cgroup_dir(), e->d_name);
        write_file(leaf, "cgroup.kill", "1");
        killed++;
    }
    closedir(d);
    ASSERT_EQ(killed, 3);
    for (int waited = 0; zombie_children() < 3 && waited < 2000; waited += 10)
        sleep_ms(10);
    ASSERT_EQ(zombie_children(), 3); /* the holders died */
    sleep_ms(1100);
    run_ok(NULL);
    run_ok(NULL);
    ASSERT_EQ(zombie_children(), 0);
    ASSERT_EQ(leaves_of(getpid(), NULL, 0), 1); /* the killed leaves were dropped */
}

TEST_IMPL(leaf_with_cgroups_below_is_removed)
{
    /* A tree that uses processkit (or makes cgroups) itself leaves directories in our leaf; the
     * leaf still goes when the pool is released, the directories below it first. */
    pk_test_need_cgroup();
    pk_cleanup();
    const char *const argv[] = {
        "/bin/sh", "-c",
        "leaf=$(sed -n 's|^0::.*/||p' /proc/self/cgroup); mkdir \"$0/$leaf/below\"",
        pk_test_cgroup_dir(), NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    char leaf[4200], below[4300];
    ASSERT_EQ(leaves_of(getpid(), leaf, sizeof leaf), 1);
    snprintf(below, sizeof below, "%s/below", leaf);
    struct stat st;
    ASSERT_EQ(stat(below, &st), 0);
    pk_cleanup();
    ASSERT_EQ(leaves_of(getpid(), NULL, 0), 0);
}

/* ---- an owner's death ---------------------------------------------------------------------- */

TEST_IMPL(owner_death_takes_its_trees)
{
    /* An owner killed with SIGKILL, or one that execs, cleans up nothing itself: its trees (in a
     * pooled leaf lent once, a held one, a shared group's) die at once all the same, and its
     * leaves go. Without the guardian they ran on until some later process swept them. A
     * guardian killed itself is replaced with the next leaf. */
    pk_test_need_cgroup();
    static const char *const modes[] = {"wait", "exec", "reguard"};
    for (size_t m = 0; m < 3; m++) {
        pk_process *owner;
        const char *const argv[] = {pk_test_self(), "--helper", "tree-owner", modes[m], NULL};
        ASSERT_OK(
            pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &owner, NULL));
        int pids[6], n = 0;
        pk_line line;
        while (pk_process_read_line(owner, &line) == 0 && strcmp(line.data, "ready") != 0 && n < 6)
            pids[n++] = atoi(line.data);
        ASSERT_EQ(n, 6);
        int pid = pk_process_pid(owner);
        ASSERT_EQ(leaves_of(pid, NULL, 0), 3);
        if (m != 1) {
            ASSERT_OK(pk_process_signal(owner, SIGKILL));
        } else { /* until it is sleep */
            char path[64], comm[32] = "";
            snprintf(path, sizeof path, "/proc/%d/comm", pid);
            for (int waited = 0; strcmp(comm, "sleep\n") != 0 && waited < 3000; waited += 10) {
                sleep_ms(10);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t len = fd >= 0 ? read(fd, comm, sizeof comm - 1) : -1;
                comm[len > 0 ? len : 0] = '\0';
                if (fd >= 0)
                    close(fd);
            }
            ASSERT_STR_EQ(comm, "sleep\n");
        }
        for (int i = 0; i < 6; i++)
            ASSERT(pk_test_wait_dead(pids[i], 3000));
        ASSERT(leaves_gone(pid, 4000));
        pk_process_free(owner);
    }
}

TEST_IMPL(pkrun_killed_takes_its_tree)
{
    /* `pkrun 10 sh -c 'sleep & ...'`, then kill -9 of pkrun: the whole tree goes with it. */
    pk_test_need_cgroup();
    const char *const argv[] = {PK_PKRUN_PATH, "30", tree_sh[0], tree_sh[1], tree_sh[2], NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    int pids[2];
    for (int i = 0; i < 2; i++) {
        pk_line line;
        ASSERT_OK(pk_process_read_line(p, &line));
        pids[i] = atoi(line.data);
        ASSERT_GT(pids[i], 0);
    }
    ASSERT_OK(pk_process_signal(p, SIGKILL));
    for (int i = 0; i < 2; i++)
        ASSERT(pk_test_wait_dead(pids[i], 3000));
    ASSERT(leaves_gone(pk_process_pid(p), 4000));
    pk_process_free(p);
}

/* ---- a command that leaves its leaf -------------------------------------------------------- */

TEST_IMPL(command_leaving_its_leaf_is_still_signalled)
{
    /* As root a command can move itself out of its leaf (here into our own cgroup). The leaf's
     * cgroup.kill no longer reaches it, but the limit still does, through its pid: TERM at the
     * limit, KILL after the grace when TERM is ignored, KILL on close, and pkrun's -s KILL; the
     * outcome says the signal that ended it. */
    pk_test_need_cgroup();
    pk_test_need_root();
    char leave[4400], ignore[4500];
    snprintf(leave, sizeof leave, "echo $$ > %s/cgroup.procs && echo moved && exec sleep 10",
             pk_test_cgroup_dir());
    snprintf(ignore, sizeof ignore, "trap '' TERM; %s", leave);
    const char *const leaves[] = {"/bin/sh", "-c", leave, NULL};
    const char *const ignores[] = {"/bin/sh", "-c", ignore, NULL};

    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = leaves, .timeout_ms = 300, .grace_ms = 5000}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
    ASSERT_STR_EQ(r.out.data, "moved\n");
    ASSERT_LT(pk_test_now_ms() - t0, 4000);
    pk_result_release(&r);

    t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = ignores, .timeout_ms = 300, .grace_ms = 200}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    ASSERT_LT(pk_test_now_ms() - t0, 4000);
    pk_result_release(&r);

    /* Kill-on-close and pk_process_signal_tree reach it too; it really was outside its leaf. */
    for (int k = 0; k < 2; k++) {
        pk_process *p;
        ASSERT_OK(pk_spawn(&(pk_command){.argv = leaves}, &p, NULL));
        pk_line line;
        ASSERT_OK(pk_process_read_line(p, &line));
        ASSERT_STR_EQ(line.data, "moved");
        int pid = pk_process_pid(p);
        char path[64], cg[4400] = "";
        snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
        FILE *f = fopen(path, "re");
        ASSERT(f != NULL);
        while (fgets(cg, sizeof cg, f) != NULL && strncmp(cg, "0::", 3) != 0)
            ;
        fclose(f);
        ASSERT(strstr(cg, "/pk-") == NULL);
        t0 = pk_test_now_ms();
        if (k == 0) {
            pk_process_free(p);
        } else {
            ASSERT_OK(pk_process_signal_tree(p, SIGTERM));
            ASSERT_OK(pk_process_wait(p, &r));
            ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
            ASSERT_EQ(r.outcome.signo, SIGTERM);
            pk_result_release(&r);
            pk_process_free(p);
        }
        ASSERT(pk_test_wait_dead(pid, 2000));
        ASSERT_LT(pk_test_now_ms() - t0, 3000);
    }

    t0 = pk_test_now_ms();
    ASSERT_EQ(pkrun((const char *const[]){"-s", "KILL", "0.3", "/bin/sh", "-c", leave, NULL}), 137);
    ASSERT_LT(pk_test_now_ms() - t0, 4000);
}

/* ---- the phases suite's leaves ------------------------------------------------------------- */

TEST_IMPL(phases_leaf_locked_by_its_owner_is_kept)
{
    /* The phases suite sweeps its own stale leaves when its environment opens; one whose lock
     * someone holds is never removed, whatever pid its name carries; once let go it is. */
    pk_test_need_cgroup();
    char leaf[4200];
    int lock = locked_leaf("pkb-phases-", leaf, sizeof leaf);
    pkb_phases_env *env;
    ASSERT_OK(pkb_phases_env_open("/bin/true", &env));
    pkb_phases_env_close(env);
    struct stat st;
    ASSERT_EQ(stat(leaf, &st), 0);
    close(lock);
    ASSERT_OK(pkb_phases_env_open("/bin/true", &env));
    pkb_phases_env_close(env);
    ASSERT(stat(leaf, &st) != 0 && errno == ENOENT);
}
