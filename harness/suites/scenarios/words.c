/*
 * The words a verdict is said in, shared by the table's cells (table.c) and the conclusions and
 * targets (verdict.c), so both say a pair's result the same way and neither reaches into the
 * other: where a series falls against its baseline (its bucket) and that bucket's word, and a
 * ratio's confidence interval written as deltas.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"

#include <math.h>

pkb__bucket pkb__bucket_of(const pkb_verdict *v)
{
    switch (v->d.verdict) {
    case PKS_REGRESSED:
        return PKB__SLOWER;
    case PKS_IMPROVED:
        return PKB__FASTER;
    case PKS_UNDECIDABLE:
        return PKB__UNDECIDABLE;
    case PKS_NO_CHANGE:
        break;
    }
    return fabs(v->s.delta) <= v->d.bar ? PKB__NEGLIGIBLE : PKB__NOT_DISTINGUISHABLE;
}

pkb__bucket pkb__series_bucket(const pkb_results_series *s, const pkb_verdict *v)
{
    return !s->measured ? PKB__UNTIMED : v == NULL ? PKB__NO_BASELINE : pkb__bucket_of(v);
}

const char *pkb__bucket_word(pkb__bucket k)
{
    static const char *const words[PKB__NBUCKETS] = {
        [PKB__NEGLIGIBLE] = "negligible",   [PKB__NOT_DISTINGUISHABLE] = "not distinguishable",
        [PKB__SLOWER] = "slower",           [PKB__FASTER] = "faster",
        [PKB__UNDECIDABLE] = "undecidable", [PKB__UNTIMED] = "not timed",
        [PKB__NO_BASELINE] = "no baseline",
    };
    return (unsigned)k < PKB__NBUCKETS ? words[k] : "?";
}

void pkb__fmt_ci(pkb_buf *b, const pks_interval *ci)
{
    pkb_buf_puts(b, "[");
    pkb_fmt_delta(b, ci->lo - 1);
    pkb_buf_puts(b, ", ");
    pkb_fmt_delta(b, ci->hi - 1);
    pkb_buf_puts(b, "]");
}
