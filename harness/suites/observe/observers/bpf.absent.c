/*
 * bpf.absent.c — the eBPF observers' loader (bpf.h) on a build that could not make the BPF
 * programs (no clang BPF target, bpftool, libbpf or kernel BTF when CMake ran; the reason is
 * PKB_OBSERVE_BPF_MISSING, from suites/observe/observe.cmake). Every probe says so in one line,
 * so the eBPF observers SKIP with it and the rest of the suite runs.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/bpf.h"

#include <errno.h>
#include <stdio.h>

#ifndef PKB_OBSERVE_BPF_MISSING
#define PKB_OBSERVE_BPF_MISSING "the BPF programs were not built"
#endif

int pkb__bpf_probe(const pkb_obs_options *o, int need, char *why, size_t cap)
{
    (void)o;
    (void)need;
    snprintf(why, cap, "built without eBPF: %s", PKB_OBSERVE_BPF_MISSING);
    return -ENOTSUP;
}

json_t *pkb__bpf_gates(void)
{
    return json_pack("{s:b, s:s}", "built", 0, "reason", PKB_OBSERVE_BPF_MISSING);
}

int pkb__bpf_open(
    const pkb_obs_options *o, const pkb_bpf_request *req, pkb_bpf **out, char *why, size_t cap)
{
    *out = NULL;
    return pkb__bpf_probe(o, req->need, why, cap);
}

int pkb__bpf_ring_poll(pkb_bpf *b, int timeout_ms)
{
    (void)b;
    (void)timeout_ms;
    return -ENOTSUP;
}

int pkb__bpf_ring_consume(pkb_bpf *b)
{
    (void)b;
    return -ENOTSUP;
}

int pkb__bpf_iter(pkb_bpf *b, pkb_obsmap *owners, char *why, size_t cap)
{
    (void)b;
    (void)owners;
    snprintf(why, cap, "built without eBPF");
    return -ENOTSUP;
}

void pkb__bpf_counters(pkb_bpf *b, uint64_t *submitted, uint64_t *dropped)
{
    (void)b;
    *submitted = *dropped = 0;
}

void pkb__bpf_stats(pkb_bpf *b, pkb_obs_view *v)
{
    (void)b;
    v->bpf_run_ns = v->bpf_run_cnt = UINT64_MAX;
}

const char *pkb__bpf_hooks(const pkb_bpf *b)
{
    (void)b;
    return "";
}

void pkb__bpf_close(pkb_bpf *b)
{
    (void)b;
}
