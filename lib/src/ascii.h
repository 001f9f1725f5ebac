/*
 * The ASCII scan the stream pump runs over every byte it reads (ascii.<arch>.c, or
 * ascii.generic.c where this tree has no version for the target): lines inside the prefix it
 * finds need no UTF-8 validation.
 */
#ifndef PK_ASCII_H
#define PK_ASCII_H

#include <stdbool.h>
#include <stddef.h>

/* The offset of the first byte of [p, p+n) with its high bit set, or n. */
size_t pk__ascii_prefix(const unsigned char *p, size_t n);

/* Every version of that scan in this build, for the tests, which hold each to the byte loop's
 * answer: up to cap of them into out; returns how many there are. usable: this CPU runs it. */
struct pk__ascii_version {
    const char *name;
    size_t (*fn)(const unsigned char *p, size_t n);
    bool usable;
};
size_t pk__ascii_versions(struct pk__ascii_version *out, size_t cap);

#endif /* PK_ASCII_H */
