/*
 * Scenarios: the workloads built once before any timing, and the correctness check every
 * contender must pass before it is timed (the scenarios' names are the contract's,
 * contenders/contender.h).
 *
 * Payloads follow the seed exactly: the small capture is 32 bytes in 3 lines; the stream is 8,000
 * lines of 128 bytes plus a newline (1,032,000 bytes), fed through cat's stdin and read back line
 * by line; the fan-out is 16 children of the small payload each. The child is always `cat` found
 * in PATH (or its resolved absolute path, for contenders that resolve once), except spawn_only,
 * which starts the tiny static helper by absolute path with no pipes at all. The fan-out at scale
 * is the fan-out's workload copied once per size; a run's workloads are kept together
 * (pkb__workloads), with how a series names its scenario and counts its work.
 */
#define _GNU_SOURCE
#include "suites/scenarios/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* 32 bytes in 3 lines, as in the seed. */
static const char small_payload[] = "processkit small \n0123456789\nab\n";

int pkb_workload_build(pkb_scenario s, const char *cat_path, const char *tiny_path, pkb_workload *w)
{
    memset(w, 0, sizeof *w);
    w->scenario = s;
    w->children = 1;
    switch (s) {
    case PKB_SPAWN_CAPTURE_SMALL:
    case PKB_CONCURRENT_FAN_OUT:
    case PKB_FAN_OUT_SCALE:
        w->program = "cat";
        w->program_path = cat_path;
        w->input = (const unsigned char *)small_payload;
        w->input_len = sizeof small_payload - 1;
        w->expect_bytes = w->input_len;
        w->expect_lines = 3;
        /* 16 for the fan-out at scale too, until the caller sets its size (suite.c). */
        w->children = pkb_scenario_fans_out(s) ? 16 : 1;
        return 0;
    case PKB_STREAM_LARGE_STDOUT: {
        const size_t lines = 8000, len = 128;
        unsigned char *buf = malloc(lines * (len + 1));
        if (buf == NULL)
            return -ENOMEM;
        for (size_t i = 0; i < lines; i++) {
            unsigned char *line = buf + i * (len + 1);
            for (size_t k = 0; k < len; k++)
                line[k] = (unsigned char)('a' + (i + k) % 26);
            line[len] = '\n';
        }
        w->program = "cat";
        w->program_path = cat_path;
        w->input = buf;
        w->input_len = lines * (len + 1);
        w->expect_bytes = w->input_len;
        w->expect_lines = lines;
        return 0;
    }
    case PKB_SPAWN_ONLY:
        w->program = tiny_path;
        w->program_path = tiny_path;
        return 0;
    case PKB_SCENARIO_COUNT:
        break;
    }
    return -EINVAL;
}

void pkb_workload_free(pkb_workload *w)
{
    if (w->scenario == PKB_STREAM_LARGE_STDOUT)
        free((void *)w->input);
    memset(w, 0, sizeof *w);
}

void pkb__workloads_build(pkb__workloads *ws,
                          const char *cat_path,
                          const char *tiny_path,
                          const int *sizes,
                          size_t nsizes)
{
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_build((pkb_scenario)s, cat_path, tiny_path, &ws->each[s]);
    ws->nscale = nsizes;
    for (size_t i = 0; i < nsizes; i++) {
        ws->scale[i] = ws->each[PKB_FAN_OUT_SCALE];
        ws->scale[i].children = sizes[i];
    }
}

void pkb__workloads_free(pkb__workloads *ws)
{
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_free(&ws->each[s]);
    ws->nscale = 0; /* the sizes' copies own nothing */
}

size_t pkb__workloads_count(const pkb__workloads *ws, pkb_scenario s)
{
    return s == PKB_FAN_OUT_SCALE ? ws->nscale : 1;
}

const pkb_workload *pkb__workload_at(const pkb__workloads *ws, pkb_scenario s, size_t i)
{
    return s == PKB_FAN_OUT_SCALE ? &ws->scale[i] : &ws->each[s];
}

void pkb__workload_scenario(const pkb_workload *w, char *buf, size_t cap)
{
    if (w->scenario == PKB_FAN_OUT_SCALE)
        pkb_scenario_fan_out_name(w->children, buf, cap);
    else
        snprintf(buf, cap, "%s", pkb_scenario_name(w->scenario));
}

double pkb__workload_work(const pkb_workload *w)
{
    if (w->scenario == PKB_STREAM_LARGE_STDOUT)
        return (double)w->expect_bytes / (1024.0 * 1024.0); /* MiB */
    return pkb_scenario_fans_out(w->scenario) ? (double)w->children : 1.0;
}

/* The bytes and lines of one pass through the stream workload; bytes tell bytes apart. */
int pkb_check_contender(
    const pkb_contender *c, void *state, const pkb_workload *w, char *why, size_t why_len)
{
    pkb_sample out;
    memset(&out, 0, sizeof out);
    int rc = c->run(state, w, &out);
    return pkb_check_sample(c, w, rc, &out, why, why_len);
}

int pkb_check_sample(const pkb_contender *c,
                     const pkb_workload *w,
                     int rc,
                     const pkb_sample *sample,
                     char *why,
                     size_t why_len)
{
    pkb_sample out = *sample;
    /* A contender that discards stdout cannot observe it: it must report nothing read, and its
     * children's exit status 0 is what proves the work was done (contender.h). */
    uint64_t per_bytes = c->discards_output ? 0 : (uint64_t)w->expect_bytes;
    uint64_t per_lines = c->discards_output ? 0 : (uint64_t)w->expect_lines;
    uint64_t want_bytes = per_bytes * (uint64_t)w->children;
    uint64_t want_lines = per_lines * (uint64_t)w->children;
    if (rc != 0) {
        /* A reason that names the contender already (a worker's, contenders/worker.h) is whole. */
        size_t n = strlen(c->name);
        if (strncmp(out.error, c->name, n) == 0 && out.error[n] == ':')
            snprintf(why, why_len, "%s", out.error);
        else
            snprintf(why, why_len, "%s: the iteration failed: %s", c->name,
                     out.error[0] ? out.error : strerror(rc < 0 ? -rc : rc));
        return rc < 0 ? rc : -EIO;
    }
    if (out.children != w->children || out.failures != 0) {
        snprintf(why, why_len, "%s: %d of %d children reaped, %d did not exit 0", c->name,
                 out.children, w->children, out.failures);
        return -ECHILD;
    }
    if (out.bytes != want_bytes || out.lines != want_lines) {
        snprintf(why, why_len,
                 "%s: read %llu bytes in %llu lines, the workload is %llu bytes in %llu lines%s",
                 c->name, (unsigned long long)out.bytes, (unsigned long long)out.lines,
                 (unsigned long long)want_bytes, (unsigned long long)want_lines,
                 c->discards_output ? " (its output is discarded, so nothing may be read)" : "");
        return -EBADMSG;
    }
    return 0;
}
