/*
 * fuzz.h — what every fuzz target shares: libFuzzer's entry point, and CHECK, the assertion of a
 * property. A failed CHECK prints the property and why, then aborts, so that libFuzzer saves the
 * input as a crash (build/fuzz/artifacts/) and the run fails.
 */
#ifndef PK_FUZZ_FUZZ_H
#define PK_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "\n%s:%d: property failed: %s\n  ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif /* PK_FUZZ_FUZZ_H */
