/*
 * pk__ascii_prefix where no vector version exists in this tree: 32 bytes per step while
 * everything is ASCII, as four 8-byte loads ORed together. (One 32-byte memcpy into an array was
 * compiled into vector loads stored to the stack and read back as words: twice the time.)
 */
#include "ascii.h"

#include <stdint.h>
#include <string.h>

size_t pk__ascii_prefix(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a, b, c, d;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        memcpy(&c, p + i + 16, 8);
        memcpy(&d, p + i + 24, 8);
        if ((a | b | c | d) & 0x8080808080808080ull)
            break;
    }
    for (; i < n; i++)
        if (p[i] & 0x80)
            break;
    return i;
}

size_t pk__ascii_versions(struct pk__ascii_version *out, size_t cap)
{
    if (cap >= 1)
        out[0] = (struct pk__ascii_version){"portable", pk__ascii_prefix, true};
    return 1;
}
