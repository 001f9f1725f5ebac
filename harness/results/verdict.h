/*
 * verdict — the one statistical verdict on two series, shared by every reader of a results file
 * that concludes anything: the report's conclusions and targets (suites/), `pkbench compare` and
 * `pkbench check` (regress/). Two readers of the same file therefore cannot disagree.
 *
 * Per pair (base, cand), stats.h does the arithmetic:
 *
 *     medians, ratio = median(cand) / median(base) with its seeded percentile-bootstrap 95% CI,
 *     the Mann-Whitney U p (pks_series_compare); then, over the whole family of pairs, Holm's
 *     correction (pks_holm); then per pair
 *
 *         verdict = pks_decide(p_holm < alpha AND |ratio − 1| > max(threshold, noise floor))
 *
 *     undecidable first when either side has fewer than PKS_MIN_SAMPLES values or a robust
 *     coefficient of variation (1.4826 · MAD / median) above the limit (pks_check_samples).
 *
 * Paired by round: two series of one interleaved run took their repetitions together, one per
 * round. When the caller gives both series' rounds and they share at least PKS_MIN_SAMPLES, the
 * pair is decided on the per-round ratios cand_i / base_i instead (paired.h): the ratio is their
 * median with a bootstrap CI over the rounds, the p is Wilcoxon's signed-rank test on their
 * logarithms (then Holm over the family, as above), and the noise check holds the CI's relative
 * half-width (pks_paired_half_width) to the cv limit: whether the rounds pin the ratio down, which
 * more rounds improve. What the machine did to both series in a round cancels in the ratio, so a
 * drift that spreads each sample past the noise limit no longer hides a difference the rounds
 * agree on. The medians shown beside it are still each series' own.
 *
 * A target ("ratio ≤ 1.05") is decided on the same CI: met when the whole CI lies at or below the
 * limit, not met when it lies above, undecidable when it straddles the limit or the samples fail
 * the noise check. A target is never "met" by a point estimate the samples cannot support.
 *
 * The bootstrap seed of a pair is the options' seed mixed with a hash of the pair's name (the
 * candidate series), so the same files and options give byte-identical numbers in the report and
 * in compare.
 */
#ifndef PKB_RESULTS_VERDICT_H
#define PKB_RESULTS_VERDICT_H

#include "common/paired.h"
#include "common/stats.h"
#include "results/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKB_VERDICT_THRESHOLD  0.05      /* compare between two runs: |delta| ≤ 5% is no change */
#define PKB_VERDICT_NEGLIGIBLE 0.10      /* contenders of one run: the seed's negligible overhead */
#define PKB_VERDICT_SEED       20240601u /* the default bootstrap seed */

/* Options; all-zero means the defaults noted. */
typedef struct pkb_verdict_options {
    double alpha;      /* family-wise significance level; 0: 0.05 */
    double threshold;  /* smallest |delta| reported, a fraction ≥ 0 (0: none) */
    double cv_limit;   /* largest robust cv of a decidable sample; 0: 10%; negative: no limit */
    size_t iterations; /* bootstrap resamples; 0: 10000 */
    uint64_t seed;     /* bootstrap seed, mixed with each pair's name; 0: PKB_VERDICT_SEED */
    double level;      /* the CIs' confidence level, in (0, 1); 0: 95% (pkbench ab: its look's) */
} pkb_verdict_options;

/* One pair of a family: the inputs the caller fills, then what pkb_verdict_family computed. */
typedef struct pkb_verdict {
    const char *name; /* the candidate series' name: seeds the bootstrap */
    const double *base, *cand;
    size_t nbase, ncand;
    double noise_floor; /* the base file's MDE for this pair; 0: unknown */
    /* The round each sample was taken in (results.h's `round`), or NULL: when both are given
     * and the two series share at least PKS_MIN_SAMPLES rounds, the pair is decided on the
     * per-round ratios of those rounds (paired.h) rather than on the two samples apart. Only
     * series of one interleaved run have comparable rounds. */
    const int *base_round, *cand_round;

    pks_series s;    /* medians, Mann-Whitney (raw p); the ratio, its CI and delta are the paired
                        ones when `paired` */
    double level;    /* the CIs' confidence level (the options'; 0.95 by default) */
    bool paired;     /* decided on per-round ratios */
    pks_paired pair; /* when paired: the ratios' median, CI, cv and signed-rank test */
    double cv_base, cv_cand; /* robust coefficients of variation (the noise check's) */
    double p_holm;           /* p after Holm's correction over the family */
    pks_decision d;          /* verdict, why undecidable, the bar |delta| had to pass */
} pkb_verdict;

/* The pair of two series of one results file, its inputs filled: named for cand, their samples
 * and their rounds (pkb_verdict_family pairs them by round when they share enough). */
pkb_verdict pkb_verdict_of(const pkb_results_series *base, const pkb_results_series *cand);

/* Decides every pair of v[0..n) as one family (Holm over all n). Returns 0, -EINVAL (a sample
 * the statistics reject: empty, not finite, not positive) or -ENOMEM. */
int pkb_verdict_family(pkb_verdict *v, size_t n, const pkb_verdict_options *opts);

/* The per-name offset of a bootstrap seed (FNV-1a of `name`, NULL read as ""): the pairs of
 * the report, compare and the drift groups each draw their own resamples. */
uint64_t pkb_verdict_name_hash(const char *name);

/* The robust coefficient of variation, 1.4826 · MAD / median; NaN when n < 2 or the median is
 * not positive. */
double pkb_robust_cv(const pks_summary *s);

/* Why a pair is undecidable, in words: "too few samples: 4 in base, 20 in new, need 6" or "too
 * noisy: cv 13.0% in base > 10.0%", naming the sides `base_word` and `cand_word`; "" when it is
 * decidable. cv_limit as in the options. */
void pkb_verdict_why(const pkb_verdict *v,
                     double cv_limit,
                     const char *base_word,
                     const char *cand_word,
                     char *buf,
                     size_t len);

/* A decided pair in a word, as the reports say it (the scenarios report's verdict column, the table
 * across hosts): its verdict, and for "~" whether |delta| stayed within the bar. */
typedef enum pkb_verdict_word {
    PKB_WORD_NEGLIGIBLE = 0,      /* "~" and |delta| within the bar */
    PKB_WORD_NOT_DISTINGUISHABLE, /* "~" with a larger |delta| that is not significant */
    PKB_WORD_SLOWER,              /* regressed */
    PKB_WORD_FASTER,              /* improved */
    PKB_WORD_UNDECIDABLE,         /* too few samples, too noisy */
    PKB_NWORDS
} pkb_verdict_word;

pkb_verdict_word pkb_verdict_word_of(const pkb_verdict *v);

/* "negligible", "not distinguishable", "slower", "faster", "undecidable". */
const char *pkb_verdict_word_name(pkb_verdict_word w);

/* ---- targets --------------------------------------------------------------------------------- */

typedef enum pkb_target_result {
    PKB_TARGET_MET = 0,
    PKB_TARGET_NOT_MET,
    PKB_TARGET_UNDECIDABLE,
} pkb_target_result;

/* Whether ratio = median(cand) / median(base) meets "ratio ≤ limit" (strict: "ratio < limit"),
 * judged on the pair's 95% CI once pkb_verdict_family has run: met when the CI's upper end
 * meets it, not met when its lower end fails it, otherwise undecidable. With too few samples it
 * is undecidable; too noisy, it is decided only by a CI wholly beyond the limit (apart: the limit
 * widened by the noisier sample's cv), as a verdict is. */
pkb_target_result pkb_target_check(const pkb_verdict *v, double limit, bool strict);

/* "met", "not met", "undecidable". */
const char *pkb_target_result_name(pkb_target_result r);

/* ---- the noise floor of a base file ---------------------------------------------------------- */

/* r's optional top-level object `key` ("noise_floor", pkbench ab's "ab"; path names the file in
 * messages): 0 with *obj NULL when it is absent or null, else 0 with *obj set, or -EBADMSG with a
 * one-line message when it is not an object. */
int pkb_results_section(const pkb_results *r,
                        const char *path,
                        const char *key,
                        const json_t **obj,
                        char *err,
                        size_t err_len);

/* The optional "noise_floor" object of a results file (written by `pkbench run --aa`). */
typedef struct pkb_noise_floor {
    const json_t *series; /* noise_floor.series; NULL when the file has none */
    double alpha;         /* the alpha it was measured at */
} pkb_noise_floor;

/* Reads and checks r's noise floor (path names the file in messages). Returns 0 (f->series NULL
 * when there is none) or -EBADMSG with a one-line message. */
int pkb_noise_floor_read(
    const pkb_results *r, const char *path, pkb_noise_floor *f, char *err, size_t err_len);

/* The MDE of series `name` at opts' alpha: as stored when it was measured at that alpha, else
 * recomputed from the A/A samples the file keeps (the same pks_mde, seeded as the pair). 0 when
 * the file has none for it. Returns 0 or -ENOMEM. */
int pkb_noise_floor_of(const pkb_noise_floor *f,
                       const pkb_results *r,
                       const char *name,
                       const pkb_verdict_options *opts,
                       double *out);

/* ---- the contenders of one file ---------------------------------------------------------------
 */

/* Every measured series of a file against its scenario's base series: the family `pkbench
 * compare FILE --baseline-contender NAME` decides (with no --filter), and the report's. */
typedef struct pkb_verdict_set {
    pkb_verdict *v;
    const pkb_results_series **base, **cand; /* parallel to v, borrowed from the file */
    size_t n;
} pkb_verdict_set;

/* Builds and decides the family of r: per series in file order, its base is the series of
 * contender `baseline` in the same scenario (NULL: the scenario's series marked baseline); a
 * pair is formed when both are measured and differ. The noise floor is the larger of the two
 * series' MDEs when the file carries one. Returns 0, or a negative errno with a message (the
 * noise floor's -EBADMSG, -EINVAL, -ENOMEM). */
int pkb_verdict_contenders(const pkb_results *r,
                           const char *baseline,
                           const pkb_verdict_options *opts,
                           pkb_verdict_set *out,
                           char *err,
                           size_t err_len);

/* Two measured series of one file decided as a family of one at the contenders' bar
 * (PKB_VERDICT_NEGLIGIBLE), paired by round when they share rounds: the pair a target reads
 * (the scenarios and phases reports). Returns 0, -EINVAL or -ENOMEM, as pkb_verdict_family. */
int pkb_verdict_pair(const pkb_results_series *base,
                     const pkb_results_series *cand,
                     pkb_verdict *v);

/* The pair whose candidate is `cand` (a series of the file), or NULL. */
const pkb_verdict *pkb_verdict_set_find(const pkb_verdict_set *set, const pkb_results_series *cand);

void pkb_verdict_set_free(pkb_verdict_set *set);

#endif /* PKB_RESULTS_VERDICT_H */
