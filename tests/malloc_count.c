/*
 * An allocation counter for the tests, preloaded into a helper (LD_PRELOAD): malloc, calloc,
 * realloc and the aligned allocators count each call and forward to glibc's own entry points
 * (__libc_malloc and friends), so nothing else about the helper changes. The helper reads the
 * count through pk_malloc_count_get, found with dlsym; without the preload it is not there.
 * Not for AddressSanitizer builds, whose runtime owns malloc (the test skips them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

static atomic_ulong calls;

unsigned long pk_malloc_count_get(void);
unsigned long pk_malloc_count_get(void)
{
    return atomic_load(&calls);
}

void *malloc(size_t n)
{
    atomic_fetch_add(&calls, 1);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    atomic_fetch_add(&calls, 1);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    atomic_fetch_add(&calls, 1);
    return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    atomic_fetch_add(&calls, 1);
    return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = memalign(align, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void free(void *p)
{
    __libc_free(p);
}
