/*
 * history — the model of `pkbench history` (history.h): hosts, their files in the order of the
 * project's history (git ancestry through common/git.h, else time), every series'
 * values over them, and its change points (common/changepoint.h) with the environment keys that
 * changed at each. history_render.c writes it out.
 */
#define _GNU_SOURCE
#include "report/history.h"

#include "common/git.h"
#include "results/verdict.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A formatted note, malloc'd: 1 (a note was made), or -ENOMEM. */
__attribute__((format(printf, 2, 3))) static int note(char **out, const char *fmt, ...)
{
    pkb_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    pkb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.failed) {
        pkb_buf_free(&b);
        return -ENOMEM;
    }
    *out = b.data;
    return 1;
}

/* ==== time ==================================================================================== */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static long long days_from_civil(long long y, int m, int d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* An ISO 8601 time ("2026-12-05T13:43:49Z", "...+01:00") as seconds since the epoch; NAN when
 * it is not one. */
static double iso_seconds(const char *s)
{
    int y, mo, d, h, mi, n = 0;
    double sec;
    if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
        return NAN;
    double t = (double)days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    const char *z = s + n;
    int oh, om;
    if ((z[0] == '+' || z[0] == '-') && sscanf(z + 1, "%2d:%2d", &oh, &om) == 2)
        t -= (z[0] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    return t;
}

/* ==== git ===================================================================================== */

/* Ends the line at `line` and returns the next one (NULL after the last). */
static char *next_line(char *line)
{
    char *end = strchr(line, '\n');
    if (end == NULL)
        return NULL;
    *end = '\0';
    return end + 1;
}

/* The commits of files[0..n) that the repository knows, as a list of lines for git's stdin;
 * *unknown lists the others (12 digits each). */
static int known_commits(const pkb_many *m,
                         const size_t *files,
                         size_t n,
                         const char *repo,
                         pkb_buf *known,
                         pkb_buf *unknown,
                         size_t *nunknown)
{
    pkb_buf ask = {0};
    for (size_t i = 0; i < n; i++) {
        const char *c = m->files[files[i]].id.commit;
        bool asked = false;
        for (size_t j = 0; j < i && !asked; j++)
            asked = m->files[files[j]].id.commit != NULL &&
                    strcmp(m->files[files[j]].id.commit, c != NULL ? c : "") == 0;
        if (c != NULL && strcmp(c, "unknown") != 0 && !asked)
            pkb_buf_printf(&ask, "%s\n", c);
    }
    if (ask.failed) {
        pkb_buf_free(&ask);
        return -ENOMEM;
    }
    char *answer =
        ask.len > 0
            ? pkb_git(repo, (const char *const[]){"cat-file", "--batch-check", NULL}, &ask, 60000)
            : calloc(1, 1);
    pkb_buf_free(&ask);
    if (answer == NULL)
        return -ENOENT; /* no repository there, or no git */
    /* "<sha> commit <size>" for a commit it has, "<name> missing" for one it lacks. */
    for (char *line = answer, *next; line != NULL && *line != '\0'; line = next) {
        next = next_line(line);
        char sha[128], type[32];
        if (sscanf(line, "%127s %31s", sha, type) != 2)
            continue;
        if (strcmp(type, "commit") == 0) {
            pkb_buf_printf(known, "%s\n", sha);
        } else {
            pkb_buf_printf(unknown, "%s%.12s", *nunknown > 0 ? ", " : "", sha);
            (*nunknown)++;
        }
    }
    free(answer);
    return known->failed || unknown->failed ? -ENOMEM : 0;
}

/* Each file's place in the repository's ancestry: rank[i] for files[i] (the position of its
 * commit in `git rev-list --topo-order --reverse`), or a note saying why there is none. */
static int
ancestry(const pkb_many *m, const size_t *files, size_t n, const char *repo, long *rank, char **why)
{
    pkb_buf known = {0}, unknown = {0};
    size_t nunknown = 0;
    int rc = known_commits(m, files, n, repo, &known, &unknown, &nunknown);
    size_t none = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = m->files[files[i]].id.commit;
        none += c == NULL || strcmp(c, "unknown") == 0;
    }
    if (rc == 0 && none > 0)
        pkb_buf_printf(&unknown, "%s%zu file%s recording none", nunknown > 0 ? ", " : "", none,
                       none == 1 ? "" : "s");
    nunknown += none > 0;
    if (rc == -ENOENT)
        rc = note(why,
                  "no git repository at %s: ordered by each revision's commit date, then by "
                  "when the run started",
                  repo);
    else if (rc == 0 && nunknown > 0)
        rc = note(why,
                  "%zu revision%s not in the repository at %s (%s): ordered by each "
                  "revision's commit date, then by when the run started",
                  nunknown, nunknown == 1 ? " is" : "s are", repo, unknown.data);
    char *list = NULL;
    if (rc == 0 && known.len > 0) {
        list = pkb_git(
            repo, (const char *const[]){"rev-list", "--topo-order", "--reverse", "--stdin", NULL},
            &known, 60000);
        if (list == NULL)
            rc = note(why,
                      "git rev-list failed in %s: ordered by each revision's commit date, "
                      "then by when the run started",
                      repo);
    }
    long position = 0;
    for (char *line = list, *next; line != NULL && *line != '\0'; line = next, position++) {
        next = next_line(line);
        for (size_t i = 0; i < n; i++)
            if (m->files[files[i]].id.commit != NULL &&
                strcmp(m->files[files[i]].id.commit, line) == 0)
                rank[i] = position;
    }
    free(list);
    pkb_buf_free(&known);
    pkb_buf_free(&unknown);
    return rc;
}

/* ==== hosts and order ========================================================================= */

struct order_key {
    size_t file;
    long rank;     /* ancestry position; unused when ordering by time */
    int dirty;     /* a dirty tree after its clean commit */
    double commit; /* commit date, seconds (NAN: unknown) */
    double start;  /* the run's start */
};

static int by_ancestry(const void *pa, const void *pb)
{
    const struct order_key *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->dirty != b->dirty)
        return a->dirty < b->dirty ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->file < b->file ? -1 : a->file > b->file;
}

static int by_time(const void *pa, const void *pb)
{
    const struct order_key *a = pa, *b = pb;
    /* A file without a commit date goes by its start alone. */
    double ta = isnan(a->commit) ? a->start : a->commit,
           tb = isnan(b->commit) ? b->start : b->commit;
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->file < b->file ? -1 : a->file > b->file;
}

/* Puts host->files in history order. */
static int order_host(const pkb_history *h, pkb_history_host *host)
{
    size_t n = host->nfiles;
    struct order_key *k = calloc(n > 0 ? n : 1, sizeof *k);
    long *rank = calloc(n > 0 ? n : 1, sizeof *rank);
    if (k == NULL || rank == NULL) {
        free(k);
        free(rank);
        return -ENOMEM;
    }
    const char *repo = h->opts.repo != NULL ? h->opts.repo : ".";
    int rc = ancestry(&h->files, host->files, n, repo, rank, &host->order_note);
    host->ancestry = rc == 0;
    for (size_t i = 0; i < n; i++) {
        const pkb_identity *id = &h->files.files[host->files[i]].id;
        k[i] = (struct order_key){.file = host->files[i],
                                  .rank = rank[i],
                                  .dirty = id->dirty == 1,
                                  .commit = iso_seconds(id->commit_time),
                                  .start = iso_seconds(id->created)};
        if (isnan(k[i].start))
            k[i].start = 0;
    }
    qsort(k, n, sizeof *k, host->ancestry ? by_ancestry : by_time);
    for (size_t i = 0; i < n; i++)
        host->files[i] = k[i].file;
    free(k);
    free(rank);
    return rc < 0 ? rc : 0;
}

/* Groups the files by host (name and platform), keeping --host's only. */
static int group_hosts(pkb_history *h, char *err, size_t err_len)
{
    const pkb_many *m = &h->files;
    h->hosts = calloc(m->n, sizeof *h->hosts);
    if (h->hosts == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    for (size_t f = 0; f < m->n; f++) {
        const pkb_identity *id = &m->files[f].id;
        if (h->opts.host != NULL && strcmp(h->opts.host, id->host) != 0 &&
            strcmp(h->opts.host, id->host_id) != 0)
            continue;
        size_t i = 0;
        while (i < h->nhosts &&
               (strcmp(h->hosts[i].host, id->host) != 0 || strcmp(h->hosts[i].os, id->os) != 0))
            i++;
        pkb_history_host *host = &h->hosts[i];
        if (i == h->nhosts) {
            host->host = strdup(id->host);
            host->os = strdup(id->os);
            host->files = calloc(m->n, sizeof *host->files);
            h->nhosts++;
            if (host->host == NULL || host->os == NULL || host->files == NULL)
                return pkb_fail(err, err_len, -ENOMEM, "out of memory");
        }
        host->files[host->nfiles++] = f;
    }
    if (h->nhosts == 0) {
        pkb_buf names = {0};
        for (size_t f = 0; f < m->n; f++)
            if (names.data == NULL || strstr(names.data, m->files[f].id.host) == NULL)
                pkb_buf_printf(&names, "%s%s", names.len > 0 ? ", " : "", m->files[f].id.host);
        pkb_fail(err, err_len, -ENOENT, "--host: no file of host '%s' (the files' hosts: %s)",
                 h->opts.host, names.failed ? "?" : names.data);
        pkb_buf_free(&names);
        return -ENOENT;
    }
    return 0;
}

/* ==== series ================================================================================== */

static pkb_history_series *
find_series(pkb_history_host *host, const char *suite, const pkb_results_series *s, size_t cap)
{
    for (size_t i = 0; i < host->nseries; i++)
        if (strcmp(host->series[i].suite, suite) == 0 && strcmp(host->series[i].name, s->name) == 0)
            return &host->series[i];
    pkb_history_series *x = &host->series[host->nseries++];
    x->suite = strdup(suite);
    x->name = strdup(s->name);
    x->scenario = strdup(s->scenario);
    x->contender = strdup(s->contender);
    x->at = calloc(cap, sizeof *x->at);
    x->value = calloc(cap, sizeof *x->value);
    if (!x->suite || !x->name || !x->scenario || !x->contender || !x->at || !x->value)
        return NULL;
    return x;
}

/* The value of s in file r: its median, or with --ratio its ratio to its baseline (0: none). */
static double
value_of(const pkb_history *h, const pkb_verdict_set *set, const pkb_results_series *s)
{
    if (!h->opts.ratio)
        return s->sum.median;
    const pkb_verdict *v = pkb_verdict_set_find(set, s);
    return v != NULL ? v->s.ratio.estimate : 0;
}

/* Every series of the host's files, in order, through the filter. */
static int collect(
    const pkb_history *h, pkb_history_host *host, const regex_t *filter, char *err, size_t err_len)
{
    size_t cap = 0;
    for (size_t i = 0; i < host->nfiles; i++)
        cap += h->files.files[host->files[i]].r.nseries;
    host->series = calloc(cap > 0 ? cap : 1, sizeof *host->series);
    if (host->series == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    for (size_t i = 0; i < host->nfiles; i++) {
        const pkb_results *r = &h->files.files[host->files[i]].r;
        pkb_verdict_set set = {0};
        if (h->opts.ratio) {
            int rc = pkb_verdict_contenders(
                r, NULL, &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE}, &set, err,
                err_len);
            if (rc != 0)
                return rc;
        }
        for (size_t k = 0; k < r->nseries; k++) {
            const pkb_results_series *s = &r->series[k];
            if (!s->measured || (filter != NULL && regexec(filter, s->name, 0, NULL, 0) != 0))
                continue;
            double v = value_of(h, &set, s);
            if (!(v > 0))
                continue; /* --ratio: a baseline, or a series without one */
            pkb_history_series *x = find_series(host, r->suite, s, host->nfiles);
            if (x == NULL) {
                pkb_verdict_set_free(&set);
                return pkb_fail(err, err_len, -ENOMEM, "out of memory");
            }
            if (x->n > 0 && x->at[x->n - 1] == i)
                continue; /* a name twice in one file: its first */
            x->at[x->n] = i;
            x->value[x->n++] = v;
        }
        pkb_verdict_set_free(&set);
    }
    return 0;
}

/* The keys whose values differ between files a and b: what results/identity.h compares files on,
 * but the revision (which a history expects to change). */
static int env_changes(const pkb_history *h, size_t a, size_t b, pkb_history_change *c)
{
    const pkb_results *r[2] = {&h->files.files[a].r, &h->files.files[b].r};
    char *revision = "revision";
    char **keys = NULL;
    size_t n = 0;
    int rc = pkb_identity_compared_keys(r, 2, &revision, 1, &keys, &n);
    c->env_keys = rc == 0 ? calloc(n > 0 ? n : 1, sizeof *c->env_keys) : NULL;
    if (rc == 0 && c->env_keys == NULL)
        rc = -ENOMEM;
    char va[512], vb[512];
    for (size_t k = 0; rc == 0 && k < n; k++) {
        pkb_identity_key(r[0], NULL, keys[k], va, sizeof va);
        pkb_identity_key(r[1], NULL, keys[k], vb, sizeof vb);
        if (strcmp(va, vb) != 0 && (c->env_keys[c->nenv_keys++] = strdup(keys[k])) == NULL)
            rc = -ENOMEM;
    }
    pkb_strings_free(keys, n);
    return rc;
}

static int find_changes(const pkb_history *h, pkb_history_host *host, pkb_history_series *x)
{
    pks_changepoint *cps = NULL;
    size_t n = 0;
    int rc = pks_changepoints(x->value, x->n, &h->opts.cp, &cps, &n);
    if (rc != 0)
        return rc;
    x->changes = calloc(n > 0 ? n : 1, sizeof *x->changes);
    if (x->changes == NULL) {
        free(cps);
        return -ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pkb_history_change *c = &x->changes[x->nchanges++];
        c->cp = cps[i];
        c->before = x->at[cps[i].index - 1];
        c->after = x->at[cps[i].index];
        rc = env_changes(h, host->files[c->before], host->files[c->after], c);
    }
    free(cps);
    return rc;
}

/* ==== the whole =============================================================================== */

void pkb_history_free(pkb_history *h)
{
    for (size_t i = 0; i < h->nhosts; i++) {
        pkb_history_host *host = &h->hosts[i];
        for (size_t k = 0; k < host->nseries; k++) {
            pkb_history_series *x = &host->series[k];
            for (size_t c = 0; c < x->nchanges; c++)
                pkb_strings_free(x->changes[c].env_keys, x->changes[c].nenv_keys);
            free(x->changes);
            free(x->suite);
            free(x->name);
            free(x->scenario);
            free(x->contender);
            free(x->at);
            free(x->value);
        }
        free(host->series);
        free(host->files);
        free(host->host);
        free(host->os);
        free(host->order_note);
    }
    free(h->hosts);
    pkb_many_free(&h->files);
    memset(h, 0, sizeof *h);
}

int pkb_history_build(const char *const *paths,
                      size_t n,
                      const pkb_history_options *opts,
                      pkb_history *out,
                      char *err,
                      size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->opts = opts != NULL ? *opts : (pkb_history_options){0};
    regex_t filter;
    bool have_filter = out->opts.filter != NULL;
    if (have_filter && regcomp(&filter, out->opts.filter, REG_EXTENDED | REG_NOSUB) != 0)
        return pkb_fail(err, err_len, -EINVAL,
                        "--filter: '%s' is not an extended regular "
                        "expression",
                        out->opts.filter);
    int rc = pkb_many_load(paths, n, &out->files, err, err_len);
    if (rc == 0)
        rc = group_hosts(out, err, err_len);
    for (size_t i = 0; rc == 0 && i < out->nhosts; i++) {
        pkb_history_host *host = &out->hosts[i];
        rc = order_host(out, host);
        if (rc != 0) {
            pkb_fail(err, err_len, rc, "ordering the files of %s: %s", host->host, strerror(-rc));
            break;
        }
        rc = collect(out, host, have_filter ? &filter : NULL, err, err_len);
        for (size_t k = 0; rc == 0 && k < host->nseries; k++) {
            rc = find_changes(out, host, &host->series[k]);
            if (rc != 0)
                pkb_fail(err, err_len, rc, "change points of %s: %s", host->series[k].name,
                         strerror(-rc));
        }
    }
    if (have_filter)
        regfree(&filter);
    if (rc != 0)
        pkb_history_free(out);
    return rc;
}
