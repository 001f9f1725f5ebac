/*
 * forkathon — what the fork/vfork study's suite (suite.c), its report
 * (report.c, figures.c) and its tests share: the names of the two parts and their
 * series, and the one function that turns a results file's series into the study's summary, so
 * the numbers stored by the run and the numbers printed by the report come from the same code.
 *
 * Every series of the study carries a "forkathon" object (the runner merges it from the series'
 * `extra`):
 *
 *   Wemm's loop (scenario "wemm", contender "<mechanism>_<linkage>"; one sample = one run of
 *   pk_forkathon_<linkage> <mechanism> N; samples_ns = the run's wall time / N):
 *       {"study": "wemm", "mechanism": "fork"|"vfork", "linkage": "static"|"dynamic",
 *        "iterations": N, "user_s": [...], "sys_s": [...], "wall_s": [...], "loop_s": [...],
 *        "reaped": [...]}                               one array entry per run, as time(1) says
 *
 *   the RSS ladder (scenario "rss_<step>MiB_thp_<off|on>", contender = the mechanism; one sample
 *   = the mean of `cycles` spawn+exec+wait of the tiny helper):
 *       {"study": "rss", "mechanism": "fork_execve"|..., "thp": "off"|"on", "step_mib": 64,
 *        "rss_kib": measured VmRSS during the step, "anon_huge_kib": AnonHugePages, "cycles": k}
 */
#ifndef PKB_FORKATHON_H
#define PKB_FORKATHON_H

#include <jansson.h>
#include <stddef.h>

/* The RSS ladder's mechanisms, in the order of tables and legends. */
#define PKB_FK_MECHANISMS(X)                                                                       \
    X(fork_execve, "fork, execve in the child, waitpid")                                           \
    X(vfork_execve, "vfork, execve in the child, waitpid")                                         \
    X(clone3_pidfd_execve, "raw clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) on a private stack, "     \
                           "execve, waitid on the pidfd")                                          \
    X(posix_spawn, "glibc posix_spawn, waitpid")                                                   \
    X(processkit, "pk_run, default containment (a private group), stdio inherited")                \
    X(processkit_uncontained, "pk_run with PK_CONTAIN_NONE, stdio inherited")

extern const char *const pkb_fk_mechanism_names[];
extern const char *const pkb_fk_mechanism_descriptions[];
extern const size_t pkb_fk_mechanism_count;

/* The study's summary of a results file's `series` array (borrowed). Only measured series with
 * a "forkathon" object count; a part with no such series gives empty arrays and null ratios.
 * Returns a new reference, NULL when out of memory:
 *
 *   {"wemm": [row...],          static fork, static vfork, dynamic fork, dynamic vfork (those
 *                                measured): {"linkage", "mechanism", "binary" (Wemm's file name),
 *                                "iterations", "runs", medians over the runs of "user_s",
 *                                "sys_s", "wall_s", "cpu_pct" ((user + sys) / wall · 100, per
 *                                run), "wall_min_s", "wall_max_s", "us_per_fork" (median wall /
 *                                N), "loop_us_per_fork" (median loop time / N)}
 *    "ratios": {"vfork_vs_fork": {"static", "dynamic"},          fork wall / vfork wall
 *               "vfork_vs_fork_cpu": {"static", "dynamic"},      fork (user+sys) / vfork's
 *               "dynamic_vs_static": {"fork", "vfork"},          dynamic wall / static wall
 *               "dynamic_vs_static_cpu": {"fork", "vfork"}}      each null when a side is missing
 *    "wemm_2003": [row...], "ratios_2003": {...}                 Wemm's own numbers from the post
 *    "curves": [{"mechanism", "thp", "points": [{"step_mib", "rss_mib", "median_us", "min_us",
 *                "max_us", "n"}...] ascending by step,
 *                "fit": {"n", "slope_us_per_mib", "intercept_us", "r2"} or null (fewer than
 *                two distinct RSS values)}...]   ordered by THP (off, on), then mechanism
 *   }
 *
 * The fit is ordinary least squares (fit.h) of the steps' median µs per spawn against their
 * measured RSS in MiB: one point per step, so an outlier sample cannot pull it. */
json_t *pkb_forkathon_summarize(const json_t *series);

#endif /* PKB_FORKATHON_H */
