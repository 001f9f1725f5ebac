/*
 * bpf.linux.c — the eBPF observers' loader (bpf.h), over libbpf and the skeleton that
 * `bpftool gen skeleton` made from bpf/observe.bpf.c at build time.
 *
 * Gating by trying, not by asking: `bpftool feature probe` says "tracing is NOT available" on
 * kernels where tp_btf loads fine, and fentry can be refused (EPERM under lockdown) while
 * tracepoints work. So the probe loads and attaches every variant of every hook on its own, in
 * the order of the chains below, once per process, and keeps the first that works and each
 * refusal before it (errno and libbpf's last warning). One object holds all variants; a load
 * enables only the chosen ones with bpf_program__set_autoload() before bpf_object__load().
 *
 * The run-time statistics (BPF_STATS_RUN_TIME) are switched on for the life of a loaded
 * observer: the kernel then times every program run (two clock reads each), which is the only
 * way to see the cost that lands on the observed processes rather than on the observer.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The skeleton embeds the object as one long string literal, beyond what -Wpedantic lets a C
 * compiler promise to support; every C compiler we build with handles it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "suites/observe/bpf/observe.skel.h"
#pragma GCC diagnostic pop

/* ---- the hook chains ----------------------------------------------------------------------- */

struct variant {
    const char *hook;     /* what the results file and the report call it */
    const char *progs[2]; /* the programs in observe.bpf.c that implement it */
};

enum { CHAIN_STATE, CHAIN_CONNECT, CHAIN_ACCEPT, CHAIN_ITER, NCHAINS };

static const char *const chain_names[NCHAINS] = {"state", "connect", "accept", "iter"};

/* In the order tried: fentry/fexit, tp_btf, raw_tp, classic tracepoint. Two exceptions, both
 * measured: the connect hook's fallback is no program at all (without fentry, the state hook's
 * CLOSE -> SYN_SENT transition runs inside connect(2) and carries the owner); and for accept the
 * classic per-syscall tracepoint comes before tp_btf/raw_tp, because the only BTF tracepoint at
 * a syscall's exit is sys_exit, which runs on every system call of the machine — 166,828 runs
 * (25 ms) during a 0.5 s cell of 55 accepts here, against 55 for sys_exit_accept4. The classic
 * tracepoint needs tracefs mounted; without it, the refusal is recorded and sys_exit is used. */
static const struct variant chains[NCHAINS][4] = {
    [CHAIN_STATE] = {{"fentry/tcp_set_state", {"fentry_state"}},
                     {"tp_btf/inet_sock_set_state", {"tpbtf_state"}},
                     {"raw_tp/inet_sock_set_state", {"rawtp_state"}},
                     {"tp/sock/inet_sock_set_state", {"tp_state"}}},
    [CHAIN_CONNECT] = {{"fentry/tcp_connect", {"fentry_connect"}}},
    [CHAIN_ACCEPT] = {{"fexit/inet_csk_accept", {"fexit_accept"}},
                      {"tp/syscalls/sys_exit_accept4+sys_exit_accept",
                       {"tp_exit_accept4", "tp_exit_accept"}},
                      {"tp_btf/sys_exit", {"tpbtf_sys_exit"}},
                      {"raw_tp/sys_exit", {"rawtp_sys_exit"}}},
    [CHAIN_ITER] = {{"iter/task_file", {"iter_sockfiles"}}},
};

#define CONNECT_FALLBACK "CLOSE->SYN_SENT of the state hook"

struct refusal {
    const char *hook;
    int error;
    char detail[160];
};

/* What the probe found, per chain: the chosen variant (-1: none) and the refusals before it. */
static struct probe_state {
    bool done;
    char btf[256];
    int btf_error; /* stat() of the BTF file */
    int chosen[NCHAINS];
    struct refusal refused[NCHAINS][4];
    int nrefused[NCHAINS];
} probed;

/* libbpf's warnings are kept, not printed: the last one explains a refusal. */
static char last_warning[160];

static int keep_warning(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_WARN) {
        vsnprintf(last_warning, sizeof last_warning, fmt, ap);
        last_warning[strcspn(last_warning, "\n")] = '\0';
    }
    return 0;
}

static struct pkb_observe_bpf *open_skeleton(const char *btf)
{
    libbpf_set_print(keep_warning);
    LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);
    return pkb_observe_bpf__open_opts(&opts);
}

/* Enables exactly the programs named in `progs` (NULL-terminated lists per chosen variant). */
static void select_programs(struct pkb_observe_bpf *skel, const struct variant *const *on, int n)
{
    struct bpf_program *p;
    bpf_object__for_each_program(p, skel->obj)
    {
        bool wanted = false;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 2 && on[i]->progs[k] != NULL; k++)
                wanted |= strcmp(bpf_program__name(p), on[i]->progs[k]) == 0;
        bpf_program__set_autoload(p, wanted);
    }
}

/* Loads and attaches one variant alone, then tears it down. Returns 0 or a negative errno. */
static int try_variant(const char *btf, const struct variant *v, char *detail, size_t cap)
{
    last_warning[0] = '\0';
    struct pkb_observe_bpf *skel = open_skeleton(btf);
    if (skel == NULL) {
        int rc = -errno;
        snprintf(detail, cap, "open: %s", last_warning);
        return rc ? rc : -EINVAL;
    }
    select_programs(skel, &v, 1);
    bpf_map__set_max_entries(skel->maps.events, 4096);
    int rc = pkb_observe_bpf__load(skel);
    struct bpf_link *links[2] = {NULL, NULL};
    for (int k = 0; rc == 0 && k < 2 && v->progs[k] != NULL; k++) {
        links[k] = bpf_program__attach(bpf_object__find_program_by_name(skel->obj, v->progs[k]));
        if (links[k] == NULL)
            rc = errno ? -errno : -EINVAL;
    }
    snprintf(detail, cap, "%s", rc != 0 ? last_warning : "");
    for (int k = 0; k < 2; k++)
        bpf_link__destroy(links[k]);
    pkb_observe_bpf__destroy(skel);
    return rc;
}

static void probe_all(const char *btf)
{
    memset(&probed, 0, sizeof probed);
    snprintf(probed.btf, sizeof probed.btf, "%s", btf);
    struct stat st;
    probed.btf_error = stat(btf, &st) == 0 ? 0 : -errno;
    for (int c = 0; c < NCHAINS; c++) {
        probed.chosen[c] = -1;
        for (int i = 0; probed.btf_error == 0 && i < 4 && chains[c][i].hook != NULL; i++) {
            struct refusal *r = &probed.refused[c][probed.nrefused[c]];
            int rc = try_variant(btf, &chains[c][i], r->detail, sizeof r->detail);
            if (rc == 0) {
                probed.chosen[c] = i;
                break;
            }
            r->hook = chains[c][i].hook;
            r->error = rc;
            probed.nrefused[c]++;
        }
    }
    probed.done = true;
}

static void ensure_probed(const char *btf)
{
    if (!probed.done || strcmp(probed.btf, btf) != 0)
        probe_all(btf);
}

/* "fentry/tcp_set_state EPERM, tp_btf/... EACCES" */
static void refusals_text(int c, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < probed.nrefused[c] && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s %s", i ? ", " : "",
                                probed.refused[c][i].hook,
                                strerrorname_np(-probed.refused[c][i].error));
}

static bool all_permission(int c)
{
    for (int i = 0; i < probed.nrefused[c]; i++)
        if (probed.refused[c][i].error != -EPERM && probed.refused[c][i].error != -EACCES)
            return false;
    return probed.nrefused[c] > 0;
}

int pkb__bpf_probe(const pkb_obs_options *o, int need, char *why, size_t cap)
{
    ensure_probed(o->btf_path);
    if (probed.btf_error != 0) {
        snprintf(why, cap, "no kernel BTF at %s (%s): the kernel needs CONFIG_DEBUG_INFO_BTF",
                 o->btf_path, strerror(-probed.btf_error));
        return probed.btf_error;
    }
    int c = (need & PKB_BPF_ITER) ? CHAIN_ITER : CHAIN_STATE;
    if (probed.chosen[c] >= 0)
        return 0;
    char text[400];
    refusals_text(c, text, sizeof text);
    if (all_permission(c) && geteuid() != 0) {
        FILE *f = fopen("/proc/sys/kernel/unprivileged_bpf_disabled", "re");
        int disabled = -1;
        if (f != NULL) {
            if (fscanf(f, "%d", &disabled) != 1)
                disabled = -1;
            fclose(f);
        }
        snprintf(why, cap,
                 "bpf() refused for uid %u (%s): needs root, or CAP_BPF and CAP_PERFMON "
                 "(kernel.unprivileged_bpf_disabled=%d)",
                 (unsigned)geteuid(), strerrorname_np(-probed.refused[c][0].error), disabled);
    } else {
        snprintf(why, cap, "no %s hook loads here: %s", chain_names[c], text);
    }
    return probed.refused[c][0].error;
}

json_t *pkb__bpf_gates(void)
{
    json_t *hooks = json_object();
    for (int c = 0; probed.done && c < NCHAINS; c++) {
        json_t *refused = json_array();
        for (int i = 0; i < probed.nrefused[c]; i++) {
            const struct refusal *r = &probed.refused[c][i];
            json_array_append_new(refused,
                                  json_pack("{s:s, s:s, s:s}", "variant", r->hook, "error",
                                            strerrorname_np(-r->error), "detail", r->detail));
        }
        const char *chosen = probed.chosen[c] >= 0 ? chains[c][probed.chosen[c]].hook
                             : c == CHAIN_CONNECT  ? CONNECT_FALLBACK
                                                   : NULL;
        json_object_set_new(hooks, chain_names[c],
                            json_pack("{s:s?, s:o}", "chosen", chosen, "refused", refused));
    }
    return json_pack(
        "{s:b, s:s?, s:s?, s:o}", "built", 1, "btf", probed.done ? probed.btf : NULL, "btf_error",
        probed.done && probed.btf_error ? strerror(-probed.btf_error) : NULL, "hooks", hooks);
}

/* ---- a loaded observer --------------------------------------------------------------------- */

struct pkb_bpf {
    struct pkb_observe_bpf *skel;
    struct bpf_link *links[6];
    int nlinks;
    struct bpf_link *iter;
    struct ring_buffer *ring;
    int stats_fd;
    pkb_bpf_event_fn fn;
    void *ctx;
    char hooks[320];
};

static int on_record(void *ctx, void *data, size_t size)
{
    pkb_bpf *b = ctx;
    if (size >= sizeof(struct pkb_obs_event))
        b->fn(b->ctx, data);
    return 0;
}

static int fail(char *why, size_t cap, int rc, const char *what)
{
    snprintf(why, cap, "%s: %s%s%s", what, strerror(-rc), last_warning[0] ? " — " : "",
             last_warning);
    return rc;
}

static int attach_chosen(pkb_bpf *b, const struct variant *const *on, int n, char *why, size_t cap)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2 && on[i]->progs[k] != NULL; k++) {
            struct bpf_program *p = bpf_object__find_program_by_name(b->skel->obj, on[i]->progs[k]);
            struct bpf_link *l = bpf_program__attach(p);
            if (l == NULL)
                return fail(why, cap, errno ? -errno : -EINVAL, on[i]->hook);
            if (strcmp(on[i]->progs[k], "iter_sockfiles") == 0)
                b->iter = l;
            else
                b->links[b->nlinks++] = l;
        }
        size_t len = strlen(b->hooks);
        snprintf(b->hooks + len, sizeof b->hooks - len, "%s%s", len ? ", " : "", on[i]->hook);
    }
    return 0;
}

int pkb__bpf_open(
    const pkb_obs_options *o, const pkb_bpf_request *req, pkb_bpf **out, char *why, size_t cap)
{
    *out = NULL;
    int need = req->need;
    int rc = pkb__bpf_probe(o, need, why, cap);
    if (rc != 0)
        return rc;
    const struct variant *on[NCHAINS];
    int n = 0;
    for (int c = 0; c < NCHAINS; c++)
        if (probed.chosen[c] >= 0 && (c == CHAIN_ITER) == ((need & PKB_BPF_ITER) != 0))
            on[n++] = &chains[c][probed.chosen[c]];
    pkb_bpf *b = calloc(1, sizeof *b);
    if (b == NULL)
        return -ENOMEM;
    b->stats_fd = -1;
    b->fn = req->on_event;
    b->ctx = req->ctx;
    last_warning[0] = '\0';
    b->skel = open_skeleton(o->btf_path);
    if (b->skel == NULL) {
        rc = fail(why, cap, errno ? -errno : -EINVAL, "opening the BPF object");
        goto out;
    }
    select_programs(b->skel, on, n);
    b->skel->rodata->target_netns = o->netns_inode;
    b->skel->rodata->submit_flags = req->no_wakeup ? BPF_RB_NO_WAKEUP : 0;
    bpf_map__set_max_entries(b->skel->maps.events,
                             (need & PKB_BPF_RING) ? (uint32_t)o->ring_bytes : 4096);
    if ((rc = pkb_observe_bpf__load(b->skel)) != 0) {
        rc = fail(why, cap, rc, "loading the BPF programs");
        goto out;
    }
    /* Statistics before attaching, so every run of the programs is counted. Without
     * CAP_SYS_ADMIN this fails and the run time is reported as unknown. */
    b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if ((rc = attach_chosen(b, on, n, why, cap)) != 0)
        goto out;
    if ((need & PKB_BPF_RING) && probed.chosen[CHAIN_CONNECT] < 0) {
        size_t len = strlen(b->hooks);
        snprintf(b->hooks + len, sizeof b->hooks - len, ", connect: %s", CONNECT_FALLBACK);
    }
    if (need & PKB_BPF_RING) {
        b->ring = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_record, b, NULL);
        if (b->ring == NULL) {
            rc = fail(why, cap, errno ? -errno : -EINVAL, "ring_buffer__new");
            goto out;
        }
    }
out:
    if (rc != 0)
        pkb__bpf_close(b);
    else
        *out = b;
    return rc;
}

int pkb__bpf_ring_poll(pkb_bpf *b, int timeout_ms)
{
    return ring_buffer__poll(b->ring, timeout_ms);
}

int pkb__bpf_ring_consume(pkb_bpf *b)
{
    return ring_buffer__consume(b->ring);
}

int pkb__bpf_iter(pkb_bpf *b, pkb_obsmap *owners, char *why, size_t cap)
{
    pkb_obsmap_clear(owners);
    int fd = bpf_iter_create(bpf_link__fd(b->iter));
    if (fd < 0)
        return fail(why, cap, -errno, "bpf_iter_create");
    /* Records never straddle a read: the kernel copies whole seq_file buffers. */
    struct pkb_obs_sockfile recs[512];
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, recs, sizeof recs);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = fail(why, cap, -errno, "reading the socket iterator");
            break;
        }
        if (n == 0)
            break;
        for (size_t i = 0; i < (size_t)n / sizeof recs[0] && rc == 0; i++)
            rc = pkb_obsmap_note(owners, recs[i].inode, recs[i].pid);
    }
    close(fd);
    return rc;
}

void pkb__bpf_counters(pkb_bpf *b, uint64_t *submitted, uint64_t *dropped)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t *v = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof *v);
    uint64_t sum[PKB_OBS_CNT_MAX] = {0};
    for (uint32_t k = 0; v != NULL && k < PKB_OBS_CNT_MAX; k++)
        if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counters), &k, v) == 0)
            for (int c = 0; c < ncpu; c++)
                sum[k] += v[c];
    free(v);
    *submitted = sum[PKB_OBS_CNT_SUBMITTED];
    *dropped = sum[PKB_OBS_CNT_DROPPED];
}

void pkb__bpf_stats(pkb_bpf *b, pkb_obs_view *v)
{
    v->bpf_run_ns = v->bpf_run_cnt = 0;
    v->nprogs = 0;
    if (b->stats_fd < 0) {
        v->bpf_run_ns = v->bpf_run_cnt = UINT64_MAX;
        return;
    }
    struct bpf_program *p;
    bpf_object__for_each_program(p, b->skel->obj)
    {
        struct bpf_prog_info info;
        uint32_t len = sizeof info;
        memset(&info, 0, sizeof info);
        if (!bpf_program__autoload(p) || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
            continue;
        v->bpf_run_ns += info.run_time_ns;
        v->bpf_run_cnt += info.run_cnt;
        if (v->nprogs < (int)(sizeof v->progs / sizeof v->progs[0])) {
            struct pkb_obs_prog *o = &v->progs[v->nprogs++];
            snprintf(o->name, sizeof o->name, "%s", bpf_program__name(p));
            o->run_cnt = info.run_cnt;
            o->run_ns = info.run_time_ns;
        }
    }
}

const char *pkb__bpf_hooks(const pkb_bpf *b)
{
    return b->hooks;
}

void pkb__bpf_close(pkb_bpf *b)
{
    if (b == NULL)
        return;
    ring_buffer__free(b->ring);
    for (int i = 0; i < b->nlinks; i++)
        bpf_link__destroy(b->links[i]);
    bpf_link__destroy(b->iter);
    pkb_observe_bpf__destroy(b->skel);
    if (b->stats_fd >= 0)
        close(b->stats_fd);
    free(b);
}
