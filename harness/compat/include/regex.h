/*
 * POSIX extended regular expressions for the Windows build (see pkb_compat.h), over C++'s
 * std::regex with its POSIX extended grammar (regex.windows.cc). regexec searches (a match
 * anywhere), as POSIX's does; sub-matches are not reported (the rooms use REG_NOSUB).
 */
#ifndef PKB_COMPAT_REGEX_H
#define PKB_COMPAT_REGEX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REG_EXTENDED 0x1
#define REG_ICASE    0x2
#define REG_NOSUB    0x4
#define REG_NOMATCH  1
#define REG_BADPAT   2

typedef struct {
    void *impl;
    size_t re_nsub;
} regex_t;

typedef struct {
    long rm_so, rm_eo;
} regmatch_t;

int regcomp(regex_t *re, const char *pattern, int flags);
int regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *m, int flags);
size_t regerror(int err, const regex_t *re, char *buf, size_t len);
void regfree(regex_t *re);

#ifdef __cplusplus
}
#endif

#endif
