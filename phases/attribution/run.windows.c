/*
 * Running one Windows series of the phases suite (the counterpart of run.c): refusing it when
 * the host lacks what it needs, preparing it with one untimed iteration that must succeed (and,
 * for a walk, find the child's thread: series.windows.c), timing iterations for the runner,
 * describing it in the results file (`extra`).
 */
#include "phases/attribution/internal.windows.h"

#include "processkit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pkb_phase_kind_name(pkb_phase_kind kind)
{
    switch (kind) {
    case PKB_KIND_PHASE:
        return "phase";
    case PKB_KIND_PRIMITIVE:
        return "primitive";
    case PKB_KIND_LOCK:
        return "lock";
    }
    return "unknown";
}

const pkb_phase_def *pkb_phase_find(const char *group, const char *name)
{
    for (size_t i = 0; i < pkb_phase_def_count; i++)
        if (strcmp(pkb_phase_defs[i].group, group) == 0 &&
            strcmp(pkb_phase_defs[i].name, name) == 0)
            return &pkb_phase_defs[i];
    return NULL;
}

/* ---- a series ------------------------------------------------------------------------------ */

int pkb_phase_run_open(
    const pkb_phase_def *def, pkb_phases_env *env, pkb_phase_run **out, char *why, size_t why_len)
{
    *out = NULL;
    if ((def->needs & PKB_NEED_BARE_NAME) && !env->bare_ok) {
        snprintf(why, why_len, "%s", env->bare_why);
        return -ENOTSUP;
    }
    if ((def->steps & PKB_WSTEP_JOB_LIST) && !env->job_list_ok) {
        snprintf(why, why_len, "%s", env->job_list_why);
        return -ENOTSUP;
    }
    pkb_phase_run *run = calloc(1, sizeof *run);
    if (run == NULL) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    run->def = def;
    run->env = env;
    int rc = def->run(run);
    if (rc == 0 && (def->walk == PKB_WALK_DIRECT || def->walk == PKB_WALK_SNAPSHOT) &&
        run->threads_found == 0) {
        snprintf(run->error, sizeof run->error, "the %s walk did not find the thread",
                 def->walk == PKB_WALK_DIRECT ? "direct" : "snapshot");
        rc = -ESRCH;
    }
    if (rc != 0) {
        snprintf(why, why_len, "%s", run->error[0] ? run->error : strerror(-rc));
        free(run);
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

static const char *walk_name(pkb_walk w)
{
    return w == PKB_WALK_DIRECT     ? "direct"
           : w == PKB_WALK_SNAPSHOT ? "snapshot"
           : w == PKB_WALK_HANDLE   ? "handle"
                                    : "none";
}

json_t *pkb_phase_extra(const pkb_phase_def *def, const pkb_phase_run *run)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(pkb_phase_kind_name(def->kind)));
    if (def->calls > 1)
        json_object_set_new(o, "calls_per_iteration", json_integer(def->calls));
    if (def->composition != NULL)
        json_object_set_new(o, "composition", strings(def->composition));
    if (def->steps != 0) {
        static const char *const names[] = {"suspend_resume", "job_assign", "job_list"};
        json_t *steps = json_array();
        for (unsigned i = 0; i < 3; i++)
            if (def->steps & (1u << i))
                json_array_append_new(steps, json_string(names[i]));
        json_object_set_new(o, "steps", steps);
        if (def->walk != PKB_WALK_NONE)
            json_object_set_new(o, "walk", json_string(walk_name(def->walk)));
    }
    if (def->kind == PKB_KIND_LOCK) {
        json_object_set_new(o, "parallel", json_integer(def->children));
        json_object_set_new(o, "locked", json_boolean(def->locked));
    }
    if (run == NULL)
        return o;
    const pkb_phases_env *e = run->env;
    switch (def->records) {
    case PKB_RECORD_NONE:
    case PKB_RECORD_MEMBERS:
        break;
    case PKB_RECORD_THREADS:
        json_object_set_new(o, "threads_found", json_integer((json_int_t)run->threads_found));
        break;
    case PKB_RECORD_MACHINE:
        json_object_set_new(o, "processes", json_integer((json_int_t)run->walk_processes));
        json_object_set_new(o, "threads", json_integer((json_int_t)run->walk_threads));
        break;
    case PKB_RECORD_PROGRAM:
        json_object_set_new(o, "program", json_string(e->child));
        break;
    case PKB_RECORD_PATH:
        json_object_set_new(o, "program", json_string(e->bare_name));
        json_object_set_new(o, "resolved", json_string(e->bare_path));
        json_object_set_new(o, "path_entries", json_integer((json_int_t)e->path_entries));
        json_object_set_new(o, "pathext_entries", json_integer((json_int_t)e->pathext_entries));
        json_object_set_new(o, "found_in_entry", json_integer(e->bare_found_in));
        break;
    case PKB_RECORD_CONTAINMENT:
        json_object_set_new(o, "containment",
                            json_string(pk_containment_name(pk_host_containment())));
        break;
    }
    return o;
}

void pkb_phase_run_close(pkb_phase_run *run)
{
    free(run);
}
