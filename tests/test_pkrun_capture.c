/*
 * pkrun's capture (lib/pkrun/capture.c) against a reference model, on random streams cut into
 * random chunks: what --json records is the head or the tail of whole lines (a final line
 * without a newline is one) within the byte and line caps, and the totals are exact. The model
 * splits the stream into lines and takes them one by one; the capture never splits lines and
 * keeps a ring, so the two agreeing over thousands of cases is the check. Chunks are fed, or read
 * into the capture's own slot as the teed relay does, at random. The newline count is
 * checked against a byte loop at every length and alignment.
 */
#define _GNU_SOURCE
#include "capture.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 88172645463325252ULL;

static unsigned next(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return n == 0 ? 0 : (unsigned)(rng % n);
}

/* The model: whole lines from the head (or the tail) while both caps allow. */
static size_t
model(const char *s, size_t n, pk_keep keep, size_t max_bytes, size_t max_lines, size_t *from)
{
    size_t starts[4096], ends[4096], count = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl != NULL ? (size_t)(nl - s) + 1 : n;
        starts[count] = i, ends[count++] = end;
        i = end;
    }
    size_t bytes = 0, taken = 0;
    if (keep != PK_KEEP_TAIL) {
        while (taken < count && bytes + (ends[taken] - starts[taken]) <= max_bytes &&
               (max_lines == 0 || taken < max_lines))
            bytes += ends[taken] - starts[taken], taken++;
        *from = 0;
        return bytes;
    }
    while (taken < count) {
        size_t k = count - 1 - taken, len = ends[k] - starts[k];
        if (bytes + len > max_bytes || (max_lines != 0 && taken >= max_lines))
            break;
        bytes += len, taken++;
    }
    *from = n - bytes;
    return bytes;
}

TEST_IMPL(pkrun_capture_matches_reference)
{
    static char stream[3000];
    const pk_keep keeps[] = {PK_KEEP_HEAD, PK_KEEP_TAIL, PK_KEEP_FAIL};
    /* A quarter under ASan, the critical path of ./x test: it checks memory, the Debug suite
     * the model over every trial. */
    const int trials = PK_TEST_UNDER_ASAN ? 5000 : 20000;
    for (int t = 0; t < trials; t++) {
        size_t n = next(3000);
        unsigned nl_one_in = 1 + next(60);
        for (size_t i = 0; i < n; i++)
            stream[i] = next(nl_one_in) == 0 ? '\n' : (char)('a' + next(26));
        pk_keep keep = keeps[next(3)];
        size_t max_bytes = next(5) == 0 ? (1 << 20) : next(400);
        size_t max_lines = next(3) == 0 ? 0 : next(12);
        struct pkr_capture c;
        pkr_capture_init(&c, keep, max_bytes, max_lines);
        for (size_t done = 0; done < n;) {
            size_t chunk = 1 + next(next(2) ? 700 : 9);
            if (chunk > n - done)
                chunk = n - done;
            if (next(2)) {
                ASSERT_OK(pkr_capture_feed(&c, stream + done, chunk));
                done += chunk;
                continue;
            }
            /* As the teed relay reads: into the slot while there is one, the rest fed. */
            for (size_t end = done + chunk; done < end;) {
                size_t room = 0, k = end - done;
                char *slot = pkr_capture_slot(&c, k, &room);
                if (slot == NULL) {
                    ASSERT_OK(pkr_capture_feed(&c, stream + done, k));
                    done += k;
                    continue;
                }
                ASSERT(room > 0);
                k = k < room ? k : room;
                memcpy(slot, stream + done, k);
                pkr_capture_commit(&c, k);
                done += k;
            }
        }
        const char *text;
        size_t len;
        bool truncated;
        pkr_capture_kept(&c, &text, &len, &truncated);
        size_t from, want = model(stream, n, keep, max_bytes, max_lines, &from);
        uint64_t lines = 0;
        for (size_t i = 0; i < n; i++)
            lines += stream[i] == '\n';
        lines += n > 0 && stream[n - 1] != '\n';
        if (len != want || memcmp(text, stream + from, len) != 0 || truncated != (want < n) ||
            c.total_bytes != n || pkr_capture_lines(&c) != lines)
            pk_test_fail(__FILE__, __LINE__,
                         "case %d: %zu bytes, keep %d, max_bytes %zu, max_lines %zu: kept %zu "
                         "(model %zu from %zu), lines %llu (model %llu)",
                         t, n, (int)keep, max_bytes, max_lines, len, want, from,
                         (unsigned long long)pkr_capture_lines(&c), (unsigned long long)lines);
        pkr_capture_release(&c);
    }
}

TEST_IMPL(pkrun_newline_count_exact)
{
    static char buf[600];
    for (int t = 0; t < 2000; t++) {
        size_t n = next(sizeof buf - 16), off = next(16);
        for (size_t i = 0; i < n; i++)
            buf[off + i] = next(4) == 0 ? '\n' : (char)next(256);
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += buf[off + i] == '\n';
        ASSERT_EQ(pkr_count_newlines(buf + off, n), want);
    }
}
