/*
 * The harness's side of the worker protocol (contenders/README.md, "The worker protocol"): a
 * persistent program in another process — a contender written in another language, or a
 * measuring worker hosting C contenders — driven round by round over its stdin and stdout.
 *
 *     pkb_worker_start    start it with processkit and read its greeting (pkw 1 ...)
 *     pkb_worker_setup    `setup ...` for one series            -> ok | error
 *     pkb_worker_run      `run K`: K iterations, self-timed     -> done K ns=... | error
 *     pkb_worker_teardown `teardown`                            -> ok | error
 *     pkb_worker_stop     `quit`, then the exit (killed with its tree past the deadline)
 *
 * Every request has a deadline (a base, plus an allowance per iteration a `run` asks for); a
 * worker that dies, misses a deadline (it is killed), answers garbage or breaks the protocol
 * makes the call fail with a one-line reason naming the contender and what the worker did, and
 * every later call fails at once with the same reason. Its stderr is kept (the last 4 KiB); the
 * reason quotes its last line, and pkb_worker_stderr gives the rest. Uses only processkit.h.
 */
#ifndef PKB_CONTENDERS_WORKER_H
#define PKB_CONTENDERS_WORKER_H

#include "plugin/sample.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PKB_WORKER_PROTOCOL 1
/* A request's deadline when neither the options nor PKBENCH_WORKER_DEADLINE_MS set one. */
#define PKB_WORKER_DEADLINE_MS 30000
/* The least a `run` allows per iteration asked, on top of the base deadline. */
#define PKB_WORKER_PER_ITERATION_MS 1000
/* What a fan-out's `setup` allows per child on top of the base deadline: it runs one untimed
 * fan-out (the descriptors' count). A first fan-out of 4096 cats took 60-70 s here (15-17 ms a
 * child) with the 2-CPU machine's load average at 12; a deadline detects a hung worker, it must
 * not end a slow one. */
#define PKB_WORKER_PER_CHILD_MS 50

typedef struct pkb_worker pkb_worker;

typedef struct pkb_worker_options {
    const char *name;        /* the contender: every reason starts with it */
    const char *const *argv; /* NULL-terminated; argv[0] a path, or a bare name found in PATH */
    /* The base deadline of every request, in ms; 0: PKBENCH_WORKER_DEADLINE_MS from the
     * environment, else PKB_WORKER_DEADLINE_MS. A `run K` waits this plus K times the larger of
     * `per_iteration_ms` (0: PKB_WORKER_PER_ITERATION_MS) and ten times the slowest iteration
     * (mean of one answer) seen so far. */
    int deadline_ms;
    int per_iteration_ms;
} pkb_worker_options;

/* What the greeting said. */
typedef struct pkb_worker_hello {
    int protocol;
    char name[64];        /* the worker's contender (name=) */
    char runtime[128];    /* e.g. "rustc-1.63.0", "go1.19.8", "python-3.11.2" (runtime=) */
    char kinds[128];      /* comma list (kinds=): capture,stream,fan_out,spawn_only */
    char contenders[256]; /* comma list of the contenders it hosts (contenders=; default name) */
} pkb_worker_hello;

/* One series' set-up: the fields of the `setup` line. */
typedef struct pkb_worker_series {
    const char *contender;    /* which of the worker's contenders */
    const char *scenario;     /* the scenario's name */
    const char *kind;         /* capture | stream | fan_out | spawn_only (pkb_scenario_kind) */
    const char *program;      /* what a user would write: a bare name, or a path */
    const char *program_path; /* the same, resolved to an absolute path */
    int children;             /* children per iteration */
    const char *input_file;   /* every child's stdin bytes, read once by the worker; NULL: none */
    uint64_t input_bytes;
    uint64_t expect_bytes, expect_lines; /* per child */
} pkb_worker_series;

/* Starts the worker and reads its greeting: it must say `pkw 1`, name `o->name` (or host it, in
 * contenders=) and list its kinds. Returns 0 with *out set, or a negative errno with the reason
 * in `why` (PK_ENOTFOUND / -ENOENT for a program that is not there). */
int pkb_worker_start(const pkb_worker_options *o, pkb_worker **out, char *why, size_t why_len);

const pkb_worker_hello *pkb_worker_greeting(const pkb_worker *w);

/* Whether the greeting listed `kind`. */
int pkb_worker_does(const pkb_worker *w, const char *kind);

/* `setup ...` -> `ok`. Returns 0, or a negative errno with the reason in `why` (-EPROTO: the
 * worker answered `error ...`, quoted). A fan-out's setup, which runs one fan-out, waits the base
 * deadline plus PKB_WORKER_PER_CHILD_MS per child, and its time counts as the first iteration
 * seen: the `run`s after it allow ten times that (the first `run 1` of a long fan-out would
 * otherwise get the base deadline alone). */
int pkb_worker_setup(pkb_worker *w, const pkb_worker_series *s, char *why, size_t why_len);

/* `run K` -> `done K ...`: fills out->iterations (K), the summed counts, and the self-timed
 * fields (self_timed, wall_ns, child_cpu_ns, self_cpu_ns, and the peaks when reported). Returns 0,
 * or a negative errno with the reason in out->error. */
int pkb_worker_run(pkb_worker *w, uint32_t iterations, pkb_sample *out);

/* `teardown` -> `ok`. */
int pkb_worker_teardown(pkb_worker *w, char *why, size_t why_len);

/* `quit` and the worker's exit (within the deadline, else it is killed with its tree); frees w.
 * Returns 0 when it exited 0, else a negative errno with the reason in `why` (may be NULL).
 * Accepts NULL. */
int pkb_worker_stop(pkb_worker *w, char *why, size_t why_len);

/* The reason the worker failed ("" while it has not). */
const char *pkb_worker_failure(const pkb_worker *w);

/* The last bytes the worker wrote on its stderr (at most 4 KiB), NUL-terminated. */
const char *pkb_worker_stderr(pkb_worker *w);

#ifdef __cplusplus
}
#endif

#endif /* PKB_CONTENDERS_WORKER_H */
