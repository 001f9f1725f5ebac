/*
 * remote — a worker speaking the protocol of README.md, as a contender (remote.h). Each series
 * gets a worker process of its own: set-up starts it, reads its greeting, writes the scenario's
 * stdin bytes to a private file the worker reads once (removed as soon as it answered), and sends
 * `setup`; every `run` is one `run K` round trip for the K iterations the runner allows, timed by
 * the worker; teardown sends `teardown` and `quit`.
 *
 * Before anything is started, the program is looked for, so a toolchain that was not installed
 * when this tree was built reads as what it is ("not built: ... package cargo"), not as a failure
 * to exec. Counts are checked here as well as by the runner, so that a worker reporting the wrong
 * ones is named in the reason.
 */
#define _GNU_SOURCE
#include "contenders/remote.h"

#include "contenders/worker.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct remote {
    const char *name;
    pkb_worker *worker;
};

/* Whether the worker's program (and script) are there; else the reason, naming the package. */
static int find_program(const pkb_remote_spec *spec, char *why, size_t why_len)
{
    const char *program = spec->argv[0];
    char pkg[96] = "";
    if (spec->package != NULL)
        snprintf(pkg, sizeof pkg, " (Debian package %s)", spec->package);
    if (strchr(program, '/') == NULL) {
        char *path = NULL;
        int rc = pk_resolve_program(program, NULL, &path, NULL);
        free(path);
        if (rc != 0)
            snprintf(why, why_len, "%s: not run: %s is not installed%s: %s", spec->name, program,
                     pkg, pk_strerror(rc));
        return rc;
    }
    if (access(program, X_OK) != 0) {
        int e = errno;
        if (e != ENOENT)
            snprintf(why, why_len, "%s: not run: %s: %s", spec->name, program, strerror(e));
        else if (spec->package == NULL)
            snprintf(why, why_len, "%s: not run: %s does not exist", spec->name, program);
        else if (spec->script != NULL) /* an interpreter */
            snprintf(why, why_len, "%s: not run: %s is not installed%s", spec->name, program, pkg);
        else /* a worker this tree builds */
            snprintf(why, why_len,
                     "%s: not run: %s was not built: the build makes it only where its "
                     "toolchain%s was installed when the tree was configured",
                     spec->name, program, pkg);
        return -e;
    }
    if (spec->script != NULL && access(spec->script, R_OK) != 0) {
        int e = errno;
        snprintf(why, why_len, "%s: not run: its script %s: %s", spec->name, spec->script,
                 strerror(e));
        return -e;
    }
    return 0;
}

/* The scenario's stdin bytes in a fresh private directory: its path in `file`. */
static int write_input(const pkb_workload *w,
                       char *dir,
                       size_t dir_len,
                       char *file,
                       size_t file_len,
                       char *why,
                       size_t why_len,
                       const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dir_len, "%s/pkb-worker-XXXXXX", tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        int e = errno;
        snprintf(why, why_len, "%s: cannot make a directory for its stdin bytes: %s: %s", name, dir,
                 strerror(e));
        dir[0] = '\0';
        return -e;
    }
    snprintf(file, file_len, "%s/stdin", dir);
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    size_t done = 0;
    while (fd >= 0 && done < w->input_len) {
        ssize_t n = write(fd, w->input + done, w->input_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int e = fd < 0 ? errno : done < w->input_len ? (errno != 0 ? errno : EIO) : 0;
    if (fd >= 0 && close(fd) != 0 && e == 0)
        e = errno;
    if (e != 0)
        snprintf(why, why_len, "%s: cannot write its stdin bytes to %s: %s", name, file,
                 strerror(e));
    return -e;
}

static void remove_input(const char *dir, const char *file)
{
    if (file[0] != '\0')
        unlink(file);
    if (dir[0] != '\0')
        rmdir(dir);
}

int pkb_remote_prepare(
    const pkb_remote_spec *spec, void **state, const pkb_workload *w, char *why, size_t why_len)
{
    *state = NULL;
    int rc = find_program(spec, why, why_len);
    if (rc != 0)
        return rc;
    struct remote *r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(why, why_len, "%s: out of memory", spec->name);
        return -ENOMEM;
    }
    r->name = spec->name;
    rc = pkb_worker_start(&(pkb_worker_options){.name = spec->name, .argv = spec->argv}, &r->worker,
                          why, why_len);
    char dir[PATH_MAX] = "", file[PATH_MAX + 8] = "", scenario[64];
    if (w->scenario == PKB_FAN_OUT_SCALE) /* one scenario per size: "fan_out_<N>" */
        pkb_scenario_fan_out_name(w->children, scenario, sizeof scenario);
    else
        snprintf(scenario, sizeof scenario, "%s", pkb_scenario_name(w->scenario));
    if (rc == 0 && w->input_len > 0)
        rc = write_input(w, dir, sizeof dir, file, sizeof file, why, why_len, spec->name);
    if (rc == 0)
        rc = pkb_worker_setup(r->worker,
                              &(pkb_worker_series){.contender = spec->name,
                                                   .scenario = scenario,
                                                   .kind = pkb_scenario_kind(w->scenario),
                                                   .program = w->program,
                                                   .program_path = w->program_path,
                                                   .children = w->children,
                                                   .input_file = w->input_len > 0 ? file : NULL,
                                                   .input_bytes = w->input_len,
                                                   .expect_bytes = w->expect_bytes,
                                                   .expect_lines = w->expect_lines},
                              why, why_len);
    remove_input(dir, file); /* the worker has read it (or failed) */
    if (rc != 0) {
        pkb_worker_stop(r->worker, NULL, 0);
        free(r);
        return rc;
    }
    *state = r;
    return 0;
}

int pkb_remote_run(void *state, const pkb_workload *w, pkb_sample *out)
{
    struct remote *r = state;
    uint32_t k = out->batch > 0 ? out->batch : 1;
    int rc = pkb_worker_run(r->worker, k, out);
    if (rc != 0)
        return rc;
    /* The runner checks these too; here the reason names the worker that got them wrong. */
    uint64_t children = (uint64_t)w->children * k;
    if (out->bytes != w->expect_bytes * children || out->lines != w->expect_lines * children ||
        (uint64_t)out->children != children || out->failures != 0) {
        snprintf(out->error, sizeof out->error,
                 "%s: the worker reports %u iteration%s reading %" PRIu64 " bytes / %" PRIu64
                 " lines from %d children (%d failed); the workload is %" PRIu64 " / %" PRIu64
                 " from %" PRIu64,
                 r->name, k, k == 1 ? "" : "s", out->bytes, out->lines, out->children,
                 out->failures, w->expect_bytes * children, w->expect_lines * children, children);
        return -EBADMSG;
    }
    return 0;
}

void pkb_remote_teardown(void *state)
{
    struct remote *r = state;
    if (r == NULL)
        return;
    char why[320] = "";
    bool failed = pkb_worker_failure(r->worker)[0] != '\0';
    int rc = failed ? 0 : pkb_worker_teardown(r->worker, why, sizeof why);
    if (rc == 0 && !failed)
        rc = pkb_worker_stop(r->worker, why, sizeof why);
    else {
        /* It failed: what it said on stderr is the first thing a reader needs. */
        const char *tail = pkb_worker_stderr(r->worker);
        if (tail[0] != '\0')
            fprintf(stderr, "pkbench: %s: the worker's stderr ended with:\n%s%s", r->name, tail,
                    tail[strlen(tail) - 1] == '\n' ? "" : "\n");
        pkb_worker_stop(r->worker, NULL, 0);
    }
    if (rc != 0)
        fprintf(stderr, "pkbench: %s\n", why);
    free(r);
}

const char *pkb_remote_runtime(void *state)
{
    const struct remote *r = state;
    return r != NULL ? pkb_worker_greeting(r->worker)->runtime : NULL;
}

/* ---- contenders added for one run (pkbench run --worker NAME=COMMAND) -------------------------
 */

struct extra {
    pkb_remote_spec spec;
    char name[64];
    char description[160];
    char *command; /* owned: the words argv points into */
    const char *argv[32];
    pkb_contender contender;
};

static struct extra extras[PKB_REMOTE_EXTRA_MAX];
static size_t nextras;

/* A contender's prepare cannot say which contender it is, so each slot has its own. */
#define PKB__SLOT(i)                                                                               \
    static int slot_prepare_##i(void **state, const pkb_workload *w, char *why, size_t len)        \
    {                                                                                              \
        return pkb_remote_prepare(&extras[i].spec, state, w, why, len);                            \
    }
PKB__SLOT(0)
PKB__SLOT(1)
PKB__SLOT(2)
PKB__SLOT(3)
PKB__SLOT(4)
PKB__SLOT(5)
PKB__SLOT(6)
PKB__SLOT(7)
#undef PKB__SLOT

static int (*const slot_prepare[PKB_REMOTE_EXTRA_MAX])(void **,
                                                       const pkb_workload *,
                                                       char *,
                                                       size_t) = {
    slot_prepare_0, slot_prepare_1, slot_prepare_2, slot_prepare_3,
    slot_prepare_4, slot_prepare_5, slot_prepare_6, slot_prepare_7};

static bool valid_name(const char *name, size_t len)
{
    if (len == 0 || len >= sizeof extras[0].name)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_'))
            return false;
    return true;
}

const pkb_contender *pkb_remote_add(const char *definition, char *why, size_t why_len)
{
    const char *eq = strchr(definition, '=');
    size_t len = eq != NULL ? (size_t)(eq - definition) : 0;
    if (eq == NULL || !valid_name(definition, len)) {
        snprintf(why, why_len,
                 "--worker '%s': expected NAME=COMMAND, NAME of a-z, 0-9 and _ (at most 63)",
                 definition);
        return NULL;
    }
    for (size_t i = 0; i < nextras; i++)
        if (strlen(extras[i].name) == len && strncmp(extras[i].name, definition, len) == 0) {
            snprintf(why, why_len, "--worker '%s': %.*s is given twice", definition, (int)len,
                     definition);
            return NULL;
        }
    if (nextras == PKB_REMOTE_EXTRA_MAX) {
        snprintf(why, why_len, "--worker '%s': at most %d workers can be added", definition,
                 PKB_REMOTE_EXTRA_MAX);
        return NULL;
    }
    struct extra *x = &extras[nextras];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%.*s", (int)len, definition);
    x->command = strdup(eq + 1);
    size_t n = 0;
    for (char *save = NULL, *word = x->command ? strtok_r(x->command, " \t", &save) : NULL;
         word != NULL && n + 1 < sizeof x->argv / sizeof x->argv[0];
         word = strtok_r(NULL, " \t", &save))
        x->argv[n++] = word;
    if (n == 0) {
        snprintf(why, why_len, "--worker '%s': COMMAND is empty", definition);
        free(x->command);
        x->command = NULL;
        return NULL;
    }
    snprintf(x->description, sizeof x->description, "a worker given on the command line: %.100s",
             eq + 1);
    x->spec = (pkb_remote_spec){.name = x->name, .description = x->description, .argv = x->argv};
    x->contender = (pkb_contender){.name = x->name,
                                   .description = x->description,
                                   .scenarios = PKB_REMOTE_SCENARIOS,
                                   .prepare = slot_prepare[nextras],
                                   .run = pkb_remote_run,
                                   .teardown = pkb_remote_teardown,
                                   .runtime = pkb_remote_runtime};
    nextras++;
    return &x->contender;
}

size_t pkb_remote_extra_count(void)
{
    return nextras;
}

const pkb_contender *pkb_remote_extra(size_t i)
{
    return i < nextras ? &extras[i].contender : NULL;
}
