/*
 * Text decoding across reads. The pump validates UTF-8 once per read chunk (a known-ASCII prefix
 * that grows while reads stay ASCII) and per line only past that prefix; a line that spans reads,
 * or a buffer compacted between reads, must still be decoded exactly as if it came in one read.
 * The helper write-chunks hands over each chunk only after the reader has emptied the pipe, so
 * every chunk below arrives in a read of its own, however loaded the machine is.
 *
 * Expected lines are '|'-joined; text mode replaces each maximal invalid subsequence with U+FFFD
 * (EF BF BD) and drops the CR of a CRLF, raw mode hands the bytes out unchanged, and the capture
 * always keeps the raw bytes.
 */
#define _GNU_SOURCE
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FFFD "\xEF\xBF\xBD"

struct lines {
    char *text;
    size_t len, cap;
};

static int collect(void *user, const pk_line *line)
{
    struct lines *c = user;
    if (c->len + line->len + 2 > c->cap) {
        c->cap = (c->len + line->len + 2) * 2;
        c->text = realloc(c->text, c->cap);
    }
    memcpy(c->text + c->len, line->data, line->len);
    c->len += line->len;
    c->text[c->len++] = '|';
    c->text[c->len] = '\0';
    return 0;
}

struct chunked_case {
    const char *name;
    const char *chunks[4]; /* write-chunks specs, one read each */
    const char *text, *raw;
};

static const struct chunked_case cases[] = {
    {"invalid byte after a read that ended mid-line",
     {"616263", "ff0a"},
     "abc" FFFD "|",
     "abc\xff|"},
    {"invalid byte ending a read, ASCII after it",
     {"ff", "6162630a"},
     FFFD "abc|",
     "\xff"
     "abc|"},
    {"valid sequence split across reads", {"e282", "ac0a"}, "\xe2\x82\xac|", "\xe2\x82\xac|"},
    {"invalid after complete lines in the same read",
     {"6f6b0a6162", "c3280a"},
     "ok|ab" FFFD "(|",
     "ok|ab\xc3(|"},
    {"three reads, one line", {"ff", "ff", "0a"}, FFFD FFFD "|", "\xff\xff|"},
    {"ASCII read, then invalid, then ASCII",
     {"6c310a6c32", "80", "6c330a"},
     "l1|l2" FFFD "l3|",
     "l1|l2\x80l3|"},
    {"CRLF split across reads", {"610d", "0a620a"}, "a|b|", "a\r|b|"},
    {"final line ending in CR keeps it", {"610d"}, "a\r|", "a\r|"},
};

/* The bytes the write-chunks specs argv[3..k) make the child write. */
static size_t spec_bytes(const char *const *argv, size_t k)
{
    size_t total = 0;
    for (size_t i = 3; i < k; i++) {
        size_t hex = 0;
        for (const char *p = argv[i]; *p;) {
            size_t n = strcspn(p, "*+");
            long times = p[n] == '*' ? strtol(p + n + 1, NULL, 10) : 1;
            hex += n / 2 * (size_t)times;
            p += strcspn(p, "+");
            p += *p == '+';
        }
        total += hex;
    }
    return total;
}

/* Runs one case in text or raw mode, three ways: pk_run with a callback and the default capture
 * (which keeps every line, so each line takes the full emit), with a callback and nothing kept,
 * and the pull API with nothing kept (the inline line step of pump.h); compares the lines, and
 * the capture where there is one. */
static void run_case(const char *name, const char *const *chunks, const char *want, bool raw)
{
    static const char *const way_name[] = {"callback, kept", "callback, keep none",
                                           "pull, keep none"};
    const char *argv[8] = {pk_test_self(), "--helper", "write-chunks"};
    size_t k = 3;
    for (size_t i = 0; i < 4 && chunks[i] != NULL; i++)
        argv[k++] = chunks[i];
    argv[k] = NULL;
    size_t total = spec_bytes(argv, k);
    for (int way = 0; way < 3; way++) {
        struct lines c = {0};
        pk_result r;
        pk_command cmd = {.argv = argv, .out.raw = raw};
        if (way > 0)
            cmd.out.capture.keep = PK_KEEP_NONE;
        if (way < 2) {
            cmd.on_line = collect;
            cmd.line_user = &c;
            ASSERT_OK(pk_run(&cmd, &r));
        } else {
            pk_process *proc;
            ASSERT_OK(pk_spawn(&cmd, &proc, &r));
            pk_line line;
            int rc;
            while ((rc = pk_process_read_line(proc, &line)) == 0)
                collect(&c, &line);
            ASSERT_EQ(rc, PK_EOF);
            ASSERT_OK(pk_process_wait(proc, &r));
            pk_process_free(proc);
        }
        ASSERT_EXITED(r, 0);
        if (c.text == NULL || strcmp(c.text, want) != 0)
            pk_test_fail(__FILE__, __LINE__, "case '%s' (%s, %s): got \"%.200s\", want \"%.200s\"",
                         name, raw ? "raw" : "text", way_name[way], c.text ? c.text : "", want);
        /* The capture is the child's bytes, whatever the decoding. */
        ASSERT_EQ(r.out.len, way == 0 ? total : 0);
        ASSERT_EQ(r.out.total_bytes, total);
        pk_result_release(&r);
        free(c.text);
    }
}

TEST_IMPL(decoding_across_reads)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(cases[i].name, cases[i].chunks, cases[i].text, false);
        run_case(cases[i].name, cases[i].chunks, cases[i].raw, true);
    }
}

TEST_IMPL(decoding_after_compaction)
{
    /* "x\n" and 65,000 ASCII bytes fill the first read; the line after "x" is then moved to the
     * front of the buffer before the next read, which brings an invalid byte and the newline.
     * The known-ASCII prefix must move with the bytes, or the invalid byte passes as ASCII. */
    static const char *const chunks[] = {"780a+61*65000", "ff0a", NULL};
    size_t n = 2 + 65000 + 3 + 1;
    char *want = malloc(n + 1), *raw = malloc(n + 1);
    ASSERT(want != NULL && raw != NULL);
    memcpy(want, "x|", 2);
    memset(want + 2, 'a', 65000);
    memcpy(want + 65002, FFFD "|", 5);
    memcpy(raw, want, 65002);
    memcpy(raw + 65002, "\xff|", 3);
    run_case("compacted", chunks, want, false);
    run_case("compacted", chunks, raw, true);
    free(want);
    free(raw);

    /* The same with valid text around the seam: nothing may be replaced. */
    static const char *const valid[] = {"780a+61*65000", "c3a90a", NULL};
    want = malloc(n + 1);
    ASSERT(want != NULL);
    memcpy(want, "x|", 2);
    memset(want + 2, 'a', 65000);
    memcpy(want + 65002, "\xc3\xa9|", 4);
    run_case("compacted, valid", valid, want, false);
    free(want);
}
