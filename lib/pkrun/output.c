/*
 * What pkrun says about a run, the same on every platform: the --json outcome (schema "pkrun",
 * version 2), the --verbose lines, the one line for a start that failed, and the --keep fail
 * verdict. Each platform's run fills a struct pkr_report (the POSIX relay, or the Windows line
 * callback, says how each stream reached pkrun's output); nothing here looks at how.
 *
 * The JSON is made in memory (measured, then written into a buffer of that size: Windows has no
 * open_memstream) and written by pkr_output_write: "-" is pkrun's stdout, anything else follows
 * the one rule for files (pkr_file_write: output.posix.c, output.windows.c).
 */
#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- measured text ------------------------------------------------------------------------ */

/* The JSON is made twice: once to measure it (p NULL), then into a buffer of that size. */
struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *s, size_t n)
{
    if (t->p != NULL && t->len + n < t->cap)
        memcpy(t->p + t->len, s, n);
    t->len += n;
}

static void put(struct text *t, const char *fmt, ...) PKR_PRINTF(2, 3);
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool room = t->p != NULL && t->len < t->cap;
    int n = vsnprintf(room ? t->p + t->len : NULL, room ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    t->len += n > 0 ? (size_t)n : 0;
}

/* ---- the JSON outcome ---------------------------------------------------------------------- */

/* A JSON string: escapes, and U+FFFD for bytes that are not valid UTF-8. */
static void json_string(struct text *t, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    add(t, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            put(t, "\\%c", c), i++;
        } else if (c == '\n') {
            add(t, "\\n", 2), i++;
        } else if (c == '\t') {
            add(t, "\\t", 2), i++;
        } else if (c < 0x20 || c == 0x7f) {
            put(t, "\\u%04x", c), i++;
        } else if (c < 0x80) {
            /* a run of plain ASCII at once */
            size_t j = i;
            while (j < n && u[j] >= 0x20 && u[j] < 0x7f && u[j] != '"' && u[j] != '\\')
                j++;
            add(t, s + i, j - i);
            i = j;
        } else {
            size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
            bool ok = len > 0 && i + len <= n;
            for (size_t k = 1; ok && k < len; k++)
                ok = (u[i + k] & 0xC0) == 0x80;
            /* overlongs, surrogates and values above U+10FFFF */
            if (ok && len == 3)
                ok = !(c == 0xE0 && u[i + 1] < 0xA0) && !(c == 0xED && u[i + 1] > 0x9F);
            if (ok && len == 4)
                ok = !(c == 0xF0 && u[i + 1] < 0x90) && !(c == 0xF4 && u[i + 1] > 0x8F);
            if (ok) {
                add(t, s + i, len);
                i += len;
            } else {
                add(t, "\\ufffd", 6);
                i++;
            }
        }
    }
    add(t, "\"", 1);
}

/* What was kept: fail keeps a head. */
static const char *keep_name(pk_keep keep)
{
    return keep == PK_KEEP_TAIL ? "tail" : "head";
}

/* One stream: how it reached pkrun's output, what was delivered, and (captured) what was kept. */
static void
json_stream(struct text *t, const char *name, const struct pkr_stream_report *s, pk_keep keep)
{
    static const char *const forwarding[] = {
        [PKR_INHERITED] = "inherited",
        [PKR_CLOSED] = "closed",
        [PKR_MERGED] = "merged into stdout",
        [PKR_RELAYED] = "relayed",
    };
    put(t, "    \"%s\": {", name);
    if (s->forwarding != PKR_RELAYED) {
        put(t, "\"forwarding\": \"%s\"}", forwarding[s->forwarding]);
        return;
    }
    put(t, "\"forwarding\": \"relayed\", \"bytes\": %llu, \"delivered_bytes\": %llu",
        (unsigned long long)s->bytes, (unsigned long long)s->delivered_bytes);
    if (s->reader_gone)
        put(t, ", \"reader_gone\": true");
    if (s->write_error != 0)
        put(t, ", \"write_error\": \"%s\"", pk_errname(-s->write_error));
    if (s->capture != NULL) {
        const char *text;
        size_t len;
        bool truncated;
        pkr_capture_kept(s->capture, &text, &len, &truncated);
        put(t, ", \"lines\": %llu, \"truncated\": %s, \"kept\": \"%s\", \"kept_bytes\": %zu",
            (unsigned long long)pkr_capture_lines(s->capture), truncated ? "true" : "false",
            keep_name(keep), len);
        put(t, ", \"text\": ");
        json_string(t, text, len);
    }
    put(t, "}");
}

/* How the run ended: the outcome's kind and its details, pkrun's own exit status, the times. */
static void json_outcome(struct text *t, const struct pkr_report *rep)
{
    const pk_outcome *oc = &rep->res->outcome;
    put(t, "  \"outcome\": \"%s\",\n", pk_outcome_kind_name(rep->kind));
    if (oc->kind == PK_OUTCOME_SPAWN_FAILED) {
        put(t, "  \"stage\": \"%s\",\n  \"error\": \"%s\",\n", pk_stage_name(oc->stage),
            pk_errname(oc->error));
    } else if (oc->kind == PK_OUTCOME_CRASHED) { /* Windows: an unhandled exception */
        const char *name = pk_ntstatus_name(oc->ntstatus);
        put(t, "  \"ntstatus\": \"0x%08X\",\n  \"ntstatus_name\": \"%s\",\n",
            (unsigned)oc->ntstatus, name != NULL ? name : "unknown");
    } else if (oc->signo != 0) {
        put(t, "  \"signal\": %d,\n  \"core_dumped\": %s,\n", oc->signo,
            oc->core_dumped ? "true" : "false");
    } else {
        put(t, "  \"exit_code\": %d,\n", oc->code);
    }
    if (rep->run_rc != 0)
        put(t, "  \"run_error\": \"%s\",\n", pk_errname(rep->run_rc));
    put(t, "  \"pkrun_exit_status\": %d,\n", rep->status);
    put(t, "  \"wall_ms\": %.3f,\n  \"user_ms\": %.3f,\n  \"sys_ms\": %.3f,\n",
        (double)oc->wall_ns / 1e6, (double)oc->user_us / 1e3, (double)oc->sys_us / 1e3);
}

/* AUTO gave less than the whole tree: a process group where no cgroup was delegated. A cgroup
 * (Linux) and a Job Object (Windows) are the whole tree; --foreground asks for less itself. */
static bool downgraded(const struct pkr_options *o, pk_containment got)
{
    return o->containment == PK_CONTAIN_AUTO && !o->foreground && got != PK_CONTAIN_CGROUP &&
           got != PK_CONTAIN_JOB;
}

static void json_text(struct text *t, const struct pkr_report *rep)
{
    const struct pkr_options *o = rep->o;
    const pk_result *r = rep->res;
    put(t, "{\n  \"schema\": \"pkrun\",\n  \"schema_version\": 2,\n  \"argv\": [");
    for (char **a = o->argv; *a != NULL; a++) {
        json_string(t, *a, strlen(*a));
        if (a[1] != NULL)
            put(t, ", ");
    }
    put(t, "],\n  \"spawn_mechanism\": \"%s\",\n", pk_mechanism_name(pk_spawn_mechanism()));
    put(t, "  \"containment\": \"%s\",\n  \"containment_requested\": \"%s\",\n",
        pk_containment_name(r->containment), pk_containment_name(o->containment));
    put(t, "  \"containment_downgraded\": %s,\n", downgraded(o, r->containment) ? "true" : "false");
    json_outcome(t, rep);
    put(t, "  \"streams\": {\n");
    json_stream(t, "stdout", &rep->streams[0], o->keep);
    put(t, ",\n");
    json_stream(t, "stderr", &rep->streams[1], o->keep);
    put(t, "\n  }\n}\n");
}

int pkr_json(const struct pkr_report *rep, char **text, size_t *len)
{
    struct text t = {0};
    json_text(&t, rep);
    t = (struct text){.p = malloc(t.len + 1), .cap = t.len + 1};
    if (t.p == NULL)
        return -ENOMEM;
    json_text(&t, rep);
    t.p[t.len < t.cap ? t.len : t.cap - 1] = '\0';
    *text = t.p;
    *len = t.len;
    return 0;
}

int pkr_output_check(const char *path)
{
    return strcmp(path, "-") == 0 ? 0 : pkr_file_check(path);
}

int pkr_output_write(const char *path, const char *data, size_t len)
{
    uint64_t done = 0;
    return strcmp(path, "-") == 0 ? pkr_write_std(1, data, len, &done)
                                  : pkr_file_write(path, data, len);
}

int pkr_json_write(const struct pkr_report *rep)
{
    char *text = NULL;
    size_t len = 0;
    int rc = pkr_json(rep, &text, &len);
    if (rc == 0)
        rc = pkr_output_write(rep->o->json, text, len);
    free(text);
    const char *why = rc == -ENXIO       ? "no reader opened it"
                      : rc == -ETIMEDOUT ? "its reader took nothing"
                                         : NULL;
    if (why != NULL)
        fprintf(stderr, "pkrun: --json: cannot write '%s': %s for %d s\n", rep->o->json, why,
                PKR_OUTPUT_WAIT_MS / 1000);
    else if (rc == -EINTR)
        fprintf(stderr, "pkrun: --json: gave up writing '%s': a signal told pkrun to stop\n",
                rep->o->json);
    else if (rc != 0)
        fprintf(stderr, "pkrun: --json: cannot write '%s': %s\n", rep->o->json, pk_strerror(rc));
    return rc;
}

/* ---- what pkrun says on stderr ------------------------------------------------------------- */

void pkr_say_start(const struct pkr_options *o, bool relayed, bool merged)
{
    fprintf(stderr, "pkrun: spawn mechanism %s, containment requested %s, host offers %s; ",
            pk_mechanism_name(pk_spawn_mechanism()), pk_containment_name(o->containment),
            pk_containment_name(pk_host_containment()));
    if (!relayed)
        fprintf(stderr, "output inherited\n");
    else
        fprintf(stderr, "output relayed through pipes%s\n",
                merged ? " (stdout and stderr are one file: one pipe)" : "");
}

void pkr_say_end(const struct pkr_options *o,
                 const pk_result *res,
                 pk_outcome_kind kind,
                 int status)
{
    fprintf(stderr, "pkrun: containment %s%s; outcome %s", pk_containment_name(res->containment),
            downgraded(o, res->containment)
                ? " (downgraded: no cgroup v2 delegated here; setsid descendants can escape)"
                : "",
            pk_outcome_kind_name(kind));
    if (res->outcome.kind == PK_OUTCOME_CRASHED)
        fprintf(stderr, ", NTSTATUS 0x%08X", (unsigned)res->outcome.ntstatus);
    else if (res->outcome.signo != 0)
        fprintf(stderr, ", signal %d", res->outcome.signo);
    else if (res->outcome.kind != PK_OUTCOME_SPAWN_FAILED)
        fprintf(stderr, ", exit code %d", res->outcome.code);
    fprintf(stderr, "; wall %.1f ms; exit status %d\n", (double)res->outcome.wall_ns / 1e6, status);
}

int pkr_start_failed(const struct pkr_options *o, int rc, const pk_result *f)
{
    const char *prog = o->argv[0];
    if (rc == PK_ENOTFOUND) {
        fprintf(stderr, "pkrun: %s: not found in PATH (searched %s)\n", prog,
                f->searched ? f->searched : "");
        return PKR_EXIT_NOTFOUND;
    }
    if (rc == PK_ENOCONTAIN) {
        fprintf(stderr, "pkrun: --containment %s: %s\n", pk_containment_name(o->containment),
                pk_strerror(rc));
        return PKR_EXIT_OWN;
    }
    fprintf(stderr, "pkrun: %s: %s (stage %s)\n", prog, pk_strerror(rc),
            pk_stage_name(f->outcome.stage));
    if (f->outcome.stage == PK_STAGE_EXEC || f->outcome.stage == PK_STAGE_RESOLVE)
        return rc == -ENOENT ? PKR_EXIT_NOTFOUND : PKR_EXIT_NOEXEC;
    return PKR_EXIT_OWN;
}

bool pkr_over_fail_cap(const struct pkr_stream_report streams[2])
{
    bool over = false;
    for (int i = 0; i < 2; i++) {
        struct pkr_capture *c = streams[i].capture;
        const char *text;
        size_t len;
        bool truncated = false;
        if (c != NULL)
            pkr_capture_kept(c, &text, &len, &truncated);
        if (truncated) {
            fprintf(stderr, "pkrun: output over the --keep fail cap: %s %llu bytes / %llu lines\n",
                    i == 0 ? "stdout" : "stderr", (unsigned long long)c->total_bytes,
                    (unsigned long long)pkr_capture_lines(c));
            over = true;
        }
    }
    return over;
}
