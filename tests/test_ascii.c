/*
 * The stream pump's ASCII scan (lib/src/ascii.<arch>.c), every version this build has: the scan
 * decides which lines skip UTF-8 validation, so a version that answers past a high byte would let
 * invalid bytes through undecoded. Each version this CPU runs is held to a byte loop's answer for
 * every length up to 300 bytes (covering the whole-vector steps and every tail), at every
 * misalignment of the start, with one high byte at every position, and with none.
 */
#include "test.h"
#include "../lib/src/ascii.h"

#include <stdio.h>
#include <string.h>

static size_t byte_loop(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && !(p[i] & 0x80))
        i++;
    return i;
}

TEST_IMPL(ascii_prefix_every_version)
{
    struct pk__ascii_version v[8];
    size_t nv = pk__ascii_versions(v, 8);
    ASSERT(nv >= 1 && nv <= 8);
    unsigned char buf[320 + 16];
    size_t checked = 0;
    for (size_t k = 0; k < nv; k++) {
        if (!v[k].usable) {
            printf("# %s: this CPU cannot run it, not checked\n", v[k].name);
            continue;
        }
        for (size_t off = 0; off < 16; off++) {
            unsigned char *p = buf + off;
            for (size_t n = 0; n <= 300; n++) {
                memset(buf, 'a', sizeof buf);
                ASSERT_EQ(v[k].fn(p, n), n);
                for (size_t at = 0; at < n; at++) {
                    p[at] = (unsigned char)(0x80 | (at & 0x7f));
                    size_t got = v[k].fn(p, n);
                    if (got != byte_loop(p, n))
                        pk_test_fail(__FILE__, __LINE__,
                                     "%s: length %zu, offset %zu, high byte at %zu: got %zu",
                                     v[k].name, n, off, at, got);
                    p[at] = 'a';
                }
            }
        }
        checked++;
        printf("# %s: checked\n", v[k].name);
    }
    ASSERT_GE(checked, 1);
    /* And the one the pump calls agrees with them. */
    memset(buf, 'a', sizeof buf);
    buf[200] = 0xC3;
    ASSERT_EQ(pk__ascii_prefix(buf, sizeof buf), 200);
}
