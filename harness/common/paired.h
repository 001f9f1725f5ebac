/*
 * paired — the statistics of two series measured side by side: pkbench's interleaved rounds
 * take one repetition of every series per round, so repetition i of one series and repetition i
 * of another ran within seconds of each other, on the same machine in the same state. Their
 * per-round ratio cand_i / base_i cancels whatever the machine did to both in that round (a
 * neighbour's load, a frequency step, a VM's drift), which the unpaired statistics of stats.h
 * count as noise in each sample.
 *
 * Per pair family (both are times, so lower is better):
 *
 *     pks_paired_compare(base, cand, n, &opts, NULL, &out);
 *
 *     out.ratio    the median of the n per-round ratios, with a seeded percentile-bootstrap CI
 *                  (rounds resampled with replacement, as pks_bootstrap_ratio resamples values)
 *     out.cv       the robust coefficient of variation of those ratios (1.4826 · MAD / median):
 *                  the spread that remains once the common drift is gone, the noise check's input
 *     out.p        Wilcoxon's signed-rank test on the log ratios (two-sided; H0: the log ratio
 *                  is symmetric about 0): exact for up to PKS_WILCOXON_EXACT_MAX pairs without
 *                  ties or zero differences, else the normal approximation with the tie
 *                  correction and a continuity correction of 0.5
 *
 * Conventions as in stats.h: 0 or a negative errno, caller-owned scratch or NULL, no state.
 */
#ifndef PK_PAIRED_H
#define PK_PAIRED_H

#include "common/stats.h"

#include <stdbool.h>
#include <stddef.h>

/* Exact signed-rank distribution up to this many nonzero differences (a table of n(n+1)/2 + 1
 * doubles). */
#define PKS_WILCOXON_EXACT_MAX 50

typedef struct pks_wilcoxon {
    double w_plus;         /* the sum of the ranks of the positive differences */
    double z;              /* the normal approximation's z (0 when exact) */
    double p;              /* two-sided */
    size_t n;              /* differences that are not zero (the ones ranked) */
    bool ties;             /* tied |differences| among them */
    pks_mwu_method method; /* PKS_MWU_EXACT or PKS_MWU_NORMAL */
} pks_wilcoxon;

/* Doubles of scratch pks_wilcoxon_test needs. */
size_t pks_wilcoxon_work_size(size_t n);

/* Wilcoxon's signed-rank test of d[0..n), two-sided, dropping differences that are exactly 0
 * (Wilcoxon's rule). When none is left, p is 1. work: pks_wilcoxon_work_size(n) doubles or NULL.
 * Errors: -EINVAL (n == 0, a value not finite), -ENOMEM. */
int pks_wilcoxon_test(const double *d, size_t n, double *work, pks_wilcoxon *out);

typedef struct pks_paired {
    size_t n;           /* pairs */
    pks_interval ratio; /* median of cand_i / base_i, with its bootstrap CI */
    double cv;          /* robust cv of the per-pair ratios (NaN when n < 2) */
    pks_wilcoxon test;  /* on log(cand_i / base_i) */
} pks_paired;

/* Doubles of scratch pks_paired_compare needs (saturates at SIZE_MAX). */
size_t pks_paired_work_size(size_t n, size_t iterations);

/* The paired comparison of base[i] and cand[i], i < n (opts: iterations, level and seed as
 * pks_bootstrap_ratio; NULL: the defaults). work: pks_paired_work_size(n, iterations) doubles or
 * NULL. Errors: -EINVAL (n == 0, a value not finite, level outside (0, 1)), -EDOM (a value not
 * positive), -ENOMEM. */
int pks_paired_compare(const double *base,
                       const double *cand,
                       size_t n,
                       const pks_bootstrap *opts,
                       double *work,
                       pks_paired *out);

/* The relative half-width of the paired ratio's CI, (hi − lo) / (2 · estimate): how tightly the
 * rounds pin the ratio down, which more rounds narrow (a cv of the ratios would not shrink).
 * results/verdict.h holds it to the cv limit in place of the two samples' cvs. NaN when the
 * estimate is not positive. */
double pks_paired_half_width(const pks_paired *p);

#endif /* PK_PAIRED_H */
