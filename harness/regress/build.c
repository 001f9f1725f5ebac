/*
 * build — resolving and building the two sides of `pkbench ab` (build.h has the layout of the
 * cache and why). Every tool runs through processkit's pk_run: git to resolve a revision and
 * export its build inputs, tar to unpack them, cmake (with ninja, and ccache when installed) to
 * build the library and the worker; a build's output goes to its log, whose last line a failure
 * quotes.
 */
#define _GNU_SOURCE
#include "regress/build.h"

#include "common/buf.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PKB_SOURCE_DIR
#define PKB_SOURCE_DIR ""
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_program(const char *path)
{
    return is_file(path) && access(path, X_OK) == 0;
}

/* mkdir -p. Returns 0 or -errno. */
static int make_dirs(const char *path)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
        return -ENAMETOOLONG;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -errno : 0;
}

/* ---- running a tool ---------------------------------------------------------------------- */

struct tool {
    const char *const *argv;
    const char *cwd;
    const char *const *env; /* added to ours; NULL: none */
    int log;                /* stdout and stderr appended here; -1: stderr captured */
    char *out;              /* stdout captured here (first line, trimmed) when not NULL */
    size_t cap;
    char why[256]; /* a failure's last line of stderr, or how it ended */
};

/* The last non-empty line of `text` into buf. */
static void last_line(const char *text, size_t len, char *buf, size_t cap)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    size_t start = len;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(buf, cap, "%.*s", (int)(len - start), text + start);
}

/* Runs t; returns its exit status (0 success), or -1 when it could not run or ended by a signal
 * (t->why says which). */
static int run_tool(struct tool *t)
{
    pk_result r;
    int rc = pk_run(
        &(pk_command){
            .argv = t->argv,
            .cwd = t->cwd,
            .env = {.set = t->env},
            .out = t->out != NULL ? (pk_stdio){.kind = PK_STDIO_CAPTURE}
                   : t->log >= 0  ? (pk_stdio){.kind = PK_STDIO_FD, .fd = t->log}
                                  : (pk_stdio){.kind = PK_STDIO_NULL},
            .err = t->log >= 0 ? (pk_stdio){.kind = PK_STDIO_FD, .fd = t->log}
                               : (pk_stdio){.kind = PK_STDIO_CAPTURE},
            .containment = PK_CONTAIN_NONE, /* a build's own processes, ended by its own Ctrl-C */
        },
        &r);
    int status = -1;
    t->why[0] = '\0';
    if (rc != 0) {
        snprintf(t->why, sizeof t->why, "cannot run %s: %s", t->argv[0], pk_strerror(rc));
    } else if (r.outcome.kind == PK_OUTCOME_EXITED) {
        status = r.outcome.code;
        if (status != 0 && r.err.data != NULL)
            last_line(r.err.data, r.err.len, t->why, sizeof t->why);
        if (t->out != NULL) {
            const char *d = r.out.data != NULL ? r.out.data : "";
            snprintf(t->out, t->cap, "%.*s", (int)strcspn(d, "\n"), d);
        }
    } else if (r.outcome.kind == PK_OUTCOME_SPAWN_FAILED) {
        snprintf(t->why, sizeof t->why, "cannot run %s: %s", t->argv[0],
                 pk_strerror(r.outcome.error));
    } else {
        snprintf(t->why, sizeof t->why, "%s ended by signal %d", t->argv[0], r.outcome.signo);
    }
    pk_result_release(&r);
    return status;
}

int pkb_ab_git(const char *dir, const char *const *args, char *out, size_t cap)
{
    const char *argv[24] = {"git", "-C", dir};
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL && n + 1 < sizeof argv / sizeof argv[0]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char none[8];
    struct tool t = {.argv = argv,
                     .log = -1,
                     .out = out != NULL ? out : none,
                     .cap = out != NULL ? cap : sizeof none};
    int rc = run_tool(&t);
    if (rc != 0 && out != NULL)
        snprintf(out, cap, "%s", t.why[0] ? t.why : "git failed");
    return rc;
}

/* `git -C dir A1 A2 A3`'s first line of output into out; its status (-1: could not run). */
static int
git(const char *dir, char *out, size_t cap, const char *a1, const char *a2, const char *a3)
{
    return pkb_ab_git(dir, (const char *const[]){a1, a2, a3, NULL}, out, cap);
}

/* ---- the source of the worker -------------------------------------------------------------- */

int pkb_ab_source(char *out, size_t cap, char *err, size_t err_len)
{
    const char *s = getenv("PKBENCH_SOURCE");
    if (s == NULL || s[0] == '\0')
        s = PKB_SOURCE_DIR;
    char probe[PATH_MAX];
    snprintf(probe, sizeof probe, "%s/cmake/ab/CMakeLists.txt", s);
    bool ok = s[0] != '\0' && is_file(probe);
    snprintf(probe, sizeof probe, "%s/contenders/host/host.c", s);
    ok = ok && is_file(probe);
    if (!ok || realpath(s, out) == NULL || strlen(out) >= cap)
        return pkb_fail(err, err_len, -ENOENT,
                        "ab builds its workers from the source tree pkbench was built from, "
                        "and '%s' holds no cmake/ab/ and contenders/host/ (set PKBENCH_SOURCE)",
                        s);
    return 0;
}

/* ---- what a side names --------------------------------------------------------------------- */

/* A directory with a worker in it, built before: used as it is. */
static bool prebuilt(pkb_ab_side *side, const char *dir)
{
    static const char *const where[] = {"%s/pk_contender_host", "%s/worker/pk_contender_host",
                                        "%s/contenders/pk_contender_host"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, where[i], dir);
        if (is_program(p) && realpath(p, side->worker) != NULL) {
            side->prebuilt = true;
            snprintf(side->dir, sizeof side->dir, "%s", dir);
            snprintf(side->describe, sizeof side->describe, "%.100s (built)", side->spec);
            return true;
        }
    }
    return false;
}

/* A key for a path: FNV-1a, in hex. */
static void path_key(const char *path, char *key, size_t cap)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const char *s = path; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    snprintf(key, cap, "tree-%016llx", (unsigned long long)h);
}

/* Where a side's sources come from: exported from a tree-ish of a repository (its key the git
 * trees of its CMakeLists.txt and lib/), or built where they are (a directory outside git). */
struct origin {
    char repo[PATH_MAX];
    char treeish[64]; /* "": built in place */
};

/* The key of treeish's build inputs; *rc 1 when it has none. */
static int
key_of(pkb_ab_side *side, const char *repo, const char *treeish, char *err, size_t err_len)
{
    char arg[128], lib[128], top[128];
    snprintf(arg, sizeof arg, "%.80s:lib", treeish);
    int rc = git(repo, lib, sizeof lib, "rev-parse", "--verify", arg);
    snprintf(arg, sizeof arg, "%.80s:CMakeLists.txt", treeish);
    if (rc == 0)
        rc = git(repo, top, sizeof top, "rev-parse", "--verify", arg);
    if (rc != 0)
        return pkb_fail(err, err_len, -ENOENT, "%s: %.60s has no lib/ and CMakeLists.txt to build",
                        side->label, side->spec);
    snprintf(side->key, sizeof side->key, "lib-%.12s-%.8s", lib, top);
    return 0;
}

/* A revision of the repository. Returns 0, 1 when spec names none, or an error. */
static int
revision(pkb_ab_side *side, const char *repo, struct origin *o, char *err, size_t err_len)
{
    char arg[PATH_MAX + 16], out[256];
    snprintf(arg, sizeof arg, "%s^{commit}", side->spec);
    if (git(repo, side->commit, sizeof side->commit, "rev-parse", "--verify", arg) != 0)
        return 1;
    if (git(repo, out, sizeof out, "describe", "--always", side->commit) == 0)
        snprintf(side->describe, sizeof side->describe, "%.60s (%.60s)", side->spec, out);
    snprintf(o->repo, sizeof o->repo, "%s", repo);
    snprintf(o->treeish, sizeof o->treeish, "%s", side->commit);
    return key_of(side, repo, side->commit, err, err_len);
}

/* What a git work tree holds now, tracked changes and new files alike (not what .gitignore
 * leaves out), as a tree object: `git add -A` into a private index, `git write-tree`. So a work
 * tree whose library matches a revision's shares its build. */
static int snapshot(const char *top, const char *cache, char *tree, size_t cap)
{
    static char env[PATH_MAX + 32];
    if (snprintf(env, sizeof env, "GIT_INDEX_FILE=%s/index.%ld", cache, (long)getpid()) >=
        (int)sizeof env)
        return -ENAMETOOLONG;
    const char *const envs[] = {env, NULL};
    const char *read[] = {"git", "-C", top, "read-tree", "HEAD", NULL};
    const char *add[] = {"git", "-C", top, "add", "-A", "--", "CMakeLists.txt", "lib", NULL};
    const char *write[] = {"git", "-C", top, "write-tree", NULL};
    struct tool t = {.argv = read, .env = envs, .log = -1};
    run_tool(&t); /* a repository without a commit yet starts empty */
    t = (struct tool){.argv = add, .env = envs, .log = -1};
    int rc = run_tool(&t);
    if (rc == 0) {
        t = (struct tool){.argv = write, .env = envs, .log = -1, .out = tree, .cap = cap};
        rc = run_tool(&t);
    }
    unlink(env + strlen("GIT_INDEX_FILE="));
    return rc;
}

/* A source tree (CMakeLists.txt and lib/). A git work tree's content is snapshotted and built
 * like a revision's; any other directory is built where it is, under a key of its path.
 * Returns 0, 1 when dir is none, or an error. */
static int source_tree(pkb_ab_side *side,
                       const char *dir,
                       const char *cache,
                       struct origin *o,
                       char *src,
                       char *err,
                       size_t err_len)
{
    char probe[PATH_MAX + 32], out[PATH_MAX];
    snprintf(probe, sizeof probe, "%s/lib/CMakeLists.txt", dir);
    if (!is_file(probe))
        return 1;
    if (realpath(dir, src) == NULL)
        return pkb_fail(err, err_len, -errno, "%s: %s", dir, strerror(errno));
    snprintf(side->describe, sizeof side->describe, "the tree at %.100s", src);
    bool git_top = git(src, out, sizeof out, "rev-parse", "--show-toplevel", NULL) == 0 &&
                   strcmp(out, src) == 0;
    if (!git_top) {
        path_key(src, side->key, sizeof side->key);
        return 0;
    }
    if (git(src, out, sizeof out, "rev-parse", "--verify", "HEAD") == 0)
        snprintf(side->commit, sizeof side->commit, "%.47s", out);
    if (git(src, out, sizeof out, "describe", "--always", "--dirty") == 0)
        snprintf(side->describe, sizeof side->describe, "%.40s (the tree at %.60s)", out, src);
    const char *argv[] = {"git", "-C", src, "status", "--porcelain", "--untracked-files=no", NULL};
    struct tool t = {.argv = argv, .log = -1, .out = out, .cap = sizeof out};
    side->dirty = run_tool(&t) == 0 && out[0] != '\0';
    if (snapshot(src, cache, o->treeish, sizeof o->treeish) != 0)
        return pkb_fail(err, err_len, -EIO,
                        "%s: cannot take what %s holds (git add -A into a "
                        "private index, write-tree)",
                        side->label, src);
    snprintf(o->repo, sizeof o->repo, "%s", src);
    return key_of(side, src, o->treeish, err, err_len);
}

/* The origin's sources into <cache>/<key>/src, once (under the key's lock). */
static int export_sources(
    const pkb_ab_side *side, const struct origin *o, const char *src, char *err, size_t err_len)
{
    char done[PATH_MAX + 16], tar[PATH_MAX + 16];
    snprintf(done, sizeof done, "%s/.complete", src);
    if (o->treeish[0] == '\0' || is_file(done))
        return 0;
    snprintf(tar, sizeof tar, "%s.tar", src);
    const char *rm[] = {"rm", "-rf", src, NULL};
    const char *archive[] = {"git", "-C",       o->repo,          "archive", "--output",
                             tar,   o->treeish, "CMakeLists.txt", "lib",     NULL};
    const char *untar[] = {"tar", "-xf", tar, "-C", src, NULL};
    struct tool t = {.argv = rm, .log = -1};
    int rc = run_tool(&t);
    if (rc == 0)
        rc = make_dirs(src) == 0 ? 0 : -1;
    if (rc == 0) {
        t = (struct tool){.argv = archive, .log = -1};
        rc = run_tool(&t);
    }
    if (rc == 0) {
        t = (struct tool){.argv = untar, .log = -1};
        rc = run_tool(&t);
    }
    unlink(tar);
    int fd = rc == 0 ? open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        return pkb_fail(err, err_len, -EIO, "%s: cannot export %.60s into %s: %s", side->label,
                        side->spec, src, t.why[0] ? t.why : strerror(errno));
    close(fd);
    return 0;
}

/* ---- building ------------------------------------------------------------------------------ */

struct build {
    pkb_ab_side *side;
    const char *source, *src;
    int log;
    char log_path[PATH_MAX + 16];
    const char *env[3];
    bool ccache;
};

/* One step of a build into the log; 0, or -EIO with the failure (and the log) in err. */
static int
step(struct build *b, const char *what, const char *const *argv, char *err, size_t err_len)
{
    dprintf(b->log, "\n$");
    for (size_t i = 0; argv[i] != NULL; i++)
        dprintf(b->log, " %s", argv[i]);
    dprintf(b->log, "\n");
    struct tool t = {.argv = argv, .log = b->log, .env = b->env};
    if (run_tool(&t) == 0)
        return 0;
    char tail[256] = "";
    FILE *f = fopen(b->log_path, "re");
    if (f != NULL) { /* the log's last line says what failed */
        char buf[4096];
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size > (long)sizeof buf ? size - (long)sizeof buf : 0, SEEK_SET);
        size_t got = fread(buf, 1, sizeof buf, f);
        last_line(buf, got, tail, sizeof tail);
        fclose(f);
    }
    return pkb_fail(err, err_len, -EIO, "%s: %s failed (%s; log %s): %s", b->side->label, what,
                    t.why[0] ? t.why : "it exited non-zero", b->log_path, tail);
}

/* Whether `path` holds exactly `text`. */
static bool file_says(const char *path, const char *text)
{
    char buf[PATH_MAX + 2] = "";
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* The library (the revision's own build, target processkit), then the worker (cmake/ab). */
static int build_both(struct build *b, char *err, size_t err_len)
{
    pkb_ab_side *s = b->side;
    char lib_dir[PATH_MAX + 8], worker_dir[PATH_MAX + 8], probe[PATH_MAX + 32];
    char d_harness[PATH_MAX + 32], d_include[PATH_MAX + 32], d_library[PATH_MAX + 48];
    snprintf(lib_dir, sizeof lib_dir, "%s/lib", s->dir);
    snprintf(worker_dir, sizeof worker_dir, "%s/worker", s->dir);
    const char *launcher = b->ccache ? "-DCMAKE_C_COMPILER_LAUNCHER=ccache" : "-DPK_AB_NO_CCACHE=1";
    snprintf(probe, sizeof probe, "%s/build.ninja", lib_dir);
    int rc = 0;
    if (!is_file(probe)) {
        const char *configure[] = {"cmake",
                                   "-S",
                                   b->src,
                                   "-B",
                                   lib_dir,
                                   "-G",
                                   "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release",
                                   "-DPK_BUILD_BENCH=OFF",
                                   "-DPK_BUILD_TESTS=OFF",
                                   "-DPK_WERROR=OFF",
                                   launcher,
                                   NULL};
        rc = step(b, "configuring the library", configure, err, err_len);
    }
    const char *build_lib[] = {"cmake", "--build", lib_dir, "--target", "processkit", NULL};
    if (rc == 0)
        rc = step(b, "building the library", build_lib, err, err_len);
    snprintf(probe, sizeof probe, "%s/.harness", worker_dir);
    snprintf(d_harness, sizeof d_harness, "-DPK_AB_HARNESS=%s", b->source);
    snprintf(d_include, sizeof d_include, "-DPK_AB_INCLUDE=%s/lib/include", b->src);
    snprintf(d_library, sizeof d_library, "-DPK_AB_LIBRARY=%s/lib/libprocesskit.a", lib_dir);
    char ninja[PATH_MAX + 32], cmake_dir[PATH_MAX + 16];
    snprintf(ninja, sizeof ninja, "%s/build.ninja", worker_dir);
    snprintf(cmake_dir, sizeof cmake_dir, "%s/cmake/ab", b->source);
    if (rc == 0 && (!is_file(ninja) || !file_says(probe, b->source))) {
        const char *configure[] = {"cmake", "-S",      cmake_dir, "-B",      worker_dir, "-G",
                                   "Ninja", d_harness, d_include, d_library, launcher,   NULL};
        rc = step(b, "configuring the worker", configure, err, err_len);
        FILE *f = rc == 0 ? fopen(probe, "we") : NULL;
        if (f != NULL) {
            fputs(b->source, f);
            fclose(f);
        }
    }
    const char *build_worker[] = {"cmake", "--build", worker_dir, NULL};
    if (rc == 0)
        rc = step(b, "building the worker", build_worker, err, err_len);
    snprintf(s->worker, sizeof s->worker, "%.4000s/pk_contender_host", worker_dir);
    if (rc == 0 && !is_program(s->worker))
        rc = pkb_fail(err, err_len, -EIO, "%s: the build made no %s", s->label, s->worker);
    return rc;
}

/* Whether ccache is on PATH. */
static bool have_ccache(void)
{
    char *path = NULL;
    bool ok = pk_resolve_program("ccache", NULL, &path, NULL) == 0;
    free(path);
    return ok;
}

/* Exports (when it comes from git) and builds side s from src in <cache>/<key>, under the key's
 * lock. */
static int build_side(pkb_ab_side *s,
                      const char *source,
                      const char *cache,
                      const struct origin *o,
                      const char *src,
                      bool quiet,
                      char *err,
                      size_t err_len)
{
    if (snprintf(s->dir, sizeof s->dir, "%s/%s", cache, s->key) >= (int)sizeof s->dir)
        return pkb_fail(err, err_len, -ENAMETOOLONG, "%s: the build directory %s/%s is too long",
                        s->label, cache, s->key);
    int rc = make_dirs(s->dir);
    if (rc != 0)
        return pkb_fail(err, err_len, rc, "%s: cannot create %s: %s", s->label, s->dir,
                        strerror(-rc));
    char lock[PATH_MAX + 16];
    snprintf(lock, sizeof lock, "%s.lock", s->dir);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lfd < 0)
        return pkb_fail(err, err_len, -errno, "%s: cannot open %s: %s", s->label, lock,
                        strerror(errno));
    if (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
        if (!quiet)
            fprintf(stderr, "pkbench: %s: waiting for another build of %s\n", s->label, s->key);
        flock(lfd, LOCK_EX);
    }
    static char basedir[PATH_MAX + 32];
    snprintf(basedir, sizeof basedir, "CCACHE_BASEDIR=%s", cache);
    struct build b = {.side = s, .source = source, .src = src, .ccache = have_ccache()};
    b.env[0] = basedir;
    b.env[1] = "CCACHE_NOHASHDIR=true";
    snprintf(b.log_path, sizeof b.log_path, "%s/build.log", s->dir);
    b.log = open(b.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (b.log < 0) {
        rc = pkb_fail(err, err_len, -errno, "%s: cannot write %s: %s", s->label, b.log_path,
                      strerror(errno));
    } else if ((rc = export_sources(s, o, src, err, err_len)) == 0) {
        char first[PATH_MAX + 32];
        snprintf(first, sizeof first, "%s/lib/build.ninja", s->dir);
        if (!quiet && !is_file(first)) /* a build of its own; later ones are ninja's no-op */
            fprintf(stderr, "pkbench: %s: %s: building its library and worker once, in %s%s\n",
                    s->label, s->describe, s->dir, b.ccache ? "" : " (no ccache: slower)");
        rc = build_both(&b, err, err_len);
        close(b.log);
    }
    flock(lfd, LOCK_UN);
    close(lfd);
    return rc;
}

int pkb_ab_side_prepare(pkb_ab_side *side,
                        const char *spec,
                        const pkb_ab_build_options *opts,
                        char *err,
                        size_t err_len)
{
    const char *label = side->label != NULL ? side->label : "side";
    *side = (pkb_ab_side){.label = label};
    double t0 = now_s();
    if (spec == NULL || spec[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "%s: an empty revision", label);
    snprintf(side->spec, sizeof side->spec, "%s", spec);
    const char *repo = opts != NULL && opts->repo != NULL ? opts->repo : ".";
    bool quiet = opts != NULL && opts->quiet;
    char source[PATH_MAX], cache[PATH_MAX], src[PATH_MAX];
    int rc = opts != NULL && opts->source != NULL
                 ? (snprintf(source, sizeof source, "%s", opts->source), 0)
                 : pkb_ab_source(source, sizeof source, err, err_len);
    if (rc != 0)
        return rc;
    const char *c = opts != NULL && opts->cache != NULL ? opts->cache : getenv("PKBENCH_AB_CACHE");
    if (c != NULL && c[0] != '\0')
        snprintf(cache, sizeof cache, "%s", c);
    else
        snprintf(cache, sizeof cache, "%.4000s/build/ab", source);
    char wanted[PATH_MAX];
    snprintf(wanted, sizeof wanted, "%s", cache);
    rc = make_dirs(wanted);
    if (rc != 0 || realpath(wanted, cache) == NULL)
        return pkb_fail(err, err_len, rc != 0 ? rc : -errno, "cannot create the build cache %s",
                        wanted);
    /* A revision first: a branch may share a directory's name. */
    struct origin o = {0};
    rc = revision(side, repo, &o, err, err_len);
    if (rc == 1 && is_dir(spec) && prebuilt(side, spec)) {
        side->build_s = now_s() - t0;
        return 0;
    }
    if (rc == 1 && is_dir(spec))
        rc = source_tree(side, spec, cache, &o, src, err, err_len);
    if (rc == 1)
        return pkb_fail(err, err_len, -EINVAL,
                        "%s: '%.100s' is no revision of the repository at %.100s, no source tree "
                        "(CMakeLists.txt and lib/) and no built tree (pk_contender_host)",
                        label, spec, repo);
    if (rc == 0 && o.treeish[0] != '\0')
        snprintf(src, sizeof src, "%.3900s/%.90s/src", cache, side->key);
    if (rc == 0)
        rc = build_side(side, source, cache, &o, src, quiet, err, err_len);
    side->build_s = now_s() - t0;
    return rc;
}
