/*
 * build — the two sides of `pkbench ab`: what a side names (a git revision, a source tree, or a
 * tree already built) and the measuring worker built for it (build.c).
 *
 * A revision's library is built once and kept: its build inputs (the top-level CMakeLists.txt and
 * lib/, taken with `git archive`) go to <cache>/<key>/src, where <key> names their git trees, so
 * every commit whose library is the same shares one build, and a second `ab` of the same
 * revisions finds it ready (ninja has nothing to do). The revision's own build system builds
 * lib/ (Release, benchmark side and tests off, target processkit); then cmake/ab/ builds
 * contenders/host/host.c with this tree's contenders against the revision's header and static
 * library: the worker `pk_contender_host`. The compiler goes through ccache when there is one
 * (its base directory the cache, so two keys' sources share its entries). A key's build is
 * serialised by a lock file, so two `ab` (or two tests) never build one key at once.
 *
 * The cache is <source>/build/ab, or $PKBENCH_AB_CACHE; <source> is the tree pkbench was built
 * from, or $PKBENCH_SOURCE.
 */
#ifndef PKB_REGRESS_BUILD_H
#define PKB_REGRESS_BUILD_H

#include <stdbool.h>
#include <stddef.h>

/* Room for a path (PATH_MAX, which a strict C17 header does not define). */
#define PKB_AB_PATH_MAX 4096

typedef struct pkb_ab_side {
    const char *label;            /* "base" or "head" */
    char spec[PKB_AB_PATH_MAX];   /* as given: a revision, or a directory */
    char commit[48];              /* the commit it builds; "" when it is no git tree */
    char describe[128];           /* `git describe --always --dirty`, or the directory */
    bool dirty;                   /* a source tree with changes to tracked files */
    bool prebuilt;                /* a directory holding a worker already: nothing is built */
    char key[96];                 /* the build's name in the cache */
    char dir[PKB_AB_PATH_MAX];    /* the build's directory */
    char worker[PKB_AB_PATH_MAX]; /* the pk_contender_host to start */
    double build_s;               /* how long making sure it is built took */
} pkb_ab_side;

typedef struct pkb_ab_build_options {
    const char *repo;   /* where revisions are resolved: a directory in a git work tree; NULL: . */
    const char *source; /* the harness tree (cmake/ab, contenders/); NULL: as above */
    const char *cache;  /* NULL: as above */
    bool quiet;         /* no progress lines */
} pkb_ab_build_options;

/* The harness tree pkbench was built from ($PKBENCH_SOURCE overrides it), checked to hold what a
 * worker is built from. Returns 0, or -ENOENT with a message in err. */
int pkb_ab_source(char *out, size_t cap, char *err, size_t err_len);

/* Resolves `spec` into *side (label kept) and makes sure its worker is built: a directory with a
 * pk_contender_host (directly, or in worker/) is used as it is; a directory with CMakeLists.txt
 * and lib/ is a source tree built in place of its own key; anything else must name a commit of
 * the repository. Progress on stderr ("pkbench: building base (HEAD~1, 3f2a9c1): ..."). Returns
 * 0, or a negative errno with a one-line message in err (a spec that is none of those, a git or
 * build failure with the log's path and last line). */
int pkb_ab_side_prepare(pkb_ab_side *side,
                        const char *spec,
                        const pkb_ab_build_options *opts,
                        char *err,
                        size_t err_len);

/* `git -C dir ARGS...` (args NULL-terminated): its exit status, with the first line it wrote on
 * stdout in out (when it failed: the last line of its stderr), or -1 when it could not run. out
 * may be NULL. */
int pkb_ab_git(const char *dir, const char *const *args, char *out, size_t cap);

#endif /* PKB_REGRESS_BUILD_H */
