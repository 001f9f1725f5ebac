/*
 * pkrun on Windows: the run, over processkit's public API. The command line (args.c), the JSON
 * outcome, the messages and the rule for writing files (output.c, output.windows.c) are the
 * POSIX pkrun's; what is here is only what Windows does differently.
 *
 * pk_run drives the whole run. COMMAND's tree lives in a Job Object (kill-on-close); the library
 * enforces DURATION and --idle-timeout (Ctrl+Break to COMMAND, then the job is terminated after
 * -k); pkrun's console control handler turns Ctrl+C, Ctrl+Break and closing the console into a
 * cancel, which ends the tree the same way. pkrun returns only when the tree is gone.
 *
 * COMMAND's bytes: when no option needs to see them, COMMAND inherits pkrun's stdin, stdout and
 * stderr (PK_STDIO_INHERIT) and they never pass through pkrun. When one does (--idle-timeout,
 * --keep fail, --json with a capture option; pkr_output_needed), the library reads COMMAND's
 * pipes and hands each line to pkrun as raw bytes; pkrun writes it out at once and feeds the
 * capture --json records (capture.c, as on POSIX). The library keeps nothing itself, so its line
 * cap is its default, 16 MiB: a longer line is counted but not relayed (processkit offers lines,
 * not chunks, on Windows), and pkrun says how many bytes were not.
 *
 * Exit status, as on POSIX where Windows has the same thing: COMMAND's own; 124 after a limit
 * (COMMAND's with --preserve-status; a limit always ends in terminating the job unless COMMAND
 * heeded Ctrl+Break, so 137 would say nothing here); 128 + N when the tree ended by signal N (137:
 * terminated after Ctrl+C); a crash's NTSTATUS, as cmd.exe shows it; 125, 126, 127 as on POSIX.
 */
#include "args.h"
#include "capture.h"
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* One of COMMAND's output streams. */
struct stream {
    int id;          /* 1 stdout, 2 stderr */
    bool open;       /* pkrun has this standard handle (else COMMAND gets none either) */
    uint64_t handed; /* the bytes of the lines processkit handed pkrun */
    uint64_t delivered;
    bool gone;      /* its reader went away: nothing more is written */
    int error;      /* another write error, positive errno: reported, exit status 125 */
    bool recording; /* its head or tail is kept in cap */
    struct pkr_capture cap;
};

struct run {
    struct pkr_options o;
    bool relayed;
    struct stream streams[2];
};

static pk_cancel *cancel;

static BOOL WINAPI on_console_event(DWORD type)
{
    pk_cancel_trigger_signal(cancel, type == CTRL_C_EVENT ? 2 : 15);
    return TRUE;
}

/* A line of COMMAND's, written out unchanged and recorded. */
static int relay_line(void *user, const pk_line *line)
{
    struct stream *s = &((struct run *)user)->streams[line->stream - 1];
    s->handed += line->len + line->newline;
    if (s->recording && (pkr_capture_feed(&s->cap, line->data, line->len) != 0 ||
                         (line->newline && pkr_capture_feed(&s->cap, "\n", 1) != 0)))
        s->recording = false; /* out of memory: the JSON says nothing was captured */
    if (s->gone || s->error != 0)
        return 0;
    int rc = pkr_write_std(s->id, line->data, line->len, &s->delivered);
    if (rc == 0 && line->newline)
        rc = pkr_write_std(s->id, "\n", 1, &s->delivered);
    if (rc == -EPIPE) {
        s->gone = true;
    } else if (rc != 0) {
        s->error = -rc;
        fprintf(stderr, "pkrun: writing the command's %s: %s\n", s->id == 1 ? "stdout" : "stderr",
                strerror(s->error));
    }
    return 0;
}

/* Nanoseconds to whole milliseconds, rounded up: a positive limit stays one (0 means none). */
static int64_t to_ms(int64_t ns)
{
    return ns / 1000000 + (ns % 1000000 != 0);
}

/* The run the options describe; sets up the relay when an option needs the output. */
static pk_command command_for(struct run *r)
{
    pk_command cmd = {
        .argv = (const char *const *)r->o.argv,
        .in.kind = PK_STDIO_INHERIT,
        .out.kind = PK_STDIO_INHERIT,
        .err.kind = PK_STDIO_INHERIT,
        .containment = r->o.containment,
        .pdeathsig = 9, /* always on; a job dies with its last handle anyway */
        .timeout_ms = to_ms(r->o.timeout_ns),
        .idle_timeout_ms = to_ms(r->o.idle_ns),
        .grace_ms = to_ms(r->o.kill_after_ns),
        .cancel = cancel,
    };
    for (int id = 1; id <= 2; id++) {
        HANDLE h = GetStdHandle(id == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);
        r->streams[id - 1] =
            (struct stream){.id = id, .open = h != NULL && h != INVALID_HANDLE_VALUE};
    }
    r->relayed = pkr_output_needed(&r->o);
    if (!r->relayed)
        return cmd;
    for (int i = 0; i < 2; i++) {
        struct stream *s = &r->streams[i];
        if (!s->open)
            continue;
        s->recording = pkr_output_recorded(&r->o);
        if (s->recording)
            pkr_capture_init(&s->cap, r->o.keep, r->o.max_bytes, r->o.max_lines);
        *(s->id == 1 ? &cmd.out : &cmd.err) =
            (pk_stdio){.kind = PK_STDIO_CAPTURE, .raw = true, .capture = {.keep = PK_KEEP_NONE}};
    }
    cmd.on_line = relay_line;
    cmd.line_user = r;
    return cmd;
}

/* How each stream reached pkrun's output, for the outcome. */
static void report_streams(struct run *r, const pk_result *res, struct pkr_stream_report out[2])
{
    const pk_output *read[2] = {&res->out, &res->err};
    for (int i = 0; i < 2; i++) {
        struct stream *s = &r->streams[i];
        out[i] = (struct pkr_stream_report){.forwarding = !s->open     ? PKR_CLOSED
                                                          : r->relayed ? PKR_RELAYED
                                                                       : PKR_INHERITED};
        if (out[i].forwarding != PKR_RELAYED)
            continue;
        out[i].bytes = read[i]->total_bytes;
        out[i].delivered_bytes = s->delivered;
        out[i].reader_gone = s->gone;
        out[i].write_error = s->error;
        out[i].capture = s->recording ? &s->cap : NULL;
    }
}

/* Bytes COMMAND wrote that never reached pkrun (a line over processkit's 16 MiB line cap; or a
 * last line without a newline, which processkit on Windows does not always hand over when it
 * finds the pipe empty after the exit) are said, not silently lost. */
static void say_unrelayed(const struct run *r, const pk_result *res)
{
    const pk_output *read[2] = {&res->out, &res->err};
    for (int i = 0; i < 2 && r->relayed; i++)
        if (r->streams[i].open && read[i]->total_bytes > r->streams[i].handed)
            fprintf(stderr, "pkrun: %llu bytes of the command's %s were not relayed\n",
                    (unsigned long long)(read[i]->total_bytes - r->streams[i].handed),
                    i == 0 ? "stdout" : "stderr");
}

/* pkrun's exit status for a run that started (see the top of this file). */
static int final_status(const struct run *r, int rc, const pk_result *res)
{
    const pk_outcome *oc = &res->outcome;
    if (rc != 0) {
        fprintf(stderr, "pkrun: waiting for '%s' failed: %s\n", r->o.argv[0], pk_strerror(rc));
        return PKR_EXIT_OWN;
    }
    if (r->streams[0].error != 0 || r->streams[1].error != 0)
        return PKR_EXIT_OWN; /* its output could not be delivered (said when it happened) */
    if (oc->kind == PK_OUTCOME_CRASHED)
        return (int)oc->ntstatus;
    bool limit = oc->kind == PK_OUTCOME_TIMED_OUT || oc->kind == PK_OUTCOME_IDLE_TIMED_OUT;
    if (limit && !r->o.preserve_status)
        return PKR_EXIT_TIMEOUT;
    return oc->signo != 0 ? 128 + oc->signo : oc->code;
}

int main(int argc, char **argv)
{
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    struct run r = {0};
    pkr_parse(argc, argv, &r.o);
    if (r.o.argv[0][0] == '\0') {
        fprintf(stderr, "pkrun: '': %s\n", strerror(ENOENT));
        return PKR_EXIT_NOTFOUND;
    }
    int rc = pk_cancel_new(&cancel);
    if (rc == 0 && !SetConsoleCtrlHandler(on_console_event, TRUE))
        rc = -EINVAL;
    if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
        return PKR_EXIT_OWN;
    }
    pk_command cmd = command_for(&r);
    if (r.o.json != NULL && strcmp(r.o.json, "-") == 0 && !r.streams[0].open) {
        fprintf(stderr, "pkrun: --json -: pkrun's stdout is closed\n");
        return PKR_EXIT_OWN;
    }
    if (r.o.verbose)
        pkr_say_start(&r.o, r.relayed, false);

    pk_result res;
    rc = pk_run(&cmd, &res);
    struct pkr_report rep = {.o = &r.o, .res = &res, .run_rc = rc, .kind = res.outcome.kind};
    report_streams(&r, &res, rep.streams);
    if (res.outcome.kind == PK_OUTCOME_SPAWN_FAILED) {
        rep.status = pkr_start_failed(&r.o, rc, &res);
    } else {
        say_unrelayed(&r, &res);
        rep.status = final_status(&r, rc, &res);
        if (r.o.keep == PK_KEEP_FAIL && pkr_over_fail_cap(rep.streams))
            rep.status = PKR_EXIT_OWN;
    }
    if (r.o.verbose)
        pkr_say_end(&r.o, &res, rep.kind, rep.status);
    if (r.o.json != NULL && pkr_json_write(&rep) != 0)
        rep.status = PKR_EXIT_OWN; /* a lost outcome is an error */
    for (int i = 0; i < 2; i++)
        pkr_capture_release(&r.streams[i].cap);
    pk_result_release(&res);
    pk_cancel_free(cancel);
    if (fflush(stdout) != 0 && rep.status == 0)
        rep.status = PKR_EXIT_OWN;
    return rep.status;
}
