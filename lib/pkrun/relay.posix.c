/*
 * The relay: when an option needs to see the command's output (--idle-timeout, --keep fail,
 * --json with a capture option), the command writes into pipes and pkrun forwards every byte to
 * its own stdout and stderr as it arrives. Otherwise none of this exists: the command inherits
 * pkrun's descriptors and its bytes never pass through pkrun.
 *
 * What it promises:
 *   - Bytes are forwarded as read, a chunk at a time (never held back for a newline), unchanged
 *     and in full; a capture cap bounds only what --json records.
 *   - When pkrun's stdout and stderr are one file (2>&1, a terminal), the command gets one pipe
 *     for both, so their order is the command's own.
 *   - Backpressure, not buffering: while the output cannot take more, nothing more is read, so the
 *     command blocks on its pipe as it would on the reader. The loop never blocks in a write: time
 *     limits and signals stay live while the reader dawdles.
 *   - A reader that went away (EPIPE) ends the forwarding of that stream and closes the command's
 *     pipe, so the command meets EPIPE or SIGPIPE itself, as it would without pkrun. Any other
 *     write error (ENOSPC on /dev/full, EIO) is reported once, ends the stream the same way, and
 *     makes pkrun's exit status 125.
 *
 * Writing without blocking, without touching the user's file description (setting O_NONBLOCK on
 * an inherited descriptor would change it for the shell and everyone sharing it): a pipe, FIFO or
 * terminal is reopened through /proc/self/fd as a description of pkrun's own, made non-blocking;
 * a socket gets send(MSG_DONTWAIT); a descriptor that already is non-blocking is used as it is;
 * regular files and other devices never block for long and are written directly. Without /proc,
 * a pipe or terminal is written PIPE_BUF bytes at a time after poll says it has room.
 *
 * Into a pipe the kernel moves the bytes: with nothing to capture (--idle-timeout alone into
 * `| consumer`) splice(2) moves the pages, so relaying costs no copy at all; with a capture,
 * tee(2) duplicates them into the output and the capture reads them once, so what --json records
 * costs one copy, and forwarding none. Into a regular file splice works too (not O_APPEND: then,
 * as for a terminal or a socket, the bytes are read into pkrun and written out).
 */
#define _GNU_SOURCE
#include "args.h"
#include "relay.posix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OUT_BLOCKING, OUT_NONBLOCK, OUT_SOCKET, OUT_POLLED };
enum { RELAY_COPY, RELAY_SPLICE, RELAY_TEE };

/* The command's pipe holds 256 KiB, four times a default pipe. With a third process between the
 * command and its reader on a machine of two CPUs, a 64 KiB pipe makes every stage wait on the
 * next wake-up: measured (pk_forward_rate, 2-byte lines, medians of 5 interleaved rounds) the
 * spliced relay took 1.31× timeout's time with 64 KiB (1 GiB); with 512 MiB, 1.12–1.14× with
 * 128 KiB, 0.82–0.98× with 256 KiB and 1.01–1.05× with 512 KiB. The command can thus run up to
 * 256 KiB ahead of what pkrun forwarded, as it could ahead of a `| cat |` stage. */
#define RELAY_PIPE (256 * 1024)
#define CHUNK      RELAY_PIPE /* what the pipe holds: one read or tee empties it */

int64_t pkr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(PKR_CLOCK, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

void pkr_relay_reserve_std(struct pkr_relay *r)
{
    *r = (struct pkr_relay){.nstreams = 0};
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* open takes the lowest free number: this one. Close-on-exec, so the command still
         * starts without it. */
        int got = open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (got >= 0 && got != fd)
            close(got);
        r->closed[fd] = true;
    }
}

/* How pkrun writes to its descriptor fd without blocking (see the top of this file). */
static void prepare_out(struct pkr_out *out, int fd)
{
    *out = (struct pkr_out){.fd = fd, .reopened = -1, .mode = OUT_BLOCKING};
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || flags < 0)
        return;
    out->is_pipe = S_ISFIFO(st.st_mode);
    out->is_file = S_ISREG(st.st_mode);
    if (flags & O_NONBLOCK) {
        out->mode = OUT_NONBLOCK;
    } else if (S_ISSOCK(st.st_mode)) {
        out->mode = OUT_SOCKET;
    } else if (S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && isatty(fd))) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (nfd >= 0) {
            out->fd = out->reopened = nfd;
            out->mode = OUT_NONBLOCK;
        } else if (errno == ENXIO) {
            out->gone = true; /* a pipe nobody reads any more */
        } else {
            out->mode = OUT_POLLED;
        }
    }
}

/* One write in the output's mode: >0 bytes, or -1 with errno (EAGAIN when it would block). */
static ssize_t out_write(struct pkr_out *out, const char *p, size_t n)
{
    switch (out->mode) {
    case OUT_SOCKET:
        return send(out->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    case OUT_POLLED: {
        struct pollfd pfd = {out->fd, POLLOUT, 0};
        if (poll(&pfd, 1, 0) != 1) {
            errno = EAGAIN;
            return -1;
        }
        return write(out->fd, p, n < PIPE_BUF ? n : PIPE_BUF); /* fits in the room poll saw */
    }
    default:
        return write(out->fd, p, n);
    }
}

static int
make_stream(struct pkr_relay *r, int id, struct pkr_out *out, const struct pkr_options *o)
{
    struct pkr_stream *s = &r->streams[r->nstreams++];
    *s = (struct pkr_stream){.id = id, .src = -1, .child_end = -1, .out = out};
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    s->src = p[0];
    s->child_end = p[1];
    /* Best effort: a user over fs.pipe-user-pages-soft gets EPERM and keeps the default. */
    (void)fcntl(s->src, F_SETPIPE_SZ, RELAY_PIPE);
    if (fcntl(s->src, F_SETFL, O_NONBLOCK) != 0)
        return -errno;
    s->capturing = pkr_output_recorded(o);
    if (s->capturing)
        pkr_capture_init(&s->cap, o->keep, o->max_bytes, o->max_lines);
    bool pipe = out->is_pipe && out->mode != OUT_POLLED;
    s->how = s->capturing ? (pipe ? RELAY_TEE : RELAY_COPY)
                          : (pipe || out->is_file ? RELAY_SPLICE : RELAY_COPY);
    if (s->how != RELAY_SPLICE && (s->buf = malloc(CHUNK)) == NULL)
        return -ENOMEM;
    return 0;
}

int pkr_relay_prepare(struct pkr_relay *r,
                      bool needed,
                      const struct pkr_options *o,
                      pk_command *cmd)
{
    cmd->in.kind = PK_STDIO_INHERIT;
    cmd->out.kind = PK_STDIO_INHERIT;
    cmd->err.kind = PK_STDIO_INHERIT;
    r->last_io_ns = pkr_now_ns();
    if (!needed)
        return 0;
    r->active = true;
    struct stat s1, s2;
    r->merged = !r->closed[1] && !r->closed[2] && fstat(1, &s1) == 0 && fstat(2, &s2) == 0 &&
                s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino;
    int rc = 0;
    for (int id = 1; id <= 2 && rc == 0; id++) {
        if (r->closed[id] || (id == 2 && r->merged))
            continue;
        prepare_out(&r->outs[id - 1], id);
        rc = make_stream(r, id, &r->outs[id - 1], o);
        pk_stdio *to = id == 1 ? &cmd->out : &cmd->err;
        if (rc == 0)
            *to = (pk_stdio){.kind = PK_STDIO_FD, .fd = r->streams[r->nstreams - 1].child_end};
    }
    if (rc == 0 && r->merged)
        cmd->err = cmd->out;
    return rc;
}

void pkr_relay_spawned(struct pkr_relay *r)
{
    for (int i = 0; i < r->nstreams; i++)
        close_fd(&r->streams[i].child_end);
}

/* The stream will forward nothing more: its reader is gone or its output broke. Closing the
 * read end is what lets the command see EPIPE/SIGPIPE on its next write. */
static void end_stream(struct pkr_stream *s)
{
    s->len = 0;
    close_fd(&s->src);
}

/* Writes what is pending; sets `blocked` when the output is full. */
static void flush_pending(struct pkr_relay *r, struct pkr_stream *s)
{
    struct pkr_out *out = s->out;
    bool was_blocked = s->blocked;
    while (s->len > 0) {
        if (out->gone || out->error != 0) {
            end_stream(s);
            return;
        }
        ssize_t k = out_write(out, s->buf + s->off, s->len);
        if (k > 0) {
            s->off += (size_t)k;
            s->len -= (size_t)k;
            out->bytes += (uint64_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && errno == EAGAIN) {
            s->blocked = true;
            return;
        } else {
            if (k < 0 && errno == EPIPE) {
                out->gone = true;
            } else {
                out->error = k < 0 ? errno : EIO;
                fprintf(stderr, "pkrun: writing the command's %s: %s\n",
                        s->id == 1 ? "stdout" : "stderr", strerror(out->error));
            }
            end_stream(s);
            return;
        }
    }
    s->off = 0;
    s->blocked = false;
    if (was_blocked)
        r->last_io_ns = pkr_now_ns(); /* the wait was the reader's, not the command's silence */
}

/* Bytes waiting in the command's pipe. */
static int pipe_bytes(int fd)
{
    int n = 0;
    return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

static void read_stream(struct pkr_relay *r, struct pkr_stream *s)
{
    ssize_t n = read(s->src, s->buf, CHUNK);
    if (n > 0) {
        s->bytes += (uint64_t)n;
        r->last_io_ns = pkr_now_ns();
        if (s->capturing && pkr_capture_feed(&s->cap, s->buf, (size_t)n) != 0)
            s->capturing = false; /* out of memory: the JSON says nothing was captured */
        s->off = 0;
        s->len = (size_t)n;
        flush_pending(r, s);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR) || r->draining) {
        /* End of file; or, once the command exited, nothing more buffered: a descendant that
         * escaped a process group and keeps the pipe open cannot hold the run. */
        close_fd(&s->src);
    }
}

/* After a tee: takes the n duplicated bytes out of the command's pipe, for the capture. */
static void consume_teed(struct pkr_stream *s, size_t n)
{
    size_t got = 0;
    while (got < n) {
        /* Straight into the kept text when it keeps these bytes: one copy, the read's. */
        size_t room = 0;
        char *slot = s->capturing ? pkr_capture_slot(&s->cap, n - got, &room) : NULL;
        size_t limit = slot != NULL ? room : CHUNK;
        ssize_t k = read(s->src, slot != NULL ? slot : s->buf, n - got < limit ? n - got : limit);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* cannot happen: tee saw these bytes, and nobody else reads this pipe */
        got += (size_t)k;
        if (slot != NULL)
            pkr_capture_commit(&s->cap, (size_t)k);
        else if (s->capturing && pkr_capture_feed(&s->cap, s->buf, (size_t)k) != 0)
            s->capturing = false; /* out of memory: the JSON says nothing was captured */
    }
}

/* Pipe to pipe in the kernel (splice, or tee for a capture). */
static void kernel_stream(struct pkr_relay *r, struct pkr_stream *s)
{
    /* One move per wake-up: the next ppoll says at once whether there is more, and a splice
     * that would find the pipe empty is a system call saved. After the exit, a few rounds. */
    for (int round = 0; round < (r->draining ? 16 : 1); round++) {
        bool moved = round > 0;
        ssize_t n = s->how == RELAY_SPLICE
                        ? splice(s->src, NULL, s->out->fd, NULL, 1 << 20, SPLICE_F_NONBLOCK)
                        : tee(s->src, s->out->fd, CHUNK, SPLICE_F_NONBLOCK);
        if (n > 0) {
            s->bytes += (uint64_t)n;
            s->out->bytes += (uint64_t)n;
            r->last_io_ns = pkr_now_ns();
            if (s->how == RELAY_TEE)
                consume_teed(s, (size_t)n);
            continue;
        }
        if (n == 0) {
            close_fd(&s->src);
        } else if (errno == EAGAIN) {
            /* Either side. Woken because the pipe had bytes, nothing moved: the output is full.
             * After bytes moved, the pipe is most likely empty; were the output full instead,
             * the next wake-up finds out. Only after the exit is the pipe asked. */
            if (!r->draining ? !moved : pipe_bytes(s->src) > 0)
                s->blocked = true;
            else if (r->draining)
                close_fd(&s->src);
        } else if (errno == EPIPE) {
            s->out->gone = true;
            end_stream(s);
        } else if (errno == EINVAL && (s->buf != NULL || (s->buf = malloc(CHUNK)) != NULL)) {
            s->how = RELAY_COPY; /* this pair cannot (an O_APPEND file): copy instead */
            read_stream(r, s);
        } else if (errno != EINTR) {
            s->out->error = errno;
            fprintf(stderr, "pkrun: writing the command's %s: %s\n",
                    s->id == 1 ? "stdout" : "stderr", strerror(errno));
            end_stream(s);
        }
        return;
    }
}

enum { TAG_IN = 0, TAG_OUT = 1 };

int pkr_relay_poll_set(struct pkr_relay *r, struct pollfd *pfd, int *tags)
{
    int n = 0;
    for (int i = 0; i < r->nstreams; i++) {
        struct pkr_stream *s = &r->streams[i];
        if (s->blocked && (s->len > 0 || s->src >= 0)) {
            pfd[n] = (struct pollfd){s->out->fd, POLLOUT, 0};
            tags[n++] = i * 2 + TAG_OUT;
        } else if (s->src >= 0) {
            pfd[n] = (struct pollfd){s->src, POLLIN, 0};
            tags[n++] = i * 2 + TAG_IN;
        }
    }
    return n;
}

void pkr_relay_handle(struct pkr_relay *r, const struct pollfd *pfd, const int *tags, int n)
{
    for (int k = 0; k < n; k++) {
        if (pfd[k].revents == 0)
            continue;
        struct pkr_stream *s = &r->streams[tags[k] / 2];
        if (tags[k] % 2 == TAG_OUT) {
            if (s->how != RELAY_COPY)
                s->blocked = false; /* room again: the next round moves more */
            else
                flush_pending(r, s);
        } else if (s->how != RELAY_COPY) {
            kernel_stream(r, s);
        } else {
            read_stream(r, s);
        }
    }
    if (r->draining) {
        /* After the exit, what is buffered is read without waiting for POLLIN. */
        for (int i = 0; i < r->nstreams; i++) {
            struct pkr_stream *s = &r->streams[i];
            while (s->src >= 0 && !s->blocked) {
                if (s->how != RELAY_COPY)
                    kernel_stream(r, s);
                else
                    read_stream(r, s);
            }
        }
    }
}

bool pkr_relay_done(const struct pkr_relay *r)
{
    for (int i = 0; i < r->nstreams; i++)
        if (r->streams[i].src >= 0 || r->streams[i].len > 0)
            return false;
    return true;
}

bool pkr_relay_stalled(const struct pkr_relay *r)
{
    for (int i = 0; i < r->nstreams; i++)
        if (r->streams[i].blocked)
            return true;
    return false;
}

void pkr_relay_give_up(struct pkr_relay *r)
{
    for (int i = 0; i < r->nstreams; i++) {
        struct pkr_stream *s = &r->streams[i];
        r->dropped += s->len + (uint64_t)pipe_bytes(s->src);
        s->len = 0;
        close_fd(&s->src);
    }
}

int pkr_relay_error(const struct pkr_relay *r)
{
    for (int i = 0; i < 2; i++)
        if (r->outs[i].error != 0)
            return r->outs[i].error;
    return 0;
}

void pkr_relay_release(struct pkr_relay *r)
{
    for (int i = 0; i < r->nstreams; i++) {
        struct pkr_stream *s = &r->streams[i];
        close_fd(&s->src);
        close_fd(&s->child_end);
        free(s->buf);
        s->buf = NULL;
        pkr_capture_release(&s->cap);
    }
    for (int i = 0; i < 2; i++)
        close_fd(&r->outs[i].reopened);
}

void pkr_relay_report(struct pkr_relay *r, struct pkr_stream_report out[2])
{
    for (int id = 1; id <= 2; id++) {
        struct pkr_stream_report *rep = &out[id - 1];
        *rep = (struct pkr_stream_report){.forwarding = r->closed[id] ? PKR_CLOSED : PKR_INHERITED};
        if (id == 2 && r->merged)
            rep->forwarding = PKR_MERGED;
        for (int i = 0; i < r->nstreams && rep->forwarding != PKR_MERGED; i++) {
            struct pkr_stream *s = &r->streams[i];
            if (s->id == id)
                *rep = (struct pkr_stream_report){.forwarding = PKR_RELAYED,
                                                  .bytes = s->bytes,
                                                  .delivered_bytes = s->out->bytes,
                                                  .reader_gone = s->out->gone,
                                                  .write_error = s->out->error,
                                                  .capture = s->capturing ? &s->cap : NULL};
        }
    }
}
