/*
 * The runner's rounds mode (pkbench's default; --aa): instead of one series after another, every
 * series gets one repetition per round, in an order rotated every round, so drift on a shared
 * machine spreads over all series alike. Round 0 calibrates (warm-up, and Google Benchmark sizes
 * each series' iteration count; its sample is discarded); every later round runs each series once
 * with that fixed count, after a few untimed calls of its own (run.c, "Settling"). The count is
 * sized from the calibration's fastest undisturbed call (calibrate.h); a series with a disturbed
 * calibration call is calibrated once more right after round 0, so a disturbance there cannot
 * shorten its samples for the whole run. --aa adds an identical B copy of every series next to it
 * (A B in odd rounds, B A in even ones) and stores each series' minimum detectable effect in
 * "noise_floor". The file is rewritten after every round.
 *
 * The same rounds measure a too-disturbed series again (pkb__run_rounds_again, remeasure.c): only
 * the series marked `remeasuring`, with the iteration counts round 0 sized, after one discarded
 * round that warms them up again.
 *
 * Two sides (pkbench ab): a series of side base followed by its head side form a pair, which the
 * rotation moves as one unit, base then head in odd rounds and head then base in even ones, as
 * --aa's A and B; both sides run the same iteration count (the smaller of the two sizings), so
 * their samples differ only in the build. Rounds until decided: with opts->more_rounds, after the
 * profile's repetitions and then after every block the caller asks for, the caller reads the
 * file just written and says how many rounds to add and which series are settled (they leave the
 * rounds, their samples kept).
 */
#define _GNU_SOURCE
#include "run/rounds.h"

#include "common/cli.h"
#include "common/stats.h"
#include "common/term.h"
#include "run/calibrate.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- rounds: --interleave and --aa ------------------------------------------------------- */

#define PKB_AA_SEED 20240601u /* the noise floor's bootstrap seed: reproducible from the file */

struct rounds {
    struct pkb__collect *c;
    pkb_series *b;      /* --aa: the B copy of every series (NULL otherwise) */
    int round;          /* 0: calibration (again: a discarded warm round); 1..R: measured */
    bool again;         /* re-measuring the series marked `remeasuring` */
    bool recalibrating; /* round 0 once more, for the series marked `recalibrate` */
    int offset;         /* added to `round` in the file: R when re-measuring, so every round of the
                           run has its own number and pkbench compare pairs only samples taken
                           together (regress/drift.h) */
    int target;         /* the last round to take: the profile's, or as more_rounds extends it */
    double block_start; /* when the current block of rounds began, and its first round */
    int block_first;
};

static int make_b_copies(struct rounds *x);
static int run_all_rounds(struct rounds *x);
static int run_round(struct rounds *x, size_t per_round, double first_measured);
static int register_round(struct rounds *x);
static int on_round_run(const pkb_run *run, void *user);
static int on_round_context(const pkb_context *ctx, void *user);
static int size_series(struct rounds *x);
static void settle_round(struct rounds *x, size_t completed);
static json_t *noise_floor(struct rounds *x);
static bool in_play(const struct rounds *x, const pkb_series *s);
static void fail_series(pkb_series *s, const char *why);
static size_t partner_of(const struct pkb__collect *c, size_t i);
static bool is_second(const struct pkb__collect *c, size_t i);
static int ask_more(struct rounds *x, int completed, double first_measured, size_t *per_round);

int pkb__run_rounds(struct pkb__collect *c)
{
    struct rounds x = {.c = c};
    int rc = c->opts->aa ? make_b_copies(&x) : 0;
    if (rc == 0)
        rc = run_all_rounds(&x);
    if (x.b != NULL) { /* written before the progress lines: their verdicts read it */
        json_object_set_new(c->doc, "noise_floor", noise_floor(&x));
        pkb__write_doc(c);
    }
    for (size_t i = 0; x.b != NULL && i < c->n; i++)
        pkb_series_free(&x.b[i]);
    free(x.b);
    /* Every series finished with the last round: a line for each one a re-measure will not
     * replace (the others after it, run.c). */
    pkb__show_finished(c, false, false);
    return rc;
}

int pkb__run_rounds_again(struct pkb__collect *c)
{
    struct rounds x = {.c = c, .again = true, .offset = c->opts->profile->repetitions};
    return run_all_rounds(&x);
}

/* The B copies of --aa: same workload, same state, same iteration count, "<name> [B]". */
static int make_b_copies(struct rounds *x)
{
    struct pkb__collect *c = x->c;
    x->b = calloc(c->n, sizeof *x->b);
    if (x->b == NULL)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < c->n; i++) {
        const pkb_series *a = &c->series[i];
        pkb_series *b = &x->b[i];
        if (snprintf(b->name, sizeof b->name, "%.150s [B]", a->name) >= (int)sizeof b->name)
            rc = -ENAMETOOLONG;
        snprintf(b->scenario, sizeof b->scenario, "%s", a->scenario);
        snprintf(b->contender, sizeof b->contender, "%s", a->contender);
        b->iterate = a->iterate;
        b->ctx = a->ctx;
        b->check_counts = a->check_counts;
        b->expect_bytes = a->expect_bytes;
        b->expect_lines = a->expect_lines;
        b->expect_children = a->expect_children;
    }
    return rc;
}

/* Rounds 0..R of x (see the top of this file); the file rewritten after every measured round. */
static int run_all_rounds(struct rounds *x)
{
    struct pkb__collect *c = x->c;
    const pkb_profile *prof = c->opts->profile;
    size_t per_round = 0;
    for (size_t i = 0; i < c->n; i++)
        per_round += in_play(x, &c->series[i]) ? (x->b != NULL ? 2 : 1) : 0;
    pkb__progress.rounds = true;
    int completed = 0, rc = 0;
    double first_measured = 0; /* when round 1 started: the pace of the measured rounds */
    x->target = prof->repetitions;
    for (x->round = 0; rc == 0 && x->round <= x->target && !pkb_interrupted; x->round++) {
        if (x->round == 1) {
            first_measured = x->block_start = pkb__now_s();
            x->block_first = 1;
        }
        rc = run_round(x, per_round, first_measured);
        if (rc == 0 && !pkb_interrupted && x->round == 0 && !x->again)
            rc = size_series(x);
        if (rc == 0 && !pkb_interrupted && x->round > 0) {
            completed = x->round;
            settle_round(x, (size_t)completed);
            if (!x->again)
                pkb__write_doc(c);
            if (x->round == x->target && !x->again && c->opts->more_rounds != NULL)
                rc = ask_more(x, completed, first_measured, &per_round);
        }
    }
    settle_round(x, (size_t)completed);
    if (pkb_interrupted && !x->again) /* the series' reasons now say "interrupted" */
        pkb__write_doc(c);
    pkb__progress.phase[0] = '\0';
    return rc;
}

/* A measured round's length as the calibration saw its series: each in play settles (its own
 * iterations for settle_s, at least one) and then runs its sized count, every iteration at the
 * calibrated time per iteration. 0 when a series has none (the guess from min_time then stays).
 * The guess alone assumes a call of about min_time: with fan-outs of 4096 children, 13-29 s an
 * iteration and two iterations a round, it announced 3m22s for rounds that took about 70 minutes
 * (the full fan-out at scale run of reports/notes/2026-12-05-fan-out-at-scale.md, taken for a
 * stall). */
static double calibrated_round_s(const struct rounds *x)
{
    const struct pkb__collect *c = x->c;
    double settle = c->opts->settle_s, total = 0;
    for (size_t i = 0; i < c->n; i++) {
        const pkb_series *s = &c->series[i];
        if (!in_play(x, s))
            continue;
        double per = s->calib.per_iteration_ns / 1e9;
        if (per <= 0)
            return 0;
        double settling = settle > 0 ? ceil(settle / per) * per : 0;
        long long n = s->rounds_iterations > 0 ? s->rounds_iterations : 1;
        total += (settling + per * (double)n + 0.005) * (x->b != NULL ? 2 : 1);
    }
    return total;
}

/* One round of x: x->round (0: calibration, again when x->recalibrating) of the series in
 * play, `per_round` calls; `first_measured` is when round 1 started (the measured rounds' pace). */
static int run_round(struct rounds *x, size_t per_round, double first_measured)
{
    const pkb_profile *prof = x->c->opts->profile;
    pkb__progress.name = NULL; /* every call is a new line of pkb__progress */
    pkb__progress.index = 0;
    /* A measured call lasts about min_time (round 0 sized it so) plus the bookkeeping around
     * it; once a measured round finished, the rounds' own pace replaces that guess, which a
     * loaded machine or a slow series makes too short. */
    double per_call = prof->min_time_s * PKB_CALIBRATION_MARGIN + x->c->opts->settle_s + 0.005,
           now = pkb__now_s(), calibrated = x->round == 1 ? calibrated_round_s(x) : 0;
    if (x->round > 1 && per_round > 0)
        per_call = (now - first_measured) / ((double)(x->round - 1) * (double)per_round);
    else if (calibrated > 0 && per_round > 0)
        per_call = calibrated / (double)per_round;
    pkb__progress.later_s = per_call * (double)per_round * (x->target - x->round);
    const char *what = pkb__progress.phase;
    if (x->round == 0) {
        pkb__progress.total = per_round / (x->b != NULL ? 2 : 1);
        pkb__progress.per_series_s = x->again ? per_call
                                     : x->recalibrating
                                         ? (PKB_RECALIBRATION_WARMUP + 3) * prof->min_time_s + 0.05
                                         : prof->warmup_s + 3 * prof->min_time_s + 0.05;
        snprintf(pkb__progress.phase, sizeof pkb__progress.phase, "%s",
                 x->again           ? "warm again"
                 : x->recalibrating ? "calibrate again"
                                    : "calibrate");
        what = x->again           ? "re-measuring: one discarded round to warm up"
               : x->recalibrating ? "calibrating again: other load ran during the first pass"
                                  : "calibrating: warm-up and iteration counts";
    } else {
        pkb__progress.total = per_round;
        pkb__progress.per_series_s = per_call;
        snprintf(pkb__progress.phase, sizeof pkb__progress.phase, "%sround %hu/%hu",
                 x->again ? "again " : "", (unsigned short)x->round, (unsigned short)x->target);
    }
    if (!pkb__progress.tty) {
        char eta[32];
        pkb_fmt_duration(eta, sizeof eta, pkb__eta_s());
        fprintf(stderr, "pkbench: %s (%zu series%s)  ETA %s\n", what,
                per_round / (x->b != NULL ? 2 : 1), x->b != NULL && x->round > 0 ? ", A and B" : "",
                eta);
    }
    int rc = register_round(x);
    if (rc == 0)
        rc = pkb_run_benchmarks(
            &(pkb_run_options){
                .filter = "all", .on_context = on_round_context, .on_run = on_round_run, .user = x},
            NULL);
    return rc;
}

/* Registers every series still in play for round x->round (A and B copies). */
static int register_round(struct rounds *x)
{
    struct pkb__collect *c = x->c;
    const pkb_profile *prof = c->opts->profile;
    pkb_clear();
    int rc = 0;
    for (size_t k = 0; k < c->n && rc == 0; k++) {
        size_t i = (k + (size_t)x->round) % c->n; /* rotate the order every round */
        if (is_second(c, i))
            continue; /* a head side goes with its base (two sides) */
        size_t p = partner_of(c, i);
        pkb_series *a = &c->series[i];
        pkb_series *two = x->b != NULL && x->round > 0                 ? &x->b[i]
                          : p != SIZE_MAX && in_play(x, &c->series[p]) ? &c->series[p]
                                                                       : NULL;
        pkb_series *copies[2] = {a, two};
        if (!in_play(x, a)) { /* its other side may still be in play */
            copies[0] = p != SIZE_MAX ? two : NULL;
            copies[1] = NULL;
        }
        if (copies[0] == NULL)
            continue;
        for (int h = 0; h < 2 && copies[h] != NULL; h++) /* its calls size it (calibrate.h) */
            copies[h]->calibrating = x->round == 0 && !x->again;
        if (x->round % 2 == 0 && copies[1] != NULL) { /* B A, head base, in even rounds */
            pkb_series *first = copies[0];
            copies[0] = copies[1];
            copies[1] = first;
        }
        for (int h = 0; h < 2 && rc == 0 && copies[h] != NULL; h++) {
            pkb_def def = {.name = copies[h]->name,
                           .fn = pkb__bench,
                           .user = copies[h],
                           .time_mode = PKB_TIME_MANUAL,
                           .unit = PKB_UNIT_NS,
                           .repetitions = 1};
            if (x->round == 0 && !x->again) {
                /* Calibrating again, the series is warm: a short warm-up (its calls are
                 * candidates too) and Google Benchmark's sizing trials, a few times min_time in
                 * all, not the profile's warm-up once more. */
                def.min_warmup_time =
                    x->recalibrating ? PKB_RECALIBRATION_WARMUP * prof->min_time_s : prof->warmup_s;
                def.min_time = prof->min_time_s;
            } else {
                /* --aa's B copy runs A's count; a side its own (equal to its pair's) */
                const pkb_series *sized = copies[h]->side != PKB_SIDE_NONE ? copies[h] : a;
                def.iterations = sized->rounds_iterations > 0 ? sized->rounds_iterations : 1;
            }
            /* A measured call settles first (run.c, "Settling"); a discarded warm round need
             * not. */
            copies[h]->settle_s = x->round > 0 ? c->opts->settle_s : 0;
            copies[h]->renewing = x->round > 0; /* a fresh process per sample (series.h) */
            rc = pkb_register(&def);
            if (rc != 0)
                fprintf(stderr, "pkbench: cannot register %s: %s\n", def.name, strerror(-rc));
        }
    }
    return rc;
}

static int on_round_run(const pkb_run *run, void *user)
{
    struct rounds *x = user;
    struct pkb__collect *c = x->c;
    if (run->run_type != PKB_RUN_ITERATION)
        return pkb_interrupted ? 1 : 0;
    size_t i = 0;
    bool is_b = false;
    for (; i < c->n; i++) {
        if (strcmp(c->series[i].name, run->function_name) == 0)
            break;
        if (x->b != NULL && strcmp(x->b[i].name, run->function_name) == 0) {
            is_b = true;
            break;
        }
    }
    if (i == c->n || pkb_interrupted)
        return pkb_interrupted ? 1 : 0;
    pkb_series *a = &c->series[i], *s = is_b ? &x->b[i] : a;
    if (run->error_occurred) {
        fail_series(a, run->error_message); /* a failing B copy fails the series */
        return 0;
    }
    if (x->round == 0) {
        if (!x->again) /* Google Benchmark's count: kept only if no call could size it */
            a->rounds_iterations = run->iterations;
        return 0;
    }
    long k = pkb__append_sample(s, run);
    if (k < 0)
        return -ENOMEM;
    s->round[k] = x->offset + x->round;
    /* One call of the benchmark function was this repetition: its disturbance is the call's. */
    s->disturb[k] =
        s->ncalls > 0 ? s->calls[s->ncalls - 1]
                      : (pkb_disturbance){
                            .procs_running = -1, .others_cpu = NAN, .steal = NAN, .migrations = -1};
    return 0;
}

static int on_round_context(const pkb_context *ctx, void *user)
{
    return pkb__on_context(ctx, ((struct rounds *)user)->c);
}

/* After round 0: calibrates once more every series whose calibration saw a disturbed call, then
 * fixes every series' iteration count (calibrate.h). */
static int size_series(struct rounds *x)
{
    struct pkb__collect *c = x->c;
    const pkb_profile *prof = c->opts->profile;
    size_t again = 0;
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *a = &c->series[i];
        a->calibrating = false;
        if (!in_play(x, a))
            continue;
        a->calib.passes = 1;
        a->recalibrate = !pkb_calibration_clean(&a->calib);
        again += a->recalibrate;
    }
    int rc = 0;
    if (again > 0 && !pkb_interrupted) {
        x->recalibrating = true;
        rc = run_round(x, again, 0);
        x->recalibrating = false;
    }
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *a = &c->series[i];
        a->calibrating = false;
        if (a->recalibrate)
            a->calib.passes = 2;
        a->recalibrate = false;
        if (in_play(x, a))
            a->rounds_iterations =
                pkb_calibration_size(&a->calib, prof->min_time_s, a->rounds_iterations);
    }
    /* Two sides run the same count, the smaller: their samples then differ only in the build. */
    for (size_t i = 0; i < c->n; i++) {
        size_t p = partner_of(c, i);
        pkb_series *a = &c->series[i], *b = p != SIZE_MAX ? &c->series[p] : NULL;
        if (b != NULL && in_play(x, a) && in_play(x, b) && a->rounds_iterations > 0 &&
            b->rounds_iterations > 0)
            a->rounds_iterations = b->rounds_iterations =
                a->rounds_iterations < b->rounds_iterations ? a->rounds_iterations
                                                            : b->rounds_iterations;
    }
    return rc;
}

/* Marks every series in play with the rounds it completed (and drops the samples of a round cut
 * short), so the file can be written between rounds: measured once it has every round the profile
 * asks for, partial before (the file of a run interrupted or killed mid-rounds says so, with how
 * many rounds it holds, rather than pass a few samples off as a measurement). */
static void settle_round(struct rounds *x, size_t completed)
{
    struct pkb__collect *c = x->c;
    int want = c->opts->profile->repetitions;
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *a = &c->series[i];
        if (x->again && !a->remeasuring)
            continue;
        if (a->nreps > completed)
            a->nreps = completed;
        if (x->b != NULL && x->b[i].nreps > completed)
            x->b[i].nreps = completed;
        if (in_play(x, a) && completed > 0 && !x->again) {
            bool all = completed >= (size_t)want;
            if (!all)
                snprintf(a->reason, sizeof a->reason,
                         pkb_interrupted ? "interrupted after %zu of %d rounds"
                                         : "%zu of %d rounds so far: the run did not finish",
                         completed, want);
            else if (a->status == PKB_SERIES_PARTIAL)
                a->reason[0] = '\0';
            a->status = all ? PKB_SERIES_MEASURED : PKB_SERIES_PARTIAL;
            a->done = true;
        }
    }
}

/* The "noise_floor" object of an A/A run: per series, the MDE of A (samples_ns) against B. */
static json_t *noise_floor(struct rounds *x)
{
    struct pkb__collect *c = x->c;
    double alpha = c->opts->aa_alpha > 0 ? c->opts->aa_alpha : PKS_DEFAULT_ALPHA;
    json_t *series = json_object();
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *a = &c->series[i], *b = &x->b[i];
        double mde;
        pks_interval ci;
        if (a->status != PKB_SERIES_MEASURED || a->nreps < 2 || b->nreps < 2 ||
            pks_mde(a->samples_ns, a->nreps, b->samples_ns, b->nreps, alpha,
                    &(pks_bootstrap){.seed = PKB_AA_SEED}, NULL, &mde, &ci) != 0 ||
            !(mde <= PKB_RESULTS_MAX_MDE))
            continue;
        json_t *bs = json_array();
        for (size_t k = 0; k < b->nreps; k++)
            json_array_append_new(bs, json_real(b->samples_ns[k]));
        json_object_set_new(series, a->name,
                            json_pack("{s:f, s:f, s:[f, f], s:[i, i], s:o}", "mde", mde, "ratio",
                                      ci.estimate, "ci", ci.lo, ci.hi, "n", (int)a->nreps,
                                      (int)b->nreps, "samples_b_ns", bs));
    }
    return json_pack(
        "{s:f, s:s, s:i, s:I, s:o}", "alpha", alpha, "definition",
        "per series: max(|lo - 1|, |hi - 1|) of the (1 - alpha) percentile-bootstrap CI of "
        "median(B) / median(A); A = the series' samples_ns, B = samples_b_ns, an identical copy "
        "run next to it in every round of the same run (stats.h, pks_mde)",
        "bootstrap_iterations", PKS_BOOTSTRAP_DEFAULT_ITERATIONS, "seed", (json_int_t)PKB_AA_SEED,
        "series", series);
}

/* Asks the caller whether to add rounds (opts->more_rounds, after the file was written):
 * retires what it says is settled and extends the target. Returns 0 or its error. */
static int ask_more(struct rounds *x, int completed, double first_measured, size_t *per_round)
{
    struct pkb__collect *c = x->c;
    bool *retire = calloc(c->n + 1, sizeof *retire);
    if (retire == NULL)
        return -ENOMEM;
    double now = pkb__now_s();
    int block = completed - x->block_first + 1;
    pkb_rounds_look look = {.path = c->opts->out_path,
                            .rounds = completed,
                            .elapsed_s = now - first_measured,
                            .round_s = block > 0 ? (now - x->block_start) / block : 0,
                            .n = c->n};
    int more = 0;
    int rc = c->opts->more_rounds(c->opts->more_user, &look, retire, &more);
    size_t left = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        c->series[i].retired |= retire[i];
        left += in_play(x, &c->series[i]);
    }
    free(retire);
    if (rc != 0 || more <= 0 || left == 0)
        return rc;
    x->target = completed + (more < PKB_MAX_REPETITIONS ? more : PKB_MAX_REPETITIONS);
    x->block_start = now;
    x->block_first = completed + 1;
    *per_round = left;
    return 0;
}

/* The head side that follows series i as its pair (two sides), or SIZE_MAX. */
static size_t partner_of(const struct pkb__collect *c, size_t i)
{
    return c->series[i].side == PKB_SIDE_BASE && i + 1 < c->n &&
                   c->series[i + 1].side == PKB_SIDE_HEAD
               ? i + 1
               : SIZE_MAX;
}

/* Series i is the head side of the pair before it: the rotation moves it with its base. */
static bool is_second(const struct pkb__collect *c, size_t i)
{
    return i > 0 && partner_of(c, i - 1) == i;
}

static bool in_play(const struct rounds *x, const pkb_series *s)
{
    if ((x->again && !s->remeasuring) || (x->recalibrating && !s->recalibrate) || s->retired)
        return false;
    return s->status != PKB_SERIES_REFUSED && s->status != PKB_SERIES_FAILED;
}

static void fail_series(pkb_series *s, const char *why)
{
    if (s->status != PKB_SERIES_FAILED)
        snprintf(s->reason, sizeof s->reason, "%s", why);
    s->status = PKB_SERIES_FAILED;
    s->done = true;
}
