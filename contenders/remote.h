/*
 * remote — a worker (worker.h) as a contender (contender.h): the scenarios suite drives it like
 * any other, each series in a worker process of its own (started at set-up, told to quit at
 * teardown), each call of `run` a `run K` for the batch the runner allows (plugin/sample.h), the
 * iterations timed by the worker itself.
 *
 * A contender in another language is one line of registry.c:
 *
 *     W(rust_std, PKB_WORKER_BUILT("rust_std"), NULL, "cargo", PKB_REMOTE_SCENARIOS,
 *       "Rust std::process::Command ...")
 *
 * (its name, the program to start, a script for it or NULL, the Debian package whose absence
 * explains a missing program, its scenarios, its description). pkbench's `run --worker
 * NAME=COMMAND` adds one for a single run, without a rebuild (pkb_remote_add), in the seed's four
 * scenarios.
 */
#ifndef PKB_CONTENDERS_REMOTE_H
#define PKB_CONTENDERS_REMOTE_H

#include "contenders/contender.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pkb_remote_spec {
    const char *name;
    const char *description;
    const char *const *argv; /* NULL-terminated: the program (a path, or a bare name found in
                                PATH), then its arguments */
    const char *script;      /* argv[1] when the program is an interpreter running this file;
                                NULL for a program this tree builds (or one given at run time) */
    const char *package;     /* the Debian package that provides the program or its toolchain,
                                named when the program is missing (NULL: none) */
} pkb_remote_spec;

/* The contender's functions, on the spec its `prepare` was generated for. */
int pkb_remote_prepare(
    const pkb_remote_spec *spec, void **state, const pkb_workload *w, char *why, size_t why_len);
int pkb_remote_run(void *state, const pkb_workload *w, pkb_sample *out);
void pkb_remote_teardown(void *state);
const char *pkb_remote_runtime(void *state);

/* The seed's four scenarios: a worker says which kinds it does in its greeting (a scenario of a
 * kind it lacks is refused with the reason). */
#define PKB_REMOTE_SCENARIOS                                                                       \
    (PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) | PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |       \
     PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY))
/* The same and the fan-out at scale (`fan_out_<N>`, the kind fan_out with children=N, its series
 * in the worker's own process): a worker whose fan-out is its language's event loop or runtime
 * (tasks, goroutines, promises), as issue 36 lists them; one whose fan-out is a thread per child
 * is the raw baseline's design and stays at the seed's 16. */
#define PKB_REMOTE_AT_SCALE (PKB_REMOTE_SCENARIOS | PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE))

/* Defines `const pkb_contender pkb_contender_<id>` for a worker started as `program [script]`,
 * running `scenarios_` (PKB_REMOTE_SCENARIOS or PKB_REMOTE_AT_SCALE). */
#define PKB_REMOTE_CONTENDER(id, program_, script_, package_, scenarios_, desc)                    \
    static const char *const pkb__remote_argv_##id[] = {program_, script_, NULL};                  \
    static const pkb_remote_spec pkb__remote_##id = {.name = #id,                                  \
                                                     .description = desc,                          \
                                                     .argv = pkb__remote_argv_##id,                \
                                                     .script = script_,                            \
                                                     .package = package_};                         \
    static int pkb__remote_prepare_##id(void **state, const pkb_workload *w, char *why,            \
                                        size_t why_len)                                            \
    {                                                                                              \
        return pkb_remote_prepare(&pkb__remote_##id, state, w, why, why_len);                      \
    }                                                                                              \
    const pkb_contender pkb_contender_##id = {.name = #id,                                         \
                                              .description = desc,                                 \
                                              .scenarios = scenarios_,                             \
                                              .prepare = pkb__remote_prepare_##id,                 \
                                              .run = pkb_remote_run,                               \
                                              .teardown = pkb_remote_teardown,                     \
                                              .runtime = pkb_remote_runtime};

/* At most this many contenders added at run time. */
#define PKB_REMOTE_EXTRA_MAX 8

/* Adds a contender for one run from "NAME=COMMAND" (COMMAND split at spaces, no quoting: the
 * program, a path or a bare name, and its arguments). Returns it in *out, or NULL with a one-line
 * reason in `why` (a NAME not [a-z0-9_]+ or already taken, an empty COMMAND, too many). */
const pkb_contender *pkb_remote_add(const char *definition, char *why, size_t why_len);
/* The contenders pkb_remote_add made, in order. */
size_t pkb_remote_extra_count(void);
const pkb_contender *pkb_remote_extra(size_t i);

#ifdef __cplusplus
}
#endif

#endif /* PKB_CONTENDERS_REMOTE_H */
