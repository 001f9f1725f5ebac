/*
 * fuzz_parse — pkbench's strict option-value parsers (harness/common/parse.h) against a
 * reference written from their contract, not from strtod.
 *
 * Every numeric option of pkbench (--alpha, --threshold, --cv-limit, --iterations, ...) goes
 * through pkb_parse_number or pkb_parse_count, which wrap strtod/strtol with checks for what
 * those accept silently: blanks, trailing junk, hexadecimal floats, "nan", "inf", overflow. A
 * missed case turns `--threshold 5x` into a silent 5. The input's first byte picks `percent` and
 * a [min, max] range; the rest (up to a NUL) is the string. Properties:
 *
 *   - pkb_parse_number accepts exactly /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?%?$/
 *     (the '%' only with `percent`) whose value is a finite double: every such string whose
 *     value lies in [1e-307, 1e308) is accepted, one at or above 1e309 or below 1e-325 (not
 *     zero) is refused, and anything off the grammar is refused;
 *   - an accepted value is finite and right: bit-exact where the decimal is exactly
 *     representable in the fast path (at most 15 significant digits, |exponent| <= 22),
 *     elsewhere within 1e-9 relative of the reference, with the sign of zero kept;
 *   - pkb_parse_count accepts exactly /^-?[0-9]+$/ whose value fits in a long and lies in
 *     [min, max], and returns that value; a refusal leaves *out untouched.
 */
#include "common/parse.h"
#include "fuzz.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A decimal read by the grammar: value = (-1)^neg * N * 10^q, N the significant digits. */
struct decimal {
    bool neg;
    const char *sig; /* first significant digit (digits may be split by the point) */
    size_t nsig;     /* significant digits, leading and trailing zeros excluded */
    int64_t q;
};

/* Matches the number grammar; fills *d. */
static bool ref_number(const char *s, bool percent, struct decimal *d)
{
    memset(d, 0, sizeof *d);
    size_t i = 0;
    if (s[i] == '+' || s[i] == '-')
        d->neg = s[i++] == '-';
    size_t int_start = i;
    while (digit(s[i]))
        i++;
    size_t int_len = i - int_start, frac_start = i, frac_len = 0;
    if (s[i] == '.') {
        frac_start = ++i;
        while (digit(s[i]))
            i++;
        frac_len = i - frac_start;
    }
    if (int_len + frac_len == 0)
        return false;
    int64_t exp = 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        bool eneg = false;
        if (s[j] == '+' || s[j] == '-')
            eneg = s[j++] == '-';
        if (!digit(s[j]))
            return false;
        for (; digit(s[j]); j++)
            if (exp < 1000000000)
                exp = exp * 10 + (s[j] - '0');
        exp = eneg ? -exp : exp;
        i = j;
    }
    if (percent && s[i] == '%')
        i++;
    if (s[i] != '\0')
        return false;

    /* Significant digits over the integer and fraction parts, as one digit string. */
    size_t total = int_len + frac_len, first = total, last = 0;
    for (size_t k = 0; k < total; k++) {
        char c = k < int_len ? s[int_start + k] : s[frac_start + k - int_len];
        if (c != '0') {
            if (first == total)
                first = k;
            last = k;
        }
    }
    if (first == total)
        return true; /* zero */
    d->nsig = last - first + 1;
    d->sig = first < int_len ? s + int_start + first : s + frac_start + first - int_len;
    /* The last significant digit sits at decimal position int_len - 1 - last. */
    d->q = exp + (int64_t)int_len - 1 - (int64_t)last;
    return true;
}

/* The k-th significant digit (skipping the point). */
static int sig_digit(const struct decimal *d, size_t k)
{
    const char *p = d->sig;
    for (size_t seen = 0;; p++) {
        if (*p == '.')
            continue;
        if (seen++ == k)
            return *p - '0';
    }
}

static void check_number(const char *s, bool percent)
{
    struct decimal d;
    bool grammar = ref_number(s, percent, &d);
    double v = -12345.0;
    bool ok = pkb_parse_number(s, percent, &v);
    if (!grammar) {
        CHECK(!ok, "accepted \"%s\" (percent %d) off the grammar as %.17g", s, percent, v);
        return;
    }
    if (!ok) {
        CHECK(v == -12345.0, "refused \"%s\" but wrote *out", s);
        CHECK(d.nsig > 0, "refused zero \"%s\"", s);
        int64_t e = (int64_t)d.nsig + d.q; /* 10^(e-1) <= |value| < 10^e */
        CHECK(e > 308 || e < -306, "refused \"%s\", |value| in [1e%lld, 1e%lld)", s,
              (long long)(e - 1), (long long)e);
        return;
    }
    CHECK(isfinite(v), "accepted \"%s\" as %g", s, v);
    if (d.nsig == 0) {
        CHECK(v == 0 && (signbit(v) != 0) == d.neg, "\"%s\" read as %g", s, v);
        return;
    }
    int64_t e = (int64_t)d.nsig + d.q;
    CHECK(e <= 309 && e >= -324, "accepted \"%s\" with |value| in [1e%lld, 1e%lld)", s,
          (long long)(e - 1), (long long)e);
    CHECK((signbit(v) != 0) == d.neg, "\"%s\" read as %g", s, v);
    if (d.nsig <= 15 && d.q >= -22 && d.q <= 22) {
        /* Both factors exact, one rounding: the correctly rounded value. */
        double n = 0;
        for (size_t k = 0; k < d.nsig; k++)
            n = n * 10 + sig_digit(&d, k);
        double p10 = 1;
        for (int64_t k = 0; k < (d.q < 0 ? -d.q : d.q); k++)
            p10 *= 10;
        double want = d.q < 0 ? n / p10 : n * p10;
        CHECK(fabs(v) == want, "\"%s\" read as %.17g, exactly %.17g", s, fabs(v), want);
    } else if (e >= -306) {
        size_t use = d.nsig < 19 ? d.nsig : 19;
        long double n = 0;
        for (size_t k = 0; k < use; k++)
            n = n * 10 + sig_digit(&d, k);
        long double want = n * powl(10.0L, (long double)(d.q + (int64_t)(d.nsig - use)));
        long double rel = fabsl((long double)fabs(v) - want) / want;
        CHECK(rel < 1e-9L, "\"%s\" read as %.17g, reference %.17Lg", s, fabs(v), want);
    }
}

static const struct {
    long min, max;
} ranges[8] = {
    {0, LONG_MAX}, {1, LONG_MAX}, {LONG_MIN, LONG_MAX}, {-5, 5},
    {1, 1000000},  {0, 0},        {-100, -1},           {LONG_MIN, LONG_MIN + 1},
};

static void check_count(const char *s, long min, long max)
{
    size_t i = s[0] == '-';
    bool neg = i == 1, grammar = digit(s[i]);
    unsigned long long u = 0;
    size_t nsig = 0;
    for (; digit(s[i]); i++) {
        if (nsig > 0 || s[i] != '0')
            nsig++;
        if (nsig <= 19)
            u = u * 10 + (unsigned)(s[i] - '0');
    }
    grammar = grammar && s[i] == '\0';
    bool fits = nsig <= 19 && (neg ? u <= (unsigned long long)LONG_MAX + 1 : u <= LONG_MAX);
    long want = !fits ? 0
                : neg ? (u == (unsigned long long)LONG_MAX + 1 ? LONG_MIN : -(long)u)
                      : (long)u;
    bool accept = grammar && fits && want >= min && want <= max;
    long v = 777;
    bool ok = pkb_parse_count(s, min, max, &v);
    CHECK(ok == accept, "pkb_parse_count(\"%s\", %ld, %ld) %s, reference %s", s, min, max,
          ok ? "accepted" : "refused", accept ? "accepts" : "refuses");
    CHECK(ok ? v == want : v == 777, "pkb_parse_count(\"%s\") gave %ld, want %ld", s, v,
          ok ? want : 777);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = malloc(size);
    if (s == NULL)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0'; /* a command-line value ends at its first NUL */
    check_number(s, data[0] & 1);
    check_count(s, ranges[(data[0] >> 1) & 7].min, ranges[(data[0] >> 1) & 7].max);
    free(s);
    return 0;
}
