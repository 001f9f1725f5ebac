/*
 * Containment: nothing a run starts outlives it (processkit.md §5, behaviours 1–4, 15, 17, 18).
 * Liveness is read from /proc, not from the library.
 */
#define _GNU_SOURCE
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pids a helper printed, one per line. */
static int read_pids(const char *text, int *pids, int cap)
{
    int n = 0;
    for (const char *p = text; p != NULL && *p && n < cap; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (*p >= '0' && *p <= '9')
            pids[n++] = atoi(p);
    }
    return n;
}

/* The children of pid, from /proc/<pid>/task/<pid>/children. */
static int children_of(int pid, int *pids, int cap)
{
    char path[96], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    int k = 0;
    for (char *p = buf; *p && k < cap;) {
        pids[k++] = (int)strtol(p, &p, 10);
        while (*p == ' ')
            p++;
    }
    return k;
}

TEST_IMPL(group_close_kills_whole_tree)
{
    /* Behaviour 1: sh -c 'sleep 1000 & sleep 1000' — both sleeps gone when close returns (it
     * waits for the tree). How fast is a benchmark's question, not a unit test's: the bound
     * below only guards against a hang, and the time is printed. */
    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    const char *const argv[] = {"sh", "-c", "sleep 1000 & sleep 1000", NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .group = g}, &p, NULL));
    int kids[8], n = 0;
    for (int i = 0; i < 500 && n < 2; i++) {
        usleep(2000);
        n = children_of(pk_process_pid(p), kids, 8);
    }
    ASSERT_EQ(n, 2);
    int64_t t0 = pk_test_now_ms();
    pk_group_free(g);
    int64_t freed = pk_test_now_ms() - t0;
    ASSERT(pk_test_wait_dead(kids[0], 5000));
    ASSERT(pk_test_wait_dead(kids[1], 5000));
    printf("pk_group_free returned after %lld ms; both sleeps dead after %lld ms\n",
           (long long)freed, (long long)(pk_test_now_ms() - t0));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    pk_result_release(&r);
    pk_process_free(p);
}

TEST_IMPL(setsid_grandchild_dies_in_cgroup_mode)
{
    /* Behaviour 2: a double-forked, setsid grandchild is still in the cgroup and dies with it. */
    pk_test_need_cgroup();
    pk_group *g;
    ASSERT_OK(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_CGROUP}, &g));
    ASSERT_EQ(pk_group_mechanism(g), PK_CONTAIN_CGROUP);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("daemonize", "100000"), .group = g}, &r));
    ASSERT_EXITED(r, 0);
    int pid;
    ASSERT_EQ(read_pids(r.out.data, &pid, 1), 1);
    pk_result_release(&r);
    ASSERT(pk_test_pid_alive(pid)); /* a shared group keeps it until the group ends */
    size_t count = 0;
    int members[8];
    ASSERT_OK(pk_group_members(g, members, 8, &count));
    ASSERT_EQ(count, 1);
    ASSERT_EQ(members[0], pid);
    pk_group_free(g);
    ASSERT(pk_test_wait_dead(pid, 5000));
}

TEST_IMPL(one_shot_run_kills_escaped_grandchild)
{
    /* A one-shot run gets a private group: when the child exits, its daemon goes too. */
    pk_test_need_cgroup();
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("daemonize", "100000")}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
    int pid;
    ASSERT_EQ(read_pids(r.out.data, &pid, 1), 1);
    pk_result_release(&r);
    ASSERT(pk_test_wait_dead(pid, 5000));
}

TEST_IMPL(pgroup_fallback_reported_and_setsid_escapes)
{
    /* Behaviour 2, fallback half: the mechanism says process group, and its documented limit is
     * real: a setsid descendant escapes. */
    pk_group *g;
    ASSERT_OK(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_PGROUP}, &g));
    ASSERT_EQ(pk_group_mechanism(g), PK_CONTAIN_PGROUP);
    ASSERT_STR_EQ(pk_containment_name(pk_group_mechanism(g)), "pgroup");
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("daemonize", "3000"), .group = g}, &r));
    int escaped;
    ASSERT_EQ(read_pids(r.out.data, &escaped, 1), 1);
    pk_result_release(&r);
    /* A plain member of the group does die with it. */
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000"), .group = g}, &p, NULL));
    int member = pk_process_pid(p);
    pk_group_free(g);
    ASSERT(pk_test_wait_dead(member, 5000));
    ASSERT(pk_test_pid_alive(escaped));
    kill(escaped, SIGKILL); /* clean up what process groups cannot */
    pk_process_free(p);

    /* A one-shot run asked for pgroup reports it in its result. */
    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("exit", "0"), .containment = PK_CONTAIN_PGROUP}, &r));
    ASSERT_EQ(r.containment, PK_CONTAIN_PGROUP);
    pk_result_release(&r);
}

TEST_IMPL(group_kill_repeatable_and_reusable)
{
    /* Behaviour 3: kill_all repeats, the group stays usable; a non-escalating shutdown leaves it
     * kill-on-close. */
    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    for (int round = 0; round < 3; round++) {
        pk_process *p;
        ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000"), .group = g}, &p, NULL));
        ASSERT_OK(pk_group_kill(g));
        ASSERT_OK(pk_group_kill(g)); /* empty group: still fine */
        pk_result r;
        ASSERT_OK(pk_process_wait(p, &r));
        ASSERT_EQ(r.outcome.signo, SIGKILL);
        pk_result_release(&r);
        pk_process_free(p);
    }
    pk_process *stubborn, *later;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("ignore-term", "100000"), .group = g},
                       &stubborn, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(stubborn, &line)); /* "ready": TERM is ignored from now */
    ASSERT_EQ(pk_group_shutdown(g, 100, false), -ETIMEDOUT);
    ASSERT(pk_test_pid_alive(pk_process_pid(stubborn)));
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000"), .group = g}, &later, NULL));
    int a = pk_process_pid(stubborn), b = pk_process_pid(later);
    pk_group_free(g);
    ASSERT(pk_test_wait_dead(a, 5000));
    ASSERT(pk_test_wait_dead(b, 5000));
    pk_process_free(stubborn);
    pk_process_free(later);
}

/* The cgroup (as /proc/<pid>/cgroup names it) a child spawned into g is born in. */
static void born_in(pk_group *g, char *out, size_t cap)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("own-cgroup"), .group = g}, &r));
    ASSERT_EXITED(r, 0); /* not killed at birth */
    ASSERT(r.out.data != NULL);
    snprintf(out, cap, "%s", r.out.data);
    out[strcspn(out, "\n")] = '\0';
    pk_result_release(&r);
}

TEST_IMPL(killed_group_gets_a_fresh_leaf)
{
    /* After cgroup.kill the kernel kills children cloned into that leaf at birth; a shared group
     * then gets a fresh leaf at its next spawn (cloned into, not joined through cgroup.procs),
     * the killed one is removed, and the tree's CPU time is carried over. */
    pk_test_need_cgroup();
    pk_group *g;
    ASSERT_OK(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_CGROUP}, &g));
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("spin", "200"), .group = g}, &r));
    pk_result_release(&r);
    pk_group_stats before;
    ASSERT_OK(pk_group_stats_get(g, &before));
    ASSERT_GT(before.cpu_user_us + before.cpu_sys_us,
              30000); /* well above what the later runs add */

    char first[4096], second[4096], third[4096], dir[8192];
    born_in(g, first, sizeof first);
    ASSERT_OK(pk_group_kill(g));
    born_in(g, second, sizeof second);
    ASSERT(strcmp(first, second) != 0);
    snprintf(dir, sizeof dir, "%s/%s", pk_test_cgroup_dir(), strrchr(first, '/') + 1);
    struct stat st;
    ASSERT(stat(dir, &st) != 0 && errno == ENOENT); /* the killed leaf is gone */
    born_in(g, third, sizeof third);
    ASSERT_STR_EQ(third, second); /* no kill since: the leaf stays */

    pk_group_stats after;
    ASSERT_OK(pk_group_stats_get(g, &after));
    ASSERT_GE(after.cpu_user_us + after.cpu_sys_us, before.cpu_user_us + before.cpu_sys_us);
    pk_group_free(g);
}

TEST_IMPL(no_cgroup_dir_left_after_close)
{
    /* Behaviour 4: groups, one-shot runs and killed runs leave no directory; a process's pooled
     * leaves go when it exits. Counted by name in this process's cgroup directory. */
    pk_test_need_cgroup();
    /* Only this process's leaves: other test processes may share the cgroup directory. */
    char mine[32];
    snprintf(mine, sizeof mine, "pk-%d-", (int)getpid());
    int before = pk_test_count_leaves(mine);
    ASSERT_GE(before, 0);
    for (int i = 0; i < 5; i++) {
        pk_group *g;
        ASSERT_OK(pk_group_new(NULL, &g));
        pk_process *p;
        ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000"), .group = g}, &p, NULL));
        pk_group_free(g);
        pk_process_free(p);
    }
    ASSERT_EQ(pk_test_count_leaves(mine), before);

    /* One-shot runs in a child process: after it exits, none of its leaves remain. */
    char prefix[32];
    pk_process *p;
    const char *const argv[] = {pk_test_self(), "one_shot_run_kills_escaped_grandchild", NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    snprintf(prefix, sizeof prefix, "pk-%d-", pk_process_pid(p));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    pk_process_free(p);
    ASSERT_EQ(pk_test_count_leaves(prefix), 0);
    ASSERT_EQ(pk_test_count_leaves(mine), before);
}

TEST_IMPL(stale_leaves_of_dead_owner_removed)
{
    /* An owner killed with SIGKILL cannot clean up; the next user removes its leaves (and the
     * orphaned tree in them). */
    pk_test_need_cgroup();
    pk_process *owner;
    const char *const argv[] = {pk_test_self(), "--helper", "pdeathsig-owner", NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &owner, NULL));
    char stale[4200];
    snprintf(stale, sizeof stale, "%s/pk-%d-0123abcd-999", pk_test_cgroup_dir(),
             pk_process_pid(owner));
    /* Stands for a leaf the owner made and left behind: nobody holds its lock. */
    ASSERT_EQ(mkdir(stale, 0755), 0);
    pk_line line;
    ASSERT_OK(pk_process_read_line(owner, &line));
    ASSERT_OK(pk_process_signal(owner, SIGKILL));
    pk_result r;
    ASSERT_OK(pk_process_wait(owner, &r));
    pk_result_release(&r);
    pk_process_free(owner);
    /* This process's first leaf creation sweeps stale ones. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    pk_result_release(&r);
    struct stat st;
    ASSERT(stat(stale, &st) != 0);
}

TEST_IMPL(pdeathsig_kills_child_when_owner_dies)
{
    /* Behaviour 15: SIGKILL of the owner kills its direct child through PR_SET_PDEATHSIG (the
     * child has no group, so nothing else could kill it). */
    pk_process *owner;
    const char *const argv[] = {pk_test_self(), "--helper", "pdeathsig-owner", NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &owner, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(owner, &line));
    int child = atoi(line.data);
    ASSERT_GT(child, 0);
    ASSERT(pk_test_pid_alive(child));
    ASSERT_OK(pk_process_signal(owner, SIGKILL));
    pk_result r;
    ASSERT_OK(pk_process_wait(owner, &r));
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    pk_result_release(&r);
    pk_process_free(owner);
    ASSERT(pk_test_wait_dead(child, 5000));
}

static int64_t group_cpu_us(pk_group *g)
{
    pk_group_stats st;
    ASSERT_OK(pk_group_stats_get(g, &st));
    return st.cpu_user_us + st.cpu_sys_us;
}

/* Waits until the tree has used `us` more CPU than `from`: a loaded machine only makes this take
 * longer, so a fixed sleep followed by a threshold would be a speed claim. Fails after 20 s. */
static void await_cpu(pk_group *g, int64_t from, int64_t us, int line)
{
    int64_t t0 = pk_test_now_ms();
    while (group_cpu_us(g) - from < us) {
        if (pk_test_now_ms() - t0 > 20000)
            pk_test_fail(__FILE__, line, "the tree used %lld us of CPU in 20 s, expected %lld",
                         (long long)(group_cpu_us(g) - from), (long long)us);
        usleep(10 * 1000);
    }
}

TEST_IMPL(suspend_stops_cpu_resume_continues)
{
    /* Behaviour 17, measured by the kernel's own accounting of the tree (cgroup cpu.stat). */
    pk_test_need_cgroup();
    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("spin", "60000"), .group = g}, &p, NULL));
    await_cpu(g, 0, 10000, __LINE__);
    ASSERT_OK(pk_group_suspend(g));
    int64_t frozen = group_cpu_us(g);
    usleep(300 * 1000);
    ASSERT_LT(group_cpu_us(g) - frozen, 5000); /* frozen: load cannot add CPU time */
    ASSERT_OK(pk_group_resume(g));
    await_cpu(g, frozen, 50000, __LINE__);
    pk_group_stats st;
    ASSERT_OK(pk_group_stats_get(g, &st));
    ASSERT_EQ(st.processes, 1);
    ASSERT_GT(st.memory_bytes, 0);
    pk_group_free(g);
    pk_process_free(p);
}

TEST_IMPL(pgroup_suspend_resume)
{
    pk_group *g;
    ASSERT_OK(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_PGROUP}, &g));
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("spin", "60000"), .group = g}, &p, NULL));
    await_cpu(g, 0, 10000, __LINE__);
    ASSERT_OK(pk_group_suspend(g));
    usleep(50 * 1000);
    int64_t frozen = group_cpu_us(g);
    usleep(300 * 1000);
    ASSERT_LT(group_cpu_us(g) - frozen, 20000);
    ASSERT_OK(pk_group_resume(g));
    await_cpu(g, frozen, 50000, __LINE__);
    pk_group_free(g);
    pk_process_free(p);
}

TEST_IMPL(signal_tree_and_recycled_pid)
{
    /* Behaviour 18, second half: after the reap the handle refuses to signal, so a recycled pid
     * is never hit; tree signals reach every member. */
    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    const char *const argv[] = {"sh", "-c", "sleep 1000 & sleep 1000", NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .group = g}, &p, NULL));
    int kids[8], n = 0;
    for (int i = 0; i < 500 && n < 2; i++) {
        usleep(2000);
        n = children_of(pk_process_pid(p), kids, 8);
    }
    ASSERT_EQ(n, 2);
    ASSERT_OK(pk_process_signal_tree(p, SIGTERM));
    ASSERT(pk_test_wait_dead(kids[0], 5000));
    ASSERT(pk_test_wait_dead(kids[1], 5000));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    pk_result_release(&r);
    ASSERT_EQ(pk_process_signal(p, SIGKILL), -ESRCH);
    pk_group_free(g);
    pk_process_free(p);
}

TEST_IMPL(host_containment_prediction)
{
    /* Spawn-free prediction agrees with what a group actually gets. */
    pk_containment predicted = pk_host_containment();
    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    ASSERT_EQ(pk_group_mechanism(g), predicted);
    pk_group_free(g);
    ASSERT_EQ(pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_NONE}, &g), -EINVAL);
}

TEST_IMPL(cgroup_required_but_unavailable)
{
    /* In a child whose cgroup directory cannot be written, CGROUP is refused and AUTO falls back,
     * reporting process group. Made real by running the check as an unprivileged user. */
    if (geteuid() != 0)
        pk_test_skip_gate("root", "needs root to drop to an unprivileged user for the check");
    const char *const argv[] = {
        "setpriv",      "--reuid=65534", "--regid=65534",     "--clear-groups",
        pk_test_self(), "--helper",      "containment-probe", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "predict=pgroup cgroup=PK_ENOCONTAIN auto=pgroup\n");
    pk_result_release(&r);
}

/* Descriptors of ours whose target is `path`; with leaf_suffix, those whose target is `path` in a
 * leaf of ours (".../pk-<pid>-N" followed by `path`). */
static int fds_on(const char *path, bool leaf_suffix)
{
    char mine[32];
    snprintf(mine, sizeof mine, "/pk-%d-", (int)getpid());
    DIR *d = opendir("/proc/self/fd");
    ASSERT(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (!leaf_suffix) {
            n += strcmp(target, path) == 0;
            continue;
        }
        char *leaf = strstr(target, mine);
        size_t tl = strlen(target), sl = strlen(path);
        n += leaf != NULL && tl > sl && strcmp(target + tl - sl, path) == 0 &&
             strchr(leaf + 1, '/') == target + tl - sl;
    }
    closedir(d);
    return n;
}

TEST_IMPL(pooled_leaf_holds_procs_inodes)
{
    /* CLONE_INTO_CGROUP makes the kernel fetch the inodes of the leaf's cgroup.procs and of our
     * own cgroup's, and kernfs frees an inode nothing holds: the library keeps a descriptor on
     * each (measured in pk_floor as clone3_cgroup_cold_execve), and pk_cleanup lets them go with
     * the pool. A pooled leaf takes its pin at its second lend, with its holder: at its first,
     * opening the file would allocate the very inode the clone then finds (leaf.linux.c). */
    pk_test_need_cgroup();
    char own[PATH_MAX];
    snprintf(own, sizeof own, "%s/cgroup.procs", pk_test_cgroup_dir());
    pk_cleanup();
    int before = fds_on(own, false);
    ASSERT_EQ(fds_on("/cgroup.procs", true), 0);
    pk_result r;
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
        ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
        pk_result_release(&r);
        /* the pooled leaf's, one, kept from its second lend on */
        ASSERT_EQ(fds_on("/cgroup.procs", true), (i == 0 ? 0 : 1));
        ASSERT_EQ(fds_on(own, false), before + 1);
    }
    pk_cleanup();
    ASSERT_EQ(fds_on("/cgroup.procs", true), 0);
    ASSERT_EQ(fds_on(own, false), before);
}

TEST_IMPL(cleanup_releases_pool)
{
    /* One-shot runs borrow pooled leaves (descriptors kept open between runs); pk_cleanup()
     * closes them and removes the leaves, and the pool is rebuilt on demand. */
    pk_test_need_cgroup();
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", (int)getpid());
    pk_result r;
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
        ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
        pk_result_release(&r);
    }
    ASSERT_EQ(pk_test_count_leaves(prefix), 1); /* one leaf, reused three times */
    pk_cleanup();
    ASSERT_EQ(pk_test_count_leaves(prefix), 0);
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    pk_result_release(&r);
    ASSERT_EQ(pk_test_count_leaves(prefix), 1);
    /* A tree that had to be killed does not come back to the pool: the run borrowed the only
     * pooled leaf, and it is removed instead of returned. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("daemonize", "100000")}, &r));
    pk_result_release(&r);
    ASSERT_EQ(pk_test_count_leaves(prefix), 0);
}
