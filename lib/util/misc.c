/* Small helpers: checked allocation, clock, number and id-list parsing. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

void mc_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < MC_HUGE_BYTES)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page,
              hi = ((uintptr_t)p + bytes) / page * page;
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure changes nothing */
#else
    (void)p;
    (void)bytes;
#endif
}

void *mc_malloc(size_t n, size_t size)
{
    size_t bytes;
    void *p = __builtin_mul_overflow(n ? n : 1, size ? size : 1, &bytes) ? NULL : malloc(bytes);
    if (!p)
        mc_error(MC_ERR_NOMEM, "out of memory allocating %zu x %zu bytes", n, size);
    else
        mc_advise_huge(p, bytes);
    return p;
}

void *mc_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        mc_error(MC_ERR_NOMEM, "out of memory allocating %zu x %zu bytes", n, size);
    else
        mc_advise_huge(p, n * size);
    return p;
}

char *mc_strdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        mc_error(MC_ERR_NOMEM, "out of memory copying a string");
    return p;
}

mc_status_t mc_grow(void **items, int64_t *cap, int64_t n, size_t elem_size, int64_t first_cap,
                    const char *what)
{
    if (n < *cap)
        return MC_OK;
    int64_t grown = *cap ? 2 * *cap : first_cap;
    void *p = realloc(*items, (size_t)grown * elem_size);
    if (!p)
        return mc_error(MC_ERR_NOMEM, "out of memory growing %s", what);
    mc_advise_huge(p, (size_t)grown * elem_size);
    *items = p;
    *cap = grown;
    return MC_OK;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

void mc_sort_desc(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_desc);
}

double mc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static mc_status_t parse_i64(const char **p, const char *text, const char *what, int64_t *out)
{
    if (!isdigit((unsigned char)**p))
        return mc_error(MC_ERR_INVALID, "%s '%s': expected a non-negative integer", what, text);
    errno = 0;
    char *end;
    long long v = strtoll(*p, &end, 10);
    if (errno == ERANGE)
        return mc_error(MC_ERR_OVERFLOW, "%s '%s': number too large", what, text);
    *p = end;
    *out = v;
    return MC_OK;
}

mc_status_t mc_parse_size(const char *text, const char *what, int64_t *out)
{
    const char *p = text;
    int64_t v, scale = 1;
    while (*p == ' ')
        p++;
    if (*p == '-')
        return mc_error(MC_ERR_INVALID, "%s '%s': must not be negative", what, text);
    mc_status_t s = parse_i64(&p, text, what, &v);
    if (s)
        return s;
    switch (toupper((unsigned char)*p)) {
    case 'K':
        scale = 1 << 10;
        p++;
        break;
    case 'M':
        scale = 1 << 20;
        p++;
        break;
    case 'G':
        scale = 1 << 30;
        p++;
        break;
    default:
        break;
    }
    if (*p == 'i' || *p == 'I')
        p++;
    if (*p == 'B' || *p == 'b')
        p++;
    if (*p)
        return mc_error(MC_ERR_INVALID, "%s '%s': unexpected '%s'", what, text, p);
    if (mc_mul_i64(v, scale, out))
        return mc_error(MC_ERR_OVERFLOW, "%s '%s': number too large", what, text);
    return MC_OK;
}

mc_status_t mc_parse_id_list(const char *text, const char *what, int64_t **out, int64_t *count)
{
    int64_t n = 0, cap = 16;
    int64_t *ids = mc_calloc((size_t)cap, sizeof *ids);
    if (!ids)
        return MC_ERR_NOMEM;
    const char *p = text;
    mc_status_t s = MC_OK;
    for (;;) {
        int64_t a, b;
        if ((s = parse_i64(&p, text, what, &a)))
            goto err;
        b = a;
        if (*p == '-') {
            p++;
            if ((s = parse_i64(&p, text, what, &b)))
                goto err;
            if (b < a) {
                s = mc_error(MC_ERR_INVALID, "%s '%s': range %lld-%lld is reversed", what, text,
                             (long long)a, (long long)b);
                goto err;
            }
            if (b - a >= MC_MAX_TEXT_IDS) {
                s = mc_error(MC_ERR_OVERFLOW, "%s '%s': range too large", what, text);
                goto err;
            }
        }
        /* Found by tests/unit/test_fuzz_parsers.c: only each range was capped, so a few KB
         * of "0-16777216," repeated expanded to billions of ids (tens of GB). Cap the total
         * as well, at MC_MAX_TEXT_IDS (the most a mesh given as text may have). */
        if (b - a + 1 > MC_MAX_TEXT_IDS - n) {
            s = mc_error(MC_ERR_OVERFLOW, "%s '%s': more than %lld ids", what, text,
                         (long long)MC_MAX_TEXT_IDS);
            goto err;
        }
        /* Found by tests/unit/test_fuzz_parsers.c: "v = a; v <= b; v++" never ended for
         * b == INT64_MAX (signed overflow, then ids until memory ran out). Count instead. */
        for (int64_t k = 0; k <= b - a; k++) {
            if ((s = mc_grow((void **)&ids, &cap, n, sizeof *ids, 16, what)))
                goto err;
            ids[n++] = a + k;
        }
        if (*p == '\0')
            break;
        if (*p != ',') {
            s = mc_error(MC_ERR_INVALID, "%s '%s': unexpected '%c'", what, text, *p);
            goto err;
        }
        p++;
    }
    *out = ids;
    *count = n;
    return MC_OK;
err:
    free(ids);
    return s;
}
