/*
 * The observe suite's BPF programs (METHODOLOGY.md, "What watching costs"): one object holding
 * every variant of every hook, so the loader (observers/bpf.linux.c) can try them in order —
 * fentry, then tp_btf, then raw_tp, then the classic tracepoint — enabling one variant per hook
 * with bpf_program__set_autoload() before the load, and record each refusal.
 *
 *   state    a TCP socket's state change (inet_sock_set_state, or fentry on tcp_set_state):
 *            one event per transition, with the socket's inode while a file holds it
 *   connect  fentry/tcp_connect, in the connecting process. Without fentry the state hook's
 *            CLOSE -> SYN_SENT transition is the connect hook: it runs inside connect(2)
 *   accept   fexit/inet_csk_accept, or the exit of accept(2)/accept4(2) (sys_exit, filtered on
 *            the syscall number), resolving the returned descriptor to its socket
 *   iter     iter/task_file: every socket file every process holds (the iter_poller's walk)
 *
 * Only sockets of the network namespace `target_netns` are reported, so other traffic on the
 * machine costs the programs' filter and no ring space. Events go to one BPF ring buffer;
 * `submit_flags` is 0 (libbpf's default: a wake-up whenever the reader has caught up, i.e. one
 * per event at these rates) or BPF_RB_NO_WAKEUP (the reader consumes on its own timer). A
 * reservation that fails — the ring is full — is counted per CPU, never silently lost.
 *
 * Why the pid is only trusted from some hooks: state changes also run in softirq, where the
 * current task is whoever the interrupt landed on (the client's pid shows up on the server's
 * SYN_RECV). The connect and accept hooks, and CLOSE -> SYN_SENT, run in the owner's syscall.
 */
#include <vmlinux.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "suites/observe/bpf/event.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before the load (read-only to the programs). */
const volatile __u32 target_netns = 0;
const volatile __u64 submit_flags = 0;

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 20); /* the loader resizes it */
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, PKB_OBS_CNT_MAX);
    __type(key, __u32);
    __type(value, __u64);
} counters SEC(".maps");

#define TCP_CLOSE_STATE    7 /* TCP_CLOSE */
#define TCP_SYN_SENT_STATE 2 /* TCP_SYN_SENT */
#define PROTO_TCP          6 /* IPPROTO_TCP */
#define MODE_SOCKET        0140000
#define MODE_TYPE          0170000

/* x86_64 syscall numbers (the suite builds its BPF programs for x86_64 only). */
#define NR_ACCEPT  43
#define NR_ACCEPT4 288

static __always_inline void count(__u32 which)
{
    __u64 *c = bpf_map_lookup_elem(&counters, &which);
    if (c != NULL)
        *c += 1; /* per CPU: no other CPU writes this slot */
}

static __always_inline bool in_target(const struct sock *sk)
{
    return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) == target_netns;
}

/* The socket's inode while a file holds it; 0 before accept grafts one and after close. */
static __always_inline __u64 sock_inode(const struct sock *sk)
{
    return BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
}

static __always_inline void
emit(const struct sock *sk, __u8 kind, int oldstate, int newstate, bool process)
{
    struct pkb_obs_event *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
    if (e == NULL) {
        count(PKB_OBS_CNT_DROPPED);
        return;
    }
    e->sk = (__u64)sk;
    e->inode = sock_inode(sk);
    e->pid = bpf_get_current_pid_tgid() >> 32;
    e->kind = kind;
    e->oldstate = (__u8)oldstate;
    e->newstate = (__u8)newstate;
    e->process = process;
    bpf_ringbuf_submit(e, submit_flags);
    count(PKB_OBS_CNT_SUBMITTED);
}

static __always_inline void on_state(const struct sock *sk, int oldstate, int newstate)
{
    if (BPF_CORE_READ(sk, sk_protocol) != PROTO_TCP || !in_target(sk))
        return;
    emit(sk, PKB_OBS_EV_STATE, oldstate, newstate,
         oldstate == TCP_CLOSE_STATE && newstate == TCP_SYN_SENT_STATE);
}

/* ---- state ----------------------------------------------------------------------------------*/

SEC("fentry/tcp_set_state")
int BPF_PROG(fentry_state, struct sock *sk, int state)
{
    on_state(sk, BPF_CORE_READ(sk, __sk_common.skc_state), state);
    return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tpbtf_state, const struct sock *sk, const int oldstate, const int newstate)
{
    on_state(sk, oldstate, newstate);
    return 0;
}

SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(rawtp_state, const struct sock *sk, int oldstate, int newstate)
{
    on_state(sk, oldstate, newstate);
    return 0;
}

SEC("tp/sock/inet_sock_set_state")
int tp_state(struct trace_event_raw_inet_sock_set_state *ctx)
{
    if (ctx->protocol != PROTO_TCP)
        return 0;
    const struct sock *sk = ctx->skaddr;
    if (in_target(sk))
        emit(sk, PKB_OBS_EV_STATE, ctx->oldstate, ctx->newstate,
             ctx->oldstate == TCP_CLOSE_STATE && ctx->newstate == TCP_SYN_SENT_STATE);
    return 0;
}

/* ---- connect --------------------------------------------------------------------------------*/

SEC("fentry/tcp_connect")
int BPF_PROG(fentry_connect, struct sock *sk)
{
    if (in_target(sk))
        emit(sk, PKB_OBS_EV_CONNECT, 0, 0, true);
    return 0;
}

/* ---- accept ---------------------------------------------------------------------------------*/

/* The socket behind descriptor `fd` of the current process, or NULL. */
static __always_inline const struct sock *fd_sock(long fd)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
    if (fdt == NULL || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
        return NULL;
    struct file **fds = BPF_CORE_READ(fdt, fd);
    struct file *f = NULL;
    if (bpf_probe_read_kernel(&f, sizeof f, &fds[fd]) != 0 || f == NULL)
        return NULL;
    if ((BPF_CORE_READ(f, f_inode, i_mode) & MODE_TYPE) != MODE_SOCKET)
        return NULL;
    struct socket *so = BPF_CORE_READ(f, private_data);
    return so != NULL ? BPF_CORE_READ(so, sk) : NULL;
}

static __always_inline void on_accepted(const struct sock *sk)
{
    if (sk != NULL && in_target(sk))
        emit(sk, PKB_OBS_EV_ACCEPT, 0, 0, true);
}

static __always_inline void on_sys_exit(long nr, long ret)
{
    if ((nr == NR_ACCEPT || nr == NR_ACCEPT4) && ret >= 0)
        on_accepted(fd_sock(ret));
}

SEC("fexit/inet_csk_accept")
int fexit_accept(unsigned long long *ctx)
{
    __u64 ret = 0;
    bpf_get_func_ret(ctx, &ret);
    on_accepted((const struct sock *)ret);
    return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tpbtf_sys_exit, struct pt_regs *regs, long ret)
{
    on_sys_exit(BPF_CORE_READ(regs, orig_ax), ret);
    return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(rawtp_sys_exit, struct pt_regs *regs, long ret)
{
    on_sys_exit(BPF_CORE_READ(regs, orig_ax), ret);
    return 0;
}

SEC("tp/syscalls/sys_exit_accept4")
int tp_exit_accept4(struct trace_event_raw_sys_exit *ctx)
{
    on_sys_exit(NR_ACCEPT4, ctx->ret);
    return 0;
}

SEC("tp/syscalls/sys_exit_accept")
int tp_exit_accept(struct trace_event_raw_sys_exit *ctx)
{
    on_sys_exit(NR_ACCEPT, ctx->ret);
    return 0;
}

/* ---- iter: every socket file of every process -----------------------------------------------*/

SEC("iter/task_file")
int iter_sockfiles(struct bpf_iter__task_file *ctx)
{
    struct file *file = ctx->file;
    struct task_struct *task = ctx->task;
    if (file == NULL || task == NULL)
        return 0;
    struct inode *inode = file->f_inode;
    if (inode == NULL || (inode->i_mode & MODE_TYPE) != MODE_SOCKET)
        return 0;
    struct pkb_obs_sockfile rec = {.inode = inode->i_ino, .pid = task->tgid, .fd = ctx->fd};
    bpf_seq_write(ctx->meta->seq, &rec, sizeof rec);
    return 0;
}
