/*
 * Line streaming, decoding and bounded capture (processkit.md §5, behaviours 8–12).
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- collecting lines ---------------------------------------------------------------------- */

struct collect {
    char *text[2]; /* all lines of stdout / stderr, '|'-joined */
    size_t len[2], cap[2];
    uint64_t count[2], last_number[2];
    bool out_of_order;
    uint64_t bad_content; /* emit-lines lines that did not match the expected pattern */
    bool check_pattern;
    long pattern_len;
};

static void append(struct collect *c, int k, const char *p, size_t n)
{
    if (c->len[k] + n + 2 > c->cap[k]) {
        c->cap[k] = (c->len[k] + n + 2) * 2;
        c->text[k] = realloc(c->text[k], c->cap[k]);
    }
    memcpy(c->text[k] + c->len[k], p, n);
    c->len[k] += n;
    c->text[k][c->len[k]++] = '|';
    c->text[k][c->len[k]] = '\0';
}

static int on_line(void *user, const pk_line *line)
{
    struct collect *c = user;
    int k = line->stream - 1;
    c->count[k]++;
    if (line->number != c->last_number[k] + 1)
        c->out_of_order = true;
    c->last_number[k] = line->number;
    if (c->check_pattern && k == 0) {
        /* emit-lines: line i is LEN letters starting at 'a' + i % 26 */
        uint64_t i = line->number - 1;
        bool ok = (long)line->len == c->pattern_len;
        for (long x = 0; ok && x < c->pattern_len; x++)
            ok = line->data[x] == (char)('a' + (i + (uint64_t)x) % 26);
        c->bad_content += !ok;
    } else if (!c->check_pattern) {
        append(c, k, line->data, line->len);
    }
    return 0;
}

static void collect_free(struct collect *c)
{
    free(c->text[0]);
    free(c->text[1]);
}

TEST_IMPL(lines_streamed_in_order_while_stderr_drains)
{
    /* Behaviour 12: 8,000 stdout lines in order while 1 MiB of stderr is drained. */
    struct collect c = {0};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("lines-and-stderr", "8000", "1048576"),
                                   .on_line = on_line,
                                   .line_user = &c},
                     &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(c.count[0], 8000);
    ASSERT(!c.out_of_order);
    ASSERT_EQ(r.err.total_bytes, 1048576);
    ASSERT_EQ(r.out.total_lines, 8000);
    /* Each stdout line is exactly "line i", in order. */
    char expect[32];
    const char *p = c.text[0];
    for (int i = 0; i < 8000; i++) {
        int n = snprintf(expect, sizeof expect, "line %d|", i);
        ASSERT(strncmp(p, expect, (size_t)n) == 0);
        p += n;
    }
    pk_result_release(&r);
    collect_free(&c);
}

TEST_IMPL(pull_api_seed_workload)
{
    /* The seed's streaming workload: 8,000 lines of 128 bytes, every line consumed before the
     * wait, through the pull API; nothing kept. */
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("emit-lines", "8000", "128"),
                                     .out.capture.keep = PK_KEEP_NONE},
                       &p, NULL));
    pk_line line;
    uint64_t n = 0, bytes = 0;
    int rc;
    while ((rc = pk_process_read_line(p, &line)) == 0) {
        ASSERT_EQ(line.stream, 1);
        ASSERT_EQ(line.number, n + 1);
        ASSERT_EQ(line.len, 128);
        ASSERT_EQ(line.data[0], 'a' + (int)(n % 26));
        n++;
        bytes += line.len + 1;
    }
    ASSERT_EQ(rc, PK_EOF);
    ASSERT_EQ(n, 8000);
    ASSERT_EQ(bytes, 1032000);
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(r.out.data == NULL);
    ASSERT_EQ(r.out.total_bytes, 1032000);
    ASSERT_EQ(r.out.total_lines, 8000);
    pk_result_release(&r);
    pk_process_free(p);
}

/* ---- decoding: data-driven cases ------------------------------------------------------------ */

struct decode_case {
    const char *name, *hex;
    const char *text; /* '|'-joined lines in text mode */
    const char *raw;  /* '|'-joined lines in raw mode */
};

static const struct decode_case decode_cases[] = {
    {"plain", "610a620a", "a|b|", "a|b|"},
    {"final line without newline", "610a62", "a|b|", "a|b|"},
    {"crlf loses one cr", "780d0d0a790d0a", "x\r|y|", "x\r\r|y\r|"},
    {"lone cr stays", "610d62", "a\rb|", "a\rb|"},
    {"invalid bytes", "6f6b20fffe206261640a", "ok \xEF\xBF\xBD\xEF\xBF\xBD bad|",
     "ok \xff\xfe bad|"},
    {"valid multibyte kept", "f09f98800ac3a90a", "\xf0\x9f\x98\x80|\xc3\xa9|",
     "\xf0\x9f\x98\x80|\xc3\xa9|"},
    {"truncated sequence is one U+FFFD", "e2820a", "\xEF\xBF\xBD|", "\xe2\x82|"},
    {"overlong is two U+FFFD", "c0af0a", "\xEF\xBF\xBD\xEF\xBF\xBD|", "\xc0\xaf|"},
    {"surrogate is three U+FFFD", "eda0800a", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|",
     "\xed\xa0\x80|"},
    {"above U+10FFFF", "f49080800a", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|",
     "\xf4\x90\x80\x80|"},
    {"empty lines", "0a0a", "||", "||"},
};

TEST_IMPL(decoding_cases)
{
    /* Behaviour 11, case by case, in text and raw mode; the capture keeps the raw bytes. */
    for (size_t i = 0; i < sizeof decode_cases / sizeof decode_cases[0]; i++) {
        const struct decode_case *dc = &decode_cases[i];
        for (int raw = 0; raw < 2; raw++) {
            struct collect c = {0};
            pk_result r;
            ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("write-hex", dc->hex),
                                           .out.raw = raw,
                                           .on_line = on_line,
                                           .line_user = &c},
                             &r));
            const char *want = raw ? dc->raw : dc->text;
            if (c.text[0] == NULL || strcmp(c.text[0], want) != 0)
                pk_test_fail(__FILE__, __LINE__, "case '%s' (%s): got \"%s\", want \"%s\"",
                             dc->name, raw ? "raw" : "text", c.text[0] ? c.text[0] : "", want);
            ASSERT_EQ(r.out.len * 2, strlen(dc->hex)); /* the capture is lossless */
            pk_result_release(&r);
            collect_free(&c);
        }
    }
}

/* ---- bounded capture ----------------------------------------------------------------------- */

TEST_IMPL(keep_tail_1gib_through_1mib_cap)
{
    /* Behaviour 8: 1 GiB of lines through a 1 MiB tail ring: at most 1 MiB kept (whole, most
     * recent lines), exact counters, truncated, and this process grows by far less than 8 MiB
     * (measured as the peak RSS above the starting RSS). The child finishing at all shows it
     * never blocked for good on a full pipe. */
    long rss0 = pk_test_status_kib("VmRSS");
    const long lines = 8323072; /* x 129 bytes = 1,073,676,288 bytes */
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("emit-lines", "8323072", "128"),
                                   .out.capture = {.keep = PK_KEEP_TAIL, .max_bytes = 1 << 20}},
                     &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.out.total_bytes, (uint64_t)lines * 129);
    ASSERT_EQ(r.out.total_lines, (uint64_t)lines);
    ASSERT(r.out.truncated);
    ASSERT_LE(r.out.len, 1 << 20);
    ASSERT_EQ(r.out.len % 129, 0); /* whole lines only */
    ASSERT_EQ(r.out.len, (1 << 20) / 129 * 129);
    /* The last kept line is the last line written. */
    const char *last = r.out.data + r.out.len - 129;
    long i = lines - 1;
    for (int x = 0; x < 128; x++)
        ASSERT_EQ(last[x], 'a' + (int)((i + x) % 26));
    long growth = pk_test_status_kib("VmHWM") - rss0;
    ASSERT_LT(growth, 8 * 1024);
    printf("peak RSS growth: %ld KiB\n", growth);
    pk_result_release(&r);
}

TEST_IMPL(flood_1gib_without_newline_stays_bounded)
{
    /* Behaviour 9: one 1 GiB line, never assembled: counted as one dropped line. */
    long rss0 = pk_test_status_kib("VmRSS");
    pk_result r;
    struct collect c = {0};
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("flood", "1073741824"),
                                   .out.capture = {.keep = PK_KEEP_TAIL, .max_bytes = 1 << 20},
                                   .on_line = on_line,
                                   .line_user = &c},
                     &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.out.total_bytes, 1073741824);
    ASSERT_EQ(r.out.total_lines, 1);
    ASSERT_EQ(r.out.dropped_lines, 1);
    ASSERT_EQ(c.count[0], 0); /* never delivered */
    ASSERT_EQ(r.out.len, 0);
    ASSERT(r.out.truncated);
    long growth = pk_test_status_kib("VmHWM") - rss0;
    ASSERT_LT(growth, 8 * 1024);
    printf("peak RSS growth: %ld KiB\n", growth);
    pk_result_release(&r);
}

TEST_IMPL(keep_head_exact_prefix_sealed)
{
    /* Behaviour 10: the first line that does not fit seals the capture, even though a later,
     * shorter line would fit. */
    const char *const argv[] = {pk_test_self(), "--helper", "args", "aaaa",
                                "bbbbbbbbbbbb", "c",        NULL};
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = argv, .out.capture = {.keep = PK_KEEP_HEAD, .max_bytes = 10}}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "aaaa\n");
    ASSERT(r.out.truncated);
    ASSERT_EQ(r.out.total_lines, 3);
    ASSERT_EQ(r.out.total_bytes, 5 + 13 + 2);
    pk_result_release(&r);
    /* By lines: exactly the first N. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("emit-lines", "1000", "10"),
                                   .out.capture = {.keep = PK_KEEP_HEAD, .max_lines = 3}},
                     &r));
    ASSERT_STR_EQ(r.out.data, "abcdefghij\nbcdefghijk\ncdefghijkl\n");
    ASSERT_EQ(r.out.total_lines, 1000);
    pk_result_release(&r);
}

TEST_IMPL(keep_tail_by_lines)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("emit-lines", "1000", "10"),
                                   .out.capture = {.keep = PK_KEEP_TAIL, .max_lines = 2}},
                     &r));
    /* lines 998 and 999 (0-based) start at 'a' + 998 % 26 = 'k' and 'l' */
    ASSERT_STR_EQ(r.out.data, "klmnopqrst\nlmnopqrstu\n");
    ASSERT(r.out.truncated);
    pk_result_release(&r);
    /* Nothing dropped when everything fits. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("emit-lines", "2", "3"),
                                   .out.capture = {.keep = PK_KEEP_TAIL, .max_lines = 5}},
                     &r));
    ASSERT_STR_EQ(r.out.data, "abc\nbcd\n");
    ASSERT(!r.out.truncated);
    pk_result_release(&r);
}

TEST_IMPL(keep_tail_exact_end_after_dropped_line)
{
    /* Found by fuzz_capture: a tail is the exact end of the stream. A line too long to keep
     * (longer than the byte cap) empties the ring, as it seals a head: "A" must not be kept as if
     * "B" had followed it. */
    const char *const argv[] = {
        pk_test_self(), "--helper", "args", "A", "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLL", "B", NULL};
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = argv, .out.capture = {.keep = PK_KEEP_TAIL, .max_bytes = 16}}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "B\n");
    ASSERT(r.out.truncated);
    ASSERT_EQ(r.out.dropped_lines, 1);
    ASSERT_EQ(r.out.total_lines, 3);
    pk_result_release(&r);
}

TEST_IMPL(keep_tail_uncapped_keeps_everything)
{
    /* Found by fuzz_capture: a tail with no cap and no line consumer takes the bulk path, and
     * its output was lost (the ring stayed empty). */
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("write-hex", "610a620a63"),
                                   .out.capture = {.keep = PK_KEEP_TAIL}},
                     &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "a\nb\nc");
    ASSERT_EQ(r.out.total_lines, 3);
    ASSERT(!r.out.truncated);
    pk_result_release(&r);
}

TEST_IMPL(keep_tail_small_output_under_large_cap_stays_small)
{
    /* Found profiling fuzz_capture: a tail ring was allocated at its full byte cap and rotated
     * whole at the end, so 3 bytes kept under a 256 MiB cap touched 256 MiB (and took a second).
     * Memory now follows the output, not the cap. */
    long rss0 = pk_test_status_kib("VmRSS");
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("write-hex", "68690a"),
                                   .out.capture = {.keep = PK_KEEP_TAIL, .max_bytes = 256u << 20}},
                     &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "hi\n");
    ASSERT(!r.out.truncated);
    long growth = pk_test_status_kib("VmHWM") - rss0;
    printf("peak RSS growth: %ld KiB\n", growth);
    ASSERT_LT(growth, 8 * 1024);
    pk_result_release(&r);
}

TEST_IMPL(fail_loud_reports_totals_and_drains)
{
    /* Behaviour 10, fail-loud half: the run still drains (the child exits normally) and the
     * error carries the totals. */
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = HELPER("emit-lines", "100000", "100"),
                                  .out.capture = {.keep = PK_KEEP_FAIL, .max_bytes = 4096}},
                    &r);
    ASSERT_EQ(rc, PK_ETOOLARGE);
    ASSERT_EXITED(r, 0);
    ASSERT(r.out.truncated);
    ASSERT_EQ(r.out.total_lines, 100000);
    ASSERT_EQ(r.out.total_bytes, 100000 * 101);
    ASSERT_EQ(r.out.len, 4096 / 101 * 101);
    pk_result_release(&r);
    /* Under the cap, fail-loud is silent. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("emit-lines", "3", "5"),
                                   .out.capture = {.keep = PK_KEEP_FAIL, .max_bytes = 4096}},
                     &r));
    pk_result_release(&r);
}

TEST_IMPL(keep_none_counts_only)
{
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("emit-lines", "500", "20"), .out.capture.keep = PK_KEEP_NONE},
        &r));
    ASSERT(r.out.data == NULL);
    ASSERT_EQ(r.out.total_lines, 500);
    ASSERT_EQ(r.out.total_bytes, 500 * 21);
    pk_result_release(&r);
}

TEST_IMPL(bulk_capture_counts_lines)
{
    /* Plain capture (no caps, no line consumer) takes the bulk path and still counts lines,
     * including a final one without newline. */
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("write-hex", "610a620a63")}, &r));
    ASSERT_STR_EQ(r.out.data, "a\nb\nc");
    ASSERT_EQ(r.out.total_lines, 3);
    ASSERT(!r.out.truncated);
    pk_result_release(&r);
}

TEST_IMPL(bulk_final_line_counted_when_pipe_outlives_child)
{
    /* Found by fuzz_lines: a grandchild still holds stdout when the child exits, so the run ends
     * the stream once the pipe is empty rather than at end-of-file; the final line without a
     * newline must still be counted. */
    const char *const argv[] = {"sh", "-c", "printf 'a\\nb\\nc'; sleep 0.3 &", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "a\nb\nc");
    ASSERT_EQ(r.out.total_lines, 3);
    pk_result_release(&r);
}

TEST_IMPL(run_ends_at_child_exit_while_grandchild_holds_pipe)
{
    /* A short run polls only its pipes; when the child exits but a grandchild (uncontained here)
     * keeps stdout open, the run must still end at the child's exit — through the pidfd it takes
     * once the child outlives the short-run window — not when the grandchild lets go. */
    const char *const argv[] = {"sh", "-c", "echo a; sleep 3 & sleep 0.05", NULL};
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &r));
    int64_t took = pk_test_now_ms() - t0;
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "a\n");
    pk_result_release(&r);
    ASSERT_LT(took, 2000); /* the grandchild holds the pipe for 3 s */
}

TEST_IMPL(long_line_over_max_line_dropped_others_kept)
{
    /* A line longer than max_line is counted and dropped; its neighbours arrive intact. */
    struct collect c = {0};
    const char *const argv[] = {
        pk_test_self(), "--helper", "args", "short", "this-line-is-longer-than-sixteen",
        "tail",         NULL};
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = argv, .out.max_line = 16, .on_line = on_line, .line_user = &c}, &r));
    ASSERT_STR_EQ(c.text[0], "short|tail|");
    ASSERT_EQ(r.out.dropped_lines, 1);
    ASSERT_EQ(r.out.total_lines, 3);
    pk_result_release(&r);
    collect_free(&c);
}
