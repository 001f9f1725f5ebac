/*
 * The words of a comparison (compare.h): why a row is undecidable, the drift line, and the one
 * summary line on stderr that says what made the exit status non-zero. Shared by compare's three
 * formats (render.c) and by check (cli.c); kept apart from compare.c, which computes.
 */
#define _GNU_SOURCE
#include "regress/compare.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pkb_compare_why(const pkb_compare *c, const pkb_compare_row *r, char *buf, size_t len)
{
    if (r->machine_changed && r->group != NULL && len > 0) {
        char why[160];
        pkb_drift_why(&c->drift, r->group, why, sizeof why);
        snprintf(buf, len, "machine changed: %s", why[0] ? why : "no control paired with it");
        return;
    }
    pkb_verdict v = {.s = r->s,
                     .cv_base = r->cv_base,
                     .cv_cand = r->cv_cand,
                     .d = r->d,
                     .paired = r->paired,
                     .pair = r->pair,
                     .level = r->ab_ci_level};
    if (r->ab_open) { /* pkbench ab stopped before this series' last look */
        snprintf(buf, len, "open: the run stopped after %d rounds, before its last look",
                 r->ab_rounds);
        return;
    }
    pkb_verdict_why(&v, c->opts.cv_limit, "base", c->sides ? "head" : "new", buf, len);
}

void pkb_compare_why_raw(const pkb_compare *c, const pkb_compare_row *r, char *buf, size_t len)
{
    pkb_verdict_why(&r->raw, c->opts.cv_limit, "base", "new", buf, len);
}

/* "7.9% slower [5.1%, 10.2%]" (or "faster", or "unchanged" within 0.05%). */
static void drift_words(const pks_interval *i, char *buf, size_t len)
{
    double d = 100 * (i->estimate - 1), lo = 100 * (i->lo - 1), hi = 100 * (i->hi - 1);
    if (fabs(d) < 0.05)
        snprintf(buf, len, "unchanged [%+.1f%%, %+.1f%%]", lo, hi);
    else
        snprintf(buf, len, "%.1f%% %s [%+.1f%%, %+.1f%%]", fabs(d), d > 0 ? "slower" : "faster", lo,
                 hi);
}

void pkb_compare_drift_line(const pkb_compare *c, char *buf, size_t len)
{
    if (len == 0)
        return;
    const pkb_drift *d = &c->drift;
    if (!d->available) {
        snprintf(buf, len, "machine drift: not measured (%s); verdicts on the raw samples",
                 d->why_not[0] ? d->why_not : "no controls");
        return;
    }
    char all[96];
    drift_words(&d->groups[0].ratio, all, sizeof all);
    size_t bad = 0;
    for (size_t i = 0; i < d->ngroups; i++)
        bad += d->groups[i].state != PKB_DRIFT_OK;
    const char *how = !c->drift_applied        ? "not applied (--no-drift-correction): raw verdicts"
                      : c->machine_changed > 0 ? "corrected where its controls allow"
                                               : "every other series corrected for it";
    int w = snprintf(buf, len, "machine drift: %s, from %zu control%s in both files; %s", all,
                     d->ncontrols, d->ncontrols == 1 ? "" : "s", how);
    if (bad > 0 && w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " (%zu of %zu control groups cannot correct)", bad,
                 d->ngroups);
}

/* "name (why)" for every note of `kind`, after `lead` (once). */
static void notes_of(const pkb_compare *c, pkb_compare_note_kind kind, const char *lead, pkb_buf *b)
{
    size_t k = 0;
    if (kind == PKB_NOTE_MISSING)
        for (size_t i = 0; i < c->nabsent; i++)
            pkb_buf_printf(b, "%s%s (absent from the new file)", k++ ? ", " : lead, c->absent[i]);
    for (size_t i = 0; i < c->nskipped; i++)
        if (c->skipped[i].kind == kind)
            pkb_buf_printf(b, "%s%s (%s)", k++ ? ", " : lead, c->skipped[i].name,
                           c->skipped[i].why);
}

/* "machine changed (spawn_only: drift +31.2% beyond ...; ...), 4 series: " for the groups that
 * could not correct a row. */
static void machine_changed_lead(const pkb_compare *c, pkb_buf *b)
{
    pkb_buf_puts(b, "undecidable: machine changed (");
    size_t k = 0;
    for (size_t g = 0; g < c->drift.ngroups; g++) {
        const pkb_drift_group *grp = &c->drift.groups[g];
        bool used = false;
        for (size_t i = 0; i < c->nrows && !used; i++)
            used = c->rows[i].machine_changed && c->rows[i].group == grp;
        if (!used)
            continue;
        char why[160];
        pkb_drift_why(&c->drift, grp, why, sizeof why);
        pkb_buf_printf(b, "%s%s: %s", k++ ? "; " : "", grp->name, why);
    }
    pkb_buf_printf(b, "), %zu series; --no-drift-correction shows their raw verdicts",
                   c->machine_changed);
}

void pkb_compare_summary_line(const pkb_compare *c, char *buf, size_t len)
{
    if (len == 0)
        return;
    pkb_buf b = {0};
    bool regress = c->status == 2, any = false;
    if (c->status == 3 && c->machine_changed > 0) {
        machine_changed_lead(c, &b);
        any = true;
    }
    const char *lead = regress ? "regressed: " : "cannot decide: ";
    size_t k = 0;
    for (size_t i = 0; c->status != 0 && i < c->nrows; i++) {
        const pkb_compare_row *r = &c->rows[i];
        if (r->control || r->machine_changed ||
            r->d.verdict != (regress ? PKS_REGRESSED : PKS_UNDECIDABLE))
            continue;
        char why[160];
        if (regress)
            snprintf(why, sizeof why, "%+.1f%%%s", 100 * r->s.delta,
                     r->corrected ? " after drift" : "");
        else
            pkb_compare_why(c, r, why, sizeof why);
        pkb_buf_printf(&b, "%s%s%s (%s)", k == 0 && any ? "; " : "", k > 0 ? ", " : lead, r->name,
                       why);
        k++;
    }
    any |= k > 0;
    if (c->status != 0)
        notes_of(c, regress ? PKB_NOTE_MISSING : PKB_NOTE_ENVIRONMENT,
                 any       ? regress ? "; missing in new: " : "; could not run in new: "
                 : regress ? "missing in new: "
                           : "could not run in new: ",
                 &b);
    const char *s = b.failed || b.data == NULL ? "" : b.data;
    size_t n = strlen(s);
    if (n < len) {
        memcpy(buf, s, n + 1);
    } else {
        memcpy(buf, s, len - 1);
        buf[len - 1] = '\0';
        if (len > 4)
            memcpy(buf + len - 4, "...", 4);
    }
    pkb_buf_free(&b);
}
