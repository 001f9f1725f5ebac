/*
 * Running one series of the phases suite: refusing it when the host lacks what it needs,
 * preparing it with one untimed iteration that must succeed (and find the child, and leave no
 * leaf), timing iterations for the runner, and describing it in the results file (`extra`).
 */
#define _GNU_SOURCE
#include "phases/attribution/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Why the host cannot run `def`, or NULL. */
static const char *unavailable(const pkb_phase_def *def, const pkb_phases_env *e)
{
    if ((def->needs & PKB_NEED_CLONE3) && !e->clone3_ok)
        return e->clone3_why;
    if ((def->needs & PKB_NEED_CGROUP) && !e->cgroup_ok)
        return e->cgroup_why;
    if ((def->needs & PKB_NEED_SETPGID) && !e->setpgid_ok)
        return e->setpgid_why;
    if ((def->needs & PKB_NEED_BARE_NAME) && !e->bare_ok)
        return e->bare_why;
    return NULL;
}

int pkb_phase_run_open(
    const pkb_phase_def *def, pkb_phases_env *env, pkb_phase_run **out, char *why, size_t why_len)
{
    *out = NULL;
    const char *no = unavailable(def, env);
    if (no != NULL) {
        snprintf(why, why_len, "%s", no);
        return -ENOTSUP;
    }
    pkb_phase_run *run = calloc(1, sizeof *run);
    if (run == NULL) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    run->def = def;
    run->env = env;
    unsigned long leaves = env->leaves;
    int rc = def->run(run);
    /* A lock series' threads stop until its own first timed iteration. */
    if (def->kind == PKB_KIND_LOCK)
        pkb__lock_release(run);
    if (rc == 0 && def->walk != PKB_WALK_NONE && !(def->steps & PKB_STEP_CGROUP) &&
        run->walk.target_threads == 0) {
        snprintf(run->error, sizeof run->error, "the %s walk did not find the child",
                 def->walk == PKB_WALK_DIRECT ? "direct" : "snapshot");
        rc = -ESRCH;
    }
    /* Every leaf the iteration made is gone again. */
    char leaf[64];
    for (unsigned long n = leaves + 1; rc == 0 && n <= env->leaves; n++) {
        pkb__leaf_name(env, n, leaf, sizeof leaf);
        if (faccessat(env->cgroup_fd, leaf, F_OK, 0) == 0) {
            snprintf(run->error, sizeof run->error, "leaf %s was left behind", leaf);
            rc = -EEXIST;
        }
    }
    if (rc != 0) {
        snprintf(why, why_len, "%s", run->error[0] ? run->error : strerror(-rc));
        pkb_phase_run_close(run);
        return rc;
    }
    *out = run;
    return 0;
}

int pkb_phase_iterate(void *ctx, pkb_sample *out)
{
    pkb_phase_run *run = ctx;
    int rc = 0, calls = run->def->calls > 0 ? run->def->calls : 1;
    for (int i = 0; rc == 0 && i < calls; i++)
        rc = run->def->run(run);
    if (rc != 0) {
        snprintf(out->error, sizeof out->error, "%s", run->error);
        return rc;
    }
    out->children = run->def->children;
    return 0;
}

static json_t *strings(const char *const *list)
{
    json_t *a = json_array();
    for (; list != NULL && *list != NULL; list++)
        json_array_append_new(a, json_string(*list));
    return a;
}

json_t *pkb_phase_extra(const pkb_phase_def *def, const pkb_phase_run *run)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(pkb_phase_kind_name(def->kind)));
    if (def->calls > 1)
        json_object_set_new(o, "calls_per_iteration", json_integer(def->calls));
    if (def->composition != NULL)
        json_object_set_new(o, "composition", strings(def->composition));
    if (def->base != NULL)
        json_object_set_new(o, "base", json_string(def->base));
    if (def->oneshot != 0) {
        static const char *const names[] = {"pidfd", "close_range", "pooled_leaf", "procs_join"};
        json_t *steps = json_array();
        for (unsigned i = 0; i < 4; i++)
            if (def->oneshot & (1u << i))
                json_array_append_new(steps, json_string(names[i]));
        json_object_set_new(o, "oneshot_steps", steps);
    }
    if (def->steps != 0) {
        static const char *const names[] = {"pidfd", "pgroup", "pdeathsig", "cgroup"};
        json_t *steps = json_array();
        for (unsigned i = 0; i < 4; i++)
            if (def->steps & (1u << i))
                json_array_append_new(steps, json_string(names[i]));
        json_object_set_new(o, "steps", steps);
        json_object_set_new(o, "walk",
                            json_string(def->walk == PKB_WALK_DIRECT ? "direct" : "snapshot"));
    }
    if (def->kind == PKB_KIND_LOCK) {
        json_object_set_new(o, "parallel", json_integer(def->children));
        json_object_set_new(o, "locked", json_boolean(def->locked));
    }
    if (run == NULL)
        return o;
    /* What the untimed first iteration saw. */
    const pkb_phases_env *e = run->env;
    switch (def->records) {
    case PKB_RECORD_NONE:
        break;
    case PKB_RECORD_THREADS:
        json_object_set_new(o, "threads_found", json_integer((json_int_t)run->walk.threads));
        break;
    case PKB_RECORD_MEMBERS:
        json_object_set_new(o, "members_found", json_integer((json_int_t)run->members));
        break;
    case PKB_RECORD_MACHINE:
        json_object_set_new(o, "processes", json_integer((json_int_t)run->walk.processes));
        json_object_set_new(o, "threads", json_integer((json_int_t)run->walk.threads));
        break;
    case PKB_RECORD_PROGRAM:
        json_object_set_new(o, "program", json_string(e->child));
        break;
    case PKB_RECORD_PATH:
        json_object_set_new(o, "program", json_string(e->bare_name));
        json_object_set_new(o, "resolved", json_string(e->bare_path));
        json_object_set_new(o, "path_entries", json_integer((json_int_t)e->path_entries));
        json_object_set_new(o, "found_in_entry", json_integer(e->bare_found_in));
        break;
    case PKB_RECORD_CONTAINMENT:
        json_object_set_new(o, "containment", json_string("cgroup"));
        break;
    }
    return o;
}

void pkb_phase_run_close(pkb_phase_run *run)
{
    if (run == NULL)
        return;
    pkb__lock_release(run);
    free(run);
}
