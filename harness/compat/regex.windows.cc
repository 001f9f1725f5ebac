// POSIX regcomp/regexec for the Windows build of the harness (compat/include/regex.h), over
// std::regex's POSIX extended grammar. A pattern std::regex rejects is REG_BADPAT.
#include <regex.h>

#include <cstring>
#include <new>
#include <regex>

extern "C" int regcomp(regex_t *re, const char *pattern, int flags)
{
    re->impl = nullptr;
    re->re_nsub = 0;
    auto syntax = std::regex::extended;
    if (flags & REG_ICASE)
        syntax |= std::regex::icase;
    if (flags & REG_NOSUB)
        syntax |= std::regex::nosubs;
    try {
        re->impl = new std::regex(pattern, syntax);
    } catch (...) {
        return REG_BADPAT;
    }
    return 0;
}

extern "C" int regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *m, int flags)
{
    (void)flags;
    auto *rx = static_cast<const std::regex *>(re->impl);
    std::cmatch found;
    bool hit;
    try {
        hit = std::regex_search(s, found, *rx);
    } catch (...) {
        return REG_NOMATCH;
    }
    if (!hit)
        return REG_NOMATCH;
    for (size_t i = 0; i < nmatch; i++) {
        bool have = i < found.size() && found[i].matched;
        m[i].rm_so = have ? static_cast<long>(found.position(i)) : -1;
        m[i].rm_eo = have ? static_cast<long>(found.position(i) + found.length(i)) : -1;
    }
    return 0;
}

extern "C" size_t regerror(int err, const regex_t *re, char *buf, size_t len)
{
    (void)re;
    const char *msg = err == REG_NOMATCH ? "no match" : "invalid regular expression";
    size_t n = std::strlen(msg) + 1;
    if (len > 0) {
        std::strncpy(buf, msg, len - 1);
        buf[len - 1] = '\0';
    }
    return n;
}

extern "C" void regfree(regex_t *re)
{
    delete static_cast<std::regex *>(re->impl);
    re->impl = nullptr;
}
