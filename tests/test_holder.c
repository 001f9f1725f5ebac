/*
 * Leaf holders (lib/src/holder.linux.c): a pooled cgroup leaf lent a second time keeps a task in
 * it, so it never empties between runs and the kernel has no "populated" change to notify. These
 * tests check what that promises: the holder is there and is ours, the leaf's cgroup.events is not
 * touched by later runs, a tree left behind is still found and killed (the holder with it), and the
 * holder never outlives its process, whether that exits without cleaning up, execs, or leaves a
 * forked child behind, and is never reaped by a host's waitpid(-1).
 */
#define _GNU_SOURCE
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The one leaf named "pk-<pid>-*" in our cgroup directory, into dir; false when not exactly one. */
static bool only_leaf(int pid, char *dir, size_t cap)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", pid);
    const char *base = pk_test_cgroup_dir();
    DIR *d = base != NULL ? opendir(base) : NULL;
    if (d == NULL)
        return false;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n++ == 0)
            snprintf(dir, cap, "%s/%s", base, e->d_name);
    closedir(d);
    return n == 1;
}

/* The first line of dir/name (or of the file `dir` when name is NULL), newline kept. */
static void first_line(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[4400];
    snprintf(path, sizeof path, "%s%s%s", dir, name != NULL ? "/" : "", name != NULL ? name : "");
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (f != NULL && fgets(buf, (int)cap, f) == NULL)
        buf[0] = '\0';
    if (f != NULL)
        fclose(f);
}

/* The value of `key` in /proc/<pid>/status, or -1. */
static long status_value(int pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    long v = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':')
            v = atol(line + strlen(key) + 1);
    if (f != NULL)
        fclose(f);
    return v;
}

static void run_true(void)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
}

/* Whether pid no longer exists at all (reaped, not a zombie), within 2 s. */
static bool gone(int pid)
{
    for (int i = 0; i < 1000; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* A fresh pool with one leaf in it, lent once (so without a holder yet): its path into leaf. */
static void leaf_lent_once(char *leaf, size_t cap)
{
    pk_test_need_cgroup();
    pk_cleanup();
    run_true();
    ASSERT(only_leaf(getpid(), leaf, cap));
}

/* The first pid in leaf's cgroup.procs. */
static int first_member(const char *leaf)
{
    char line[128];
    first_line(leaf, "cgroup.procs", line, sizeof line);
    return atoi(line);
}

TEST_IMPL(held_leaf_is_not_notified_by_runs)
{
    char leaf[4200], line[128];
    leaf_lent_once(leaf, sizeof leaf);
    first_line(leaf, "cgroup.events", line, sizeof line);
    ASSERT_STR_EQ(line, "populated 0\n"); /* lent once: no holder yet (a one-shot process) */

    run_true(); /* lent again: now held */
    first_line(leaf, "cgroup.events", line, sizeof line);
    ASSERT_STR_EQ(line, "populated 1\n");
    int holder = first_member(leaf);
    ASSERT_GT(holder, 0);
    char comm[64];
    snprintf(comm, sizeof comm, "/proc/%d/comm", holder);
    /* It names itself once it runs, which under load can be after the run that started it
     * returned: up to a second. */
    for (int i = 0; i < 100; i++) {
        first_line(comm, NULL, line, sizeof line);
        if (strcmp(line, "pk-holder\n") == 0)
            break;
        struct timespec tick = {0, 10000000};
        nanosleep(&tick, NULL);
    }
    ASSERT_STR_EQ(line, "pk-holder\n");
    ASSERT_EQ(status_value(holder, "PPid"), (long)getpid());

    /* Runs in a held leaf never change its cgroup.events: kernfs reports every change as
     * IN_MODIFY, including the ones cgroup_file_notify defers by up to 10 ms. The holder's own
     * arrival was such a change: let its deferred notice pass before watching. */
    struct timespec settle = {0, 50000000};
    nanosleep(&settle, NULL);
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT_GE(in, 0);
    char events[4300];
    snprintf(events, sizeof events, "%s/cgroup.events", leaf);
    ASSERT_GE(inotify_add_watch(in, events, IN_MODIFY), 0);
    for (int i = 0; i < 5; i++)
        run_true();
    nanosleep(&settle, NULL);
    char buf[4096];
    ssize_t n = read(in, buf, sizeof buf);
    close(in);
    ASSERT_EQ(n, -1); /* nothing to read: no notification */
    ASSERT_EQ(errno, EAGAIN);
    ASSERT_EQ(first_member(leaf), holder); /* the same holder throughout */

    /* pk_cleanup ends the holder and reaps it, and removes the leaf. */
    pk_cleanup();
    ASSERT(gone(holder));
    ASSERT(!only_leaf(getpid(), leaf, sizeof leaf));
}

TEST_IMPL(held_leaf_still_kills_a_tree_left_behind)
{
    /* The emptiness of a held leaf is read from cgroup.procs (the holder alone is empty): a
     * daemonised grandchild is still seen, the tree killed, the holder with it, and the leaf
     * removed rather than pooled. */
    char leaf[4200];
    leaf_lent_once(leaf, sizeof leaf);
    run_true();
    int holder = first_member(leaf);
    ASSERT_GT(holder, 0);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("daemonize", "100000")}, &r));
    ASSERT_EXITED(r, 0);
    int grandchild = atoi(r.out.data != NULL ? r.out.data : "0");
    pk_result_release(&r);
    ASSERT_GT(grandchild, 0);
    ASSERT(pk_test_wait_dead(grandchild, 2000));
    ASSERT(gone(holder)); /* killed with the tree and reaped */
    ASSERT(!only_leaf(getpid(), leaf, sizeof leaf));
    run_true(); /* a fresh leaf */
}

/* Runs `held-leaf mode` in a child process, uncontained; returns its handle, with its holder's
 * pid in *holder. */
static pk_process *held_leaf_helper(const char *mode, int *holder)
{
    pk_process *p;
    const char *const argv[] = {pk_test_self(), "--helper", "held-leaf", mode, NULL};
    int rc = pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "spawning the held-leaf helper failed");
    pk_line line;
    *holder = pk_process_read_line(p, &line) == 0 ? atoi(line.data) : 0;
    return p;
}

/* Removes what a helper that skipped its cleanup left: its (now empty) leaves. */
static void remove_leaves_of(int pid)
{
    char leaf[4200];
    while (only_leaf(pid, leaf, sizeof leaf))
        if (rmdir(leaf) != 0)
            break;
}

TEST_IMPL(holder_ends_with_its_process)
{
    pk_test_need_cgroup();
    static const char *const modes[] = {"exit", "exec", "fork"};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        int holder = 0;
        pk_process *p = held_leaf_helper(modes[i], &holder);
        ASSERT_GT(holder, 0);
        int helper = pk_process_pid(p);
        /* exit: the write end goes with the process; exec: O_CLOEXEC closes it while the
         * process (now sleep) lives on; fork: the forked child dropped its copy. */
        ASSERT(pk_test_wait_dead(holder, 2000));
        if (strcmp(modes[i], "exec") == 0)
            ASSERT(pk_test_pid_alive(helper));
        pk_process_free(p); /* kills what is left: sleep, or nothing */
        remove_leaves_of(helper);
    }
}

TEST_IMPL(holder_is_not_reaped_by_waitpid_any)
{
    /* The holder exits with no signal to its parent, so a host's waitpid(-1) loop (which waits
     * only for SIGCHLD children without __WALL) finds nothing to reap. */
    pk_test_need_cgroup();
    int holder = 0;
    pk_process *p = held_leaf_helper("wait", &holder);
    ASSERT_GT(holder, 0);
    pk_line line;
    ASSERT_OK(pk_process_read_line(p, &line));
    ASSERT_STR_EQ(line.data, "echild");
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    ASSERT(pk_test_wait_dead(holder, 2000));
    pk_process_free(p);
}
