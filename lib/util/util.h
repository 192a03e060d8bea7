/* Internal helpers shared by every module: error reporting, checked arithmetic, timing. */
#ifndef MC_UTIL_H
#define MC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "meshcast/status.h"

/* Records a formatted message as the thread's last error and returns status. */
mc_status_t mc_error(mc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefixes the current last error with "context: " and returns status unchanged. */
mc_status_t mc_error_context(mc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mc_error_clear(void);

/* a * b and a + b with overflow detection; return 0 on success, 1 on overflow. */
static inline int mc_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}
static inline int mc_add_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* Asks the kernel to back [p, p + bytes) with transparent huge pages when bytes is at least
 * MC_HUGE_BYTES (advice only: ignored where THP is off or unsupported). The planner's arrays
 * of millions of flows and edges otherwise take a page fault per 4 KiB on first touch, up to
 * half of a large plan's time (docs/planning.md, "Planning speed"). */
#define MC_HUGE_BYTES ((size_t)4 << 20)
void mc_advise_huge(void *p, size_t bytes);
/* calloc and malloc of n * size bytes that set MC_ERR_NOMEM as the last error on failure
 * (n*size overflow checked), and mc_advise_huge what they return. */
void *mc_calloc(size_t n, size_t size);
void *mc_malloc(size_t n, size_t size);
char *mc_strdup(const char *s);

/* Makes room for one more element in a growing array *items of *cap elements holding n:
 * doubles the capacity (from first_cap) when full (mc_advise_huge on the grown array). Sets
 * MC_ERR_NOMEM, naming what, on failure (the array is left as it was). */
mc_status_t mc_grow(void **items, int64_t *cap, int64_t n, size_t elem_size, int64_t first_cap,
                    const char *what);

/* A sort key and the index of what it keys. */
typedef struct {
    uint64_t key;
    int64_t index;
} mc_sort_key_t;

/* Sorts keys[0..n) by key, stably (ties keep their order); tmp holds n keys. */
void mc_sort_keys(mc_sort_key_t *keys, mc_sort_key_t *tmp, int64_t n);
/* Sorts items[0..n) of size bytes each by key(item, ctx), stably. */
mc_status_t mc_sort_by_key(void *items, int64_t n, size_t size,
                           uint64_t (*key)(const void *item, const void *ctx), const void *ctx);

/* Sorts v[0..n) largest first. */
void mc_sort_desc(double *v, int64_t n);

/* Monotonic wall clock in seconds. */
double mc_now(void);

/* Parses a non-negative integer with optional K/M/G (powers of 1024) suffix. */
mc_status_t mc_parse_size(const char *text, const char *what, int64_t *out);

/* Most ids a list may expand to, and most devices a mesh given as text may have: planning
 * cost grows with devices, and 2^16 keeps every step well under a second. */
#define MC_MAX_TEXT_IDS ((int64_t)1 << 16)

/* Parses "a-b,c,d-e" into ascending-order-preserving ids (at most MC_MAX_TEXT_IDS); *out is
 * malloc'd. */
mc_status_t mc_parse_id_list(const char *text, const char *what, int64_t **out, int64_t *count);

#endif
