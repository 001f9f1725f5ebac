/*
 * The keep-tail ring, by content: what it keeps must be exactly the most recent whole lines that
 * fit, byte for byte, wherever the ring wrapped. The 1 GiB test in test_stream.c checks lengths,
 * counts and the last line; these check the exact boundary of the byte cap (a line that fills it
 * exactly, lines that together fill it exactly) and the kept text against a model that knows
 * nothing about rings: a queue of lines, the oldest dropped until the rest fit, emptied by a line
 * that cannot fit at all.
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pk_run of argv with a tail capture; optionally with a line consumer (which must not change
 * what is kept). */
static int count_lines(void *user, const pk_line *line)
{
    (void)line;
    ++*(size_t *)user;
    return 0;
}

static void run_tail(const char *const *argv,
                     const void *in,
                     size_t in_len,
                     size_t max_bytes,
                     size_t max_lines,
                     bool consumer,
                     pk_result *r)
{
    size_t seen = 0;
    pk_command cmd = {
        .argv = argv,
        .out.capture = {.keep = PK_KEEP_TAIL, .max_bytes = max_bytes, .max_lines = max_lines},
        .on_line = consumer ? count_lines : NULL,
        .line_user = &seen,
    };
    if (in != NULL)
        cmd.in = (pk_stdio){.kind = PK_STDIO_BYTES, .data = in, .len = in_len};
    ASSERT_OK(pk_run(&cmd, r));
    ASSERT_EXITED(*r, 0);
    if (consumer)
        ASSERT_EQ(seen, r->out.total_lines - r->out.dropped_lines); /* dropped: never delivered */
}

static const char *kept(const pk_result *r)
{
    return r->out.data != NULL ? r->out.data : "";
}

TEST_IMPL(keep_tail_exact_byte_cap)
{
    static const struct {
        const char *args[4];
        const char *kept;
        bool truncated;
    } cases[] = {
        {{"abcdefg"}, "abcdefg\n", false},         /* 7 + newline = the cap exactly */
        {{"abc", "def"}, "abc\ndef\n", false},     /* two lines, 8 bytes together */
        {{"x", "abcdefg"}, "abcdefg\n", true},     /* 10 bytes: the oldest goes */
        {{"abc", "defg"}, "defg\n", true},         /* 9 bytes: the oldest goes */
        {{"ab", "cd", "efg"}, "cd\nefg\n", true},  /* 3 + 3 + 4: one eviction is enough */
        {{"abcdefgh"}, "", true},                  /* 9 bytes alone: nothing fits */
        {{"abc", "abcdefgh", "de"}, "de\n", true}, /* ...and what came before is gone */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[8] = {pk_test_self(), "--helper", "args"};
        size_t k = 3, bytes = 0;
        for (size_t a = 0; a < 4 && cases[i].args[a] != NULL; a++) {
            argv[k++] = cases[i].args[a];
            bytes += strlen(cases[i].args[a]) + 1;
        }
        argv[k] = NULL;
        for (int consumer = 0; consumer < 2; consumer++) {
            pk_result r;
            run_tail(argv, NULL, 0, 8, 0, consumer, &r);
            if (strcmp(kept(&r), cases[i].kept) != 0 || r.out.truncated != cases[i].truncated)
                pk_test_fail(__FILE__, __LINE__,
                             "case %zu: kept \"%s\" (truncated %d), want "
                             "\"%s\" (truncated %d)",
                             i, kept(&r), r.out.truncated, cases[i].kept, cases[i].truncated);
            ASSERT_EQ(r.out.len, strlen(cases[i].kept));
            ASSERT_EQ(r.out.total_lines, k - 3);
            ASSERT_EQ(r.out.total_bytes, bytes);
            ASSERT_EQ(r.out.dropped_lines, 0); /* none is longer than max_line (= the cap) */
            pk_result_release(&r);
        }
    }
    /* A final line without newline that fills the cap exactly is kept whole. */
    pk_result r;
    run_tail(HELPER("write-hex", "6162636465666768"), NULL, 0, 8, 0, false, &r);
    ASSERT_STR_EQ(kept(&r), "abcdefgh");
    ASSERT(!r.out.truncated);
    pk_result_release(&r);
}

TEST_IMPL(keep_tail_seq_through_1000_bytes)
{
    /* seq 1 3500: lines 1000..3500 are 5 bytes each, so a 1000-byte tail is exactly lines
     * 3301..3500 after the ring has wrapped many times; by lines, exactly the last 150. */
    const char *const argv[] = {"seq", "1", "3500", NULL};
    char want[1100];
    size_t n = 0;
    for (int i = 3301; i <= 3500; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "%d\n", i);
    ASSERT_EQ(n, 1000);
    for (int consumer = 0; consumer < 2; consumer++) {
        pk_result r;
        run_tail(argv, NULL, 0, 1000, 0, consumer, &r);
        ASSERT_STR_EQ(kept(&r), want);
        ASSERT(r.out.truncated);
        ASSERT_EQ(r.out.total_lines, 3500);
        ASSERT_EQ(r.out.total_bytes, 9 * 2 + 90 * 3 + 900 * 4 + 2501 * 5);
        pk_result_release(&r);
        run_tail(argv, NULL, 0, 1000, 150, consumer, &r);
        ASSERT_STR_EQ(kept(&r), want + 50 * 5);
        pk_result_release(&r);
    }
}

TEST_IMPL(keep_head_exact_byte_cap)
{
    /* The head's boundary, for HEAD and FAIL alike: lines that fill the cap exactly are all kept
     * and nothing is truncated (FAIL does not fail); one byte more seals the head. */
    static const struct {
        const char *a, *b;
        const char *kept;
        bool truncated;
    } cases[] = {
        {"abcd", "efgh", "abcd\nefgh\n", false}, /* 5 + 5 = 10: the cap exactly */
        {"abcd", "efghi", "abcd\n", true},       /* 5 + 6 = 11 */
        {"abcdefghi", "x", "abcdefghi\n", true}, /* 10, then nothing fits */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int fail = 0; fail < 2; fail++) {
            const char *const argv[] = {pk_test_self(), "--helper", "args",
                                        cases[i].a,     cases[i].b, NULL};
            pk_result r;
            int rc =
                pk_run(&(pk_command){.argv = argv,
                                     .out.capture = {.keep = fail ? PK_KEEP_FAIL : PK_KEEP_HEAD,
                                                     .max_bytes = 10}},
                       &r);
            ASSERT_EQ(rc, fail && cases[i].truncated ? PK_ETOOLARGE : 0);
            ASSERT_EXITED(r, 0);
            if (strcmp(kept(&r), cases[i].kept) != 0 || r.out.truncated != cases[i].truncated)
                pk_test_fail(__FILE__, __LINE__, "case %zu (%s): kept \"%s\" (truncated %d)", i,
                             fail ? "fail" : "head", kept(&r), r.out.truncated);
            ASSERT_EQ(r.out.total_lines, 2);
            pk_result_release(&r);
        }
    }
}

/* ==== Against a model ======================================================================== */

struct model {
    size_t *start, *len; /* a queue of kept lines: offsets into the input, lengths with newline */
    size_t head, count, bytes;
};

/* What a tail of max_bytes / max_lines keeps of `in`: a queue of whole lines, the oldest dropped
 * until the newest fits, emptied by a line longer than the byte cap (which cannot fit at all). */
static char *model_tail(const char *in, size_t n, size_t max_bytes, size_t max_lines, size_t *out_n)
{
    struct model m = {malloc(n * sizeof(size_t) + 1), malloc(n * sizeof(size_t) + 1), 0, 0, 0};
    ASSERT(m.start != NULL && m.len != NULL);
    size_t tail = 0; /* queue slots are used once each: head..head+count */
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(in + at, '\n', n - at);
        size_t len = nl != NULL ? (size_t)(nl - (in + at)) + 1 : n - at;
        if (max_bytes != 0 && len > max_bytes) {
            m.head = tail;
            m.count = m.bytes = 0;
        } else {
            m.start[tail] = at;
            m.len[tail++] = len;
            m.count++;
            m.bytes += len;
            while ((max_bytes != 0 && m.bytes > max_bytes) ||
                   (max_lines != 0 && m.count > max_lines)) {
                m.bytes -= m.len[m.head++];
                m.count--;
            }
        }
        at += len;
    }
    char *out = malloc(m.bytes + 1);
    ASSERT(out != NULL);
    size_t k = 0;
    for (size_t i = m.head; i < tail; i++) {
        memcpy(out + k, in + m.start[i], m.len[i]);
        k += m.len[i];
    }
    out[k] = '\0';
    *out_n = k;
    free(m.start);
    free(m.len);
    return out;
}

/* `lines` lines of pseudo-random printable text, 0..maxlen bytes each (an occasional one up to
 * 4 · maxlen), from a seeded generator; the last one may lack its newline. */
static char *random_text(uint64_t seed, size_t lines, size_t maxlen, bool final_newline, size_t *n)
{
    pks_rng rng;
    pks_rng_seed(&rng, seed);
    size_t cap = lines * (4 * maxlen + 1) + 1, k = 0;
    char *t = malloc(cap);
    ASSERT(t != NULL);
    for (size_t i = 0; i < lines; i++) {
        size_t len = pks_rng_below(&rng, 20) == 0 ? pks_rng_below(&rng, 4 * maxlen + 1)
                                                  : pks_rng_below(&rng, maxlen + 1);
        for (size_t c = 0; c < len; c++)
            t[k++] = (char)('!' + pks_rng_below(&rng, 94));
        if (i + 1 < lines || final_newline)
            t[k++] = '\n';
    }
    t[k] = '\0';
    *n = k;
    return t;
}

TEST_IMPL(keep_tail_matches_model)
{
    static const struct {
        size_t max_bytes, max_lines, lines, maxlen;
    } cases[] = {
        {1, 0, 300, 3},        {7, 0, 500, 6},      {64, 0, 2000, 20},    {97, 0, 3000, 40},
        {97, 3, 3000, 40},     {1000, 0, 5000, 60}, {4096, 0, 5000, 200}, {10000, 0, 8000, 50},
        {100000, 0, 40000, 8}, {0, 7, 2000, 30},    {50, 1, 400, 30},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int final_newline = 0; final_newline < 2; final_newline++) {
            size_t n, want_n;
            char *in = random_text(1000 + i, cases[i].lines, cases[i].maxlen, final_newline, &n);
            char *want = model_tail(in, n, cases[i].max_bytes, cases[i].max_lines, &want_n);
            pk_result r;
            run_tail(HELPER("echo-stdin"), in, n, cases[i].max_bytes, cases[i].max_lines,
                     i % 2 == 0, &r);
            if (r.out.len != want_n || memcmp(kept(&r), want, want_n) != 0) {
                size_t d = 0;
                while (d < want_n && d < r.out.len && kept(&r)[d] == want[d])
                    d++;
                pk_test_fail(__FILE__, __LINE__,
                             "case %zu (cap %zu bytes, %zu lines, final newline %d): kept %zu "
                             "bytes, the model %zu; first difference at byte %zu",
                             i, cases[i].max_bytes, cases[i].max_lines, final_newline, r.out.len,
                             want_n, d);
            }
            ASSERT_EQ(r.out.total_bytes, n);
            ASSERT(r.out.truncated == (want_n < n));
            pk_result_release(&r);
            free(in);
            free(want);
        }
    }
}
