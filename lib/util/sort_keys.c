/* A stable radix sort of (key, index) pairs: qsort's call per comparison costs more than
 * the rest of an ordering or a bound on plans of 40,000+ pieces, and glibc's qsort is stable
 * only while it can take memory for a merge sort (introsort since 2.37), where a plan must
 * be the same on every machine. */
#include <stdlib.h>
#include <string.h>
#include "util.h"

void mc_sort_keys(mc_sort_key_t *keys, mc_sort_key_t *tmp, int64_t n)
{
    for (int shift = 0; shift < 64 && n > 1; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++)
            count[((keys[i].key >> shift) & 0xff) + 1]++;
        if (count[((keys[0].key >> shift) & 0xff) + 1] == n)
            continue; /* every key has this byte */
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (int64_t i = 0; i < n; i++)
            tmp[count[(keys[i].key >> shift) & 0xff]++] = keys[i];
        memcpy(keys, tmp, (size_t)n * sizeof *keys);
    }
}

mc_status_t mc_sort_by_key(void *items, int64_t n, size_t size,
                           uint64_t (*key)(const void *item, const void *ctx), const void *ctx)
{
    mc_sort_key_t *keys = mc_malloc(2 * ((size_t)n + 1), sizeof *keys);
    char *copy = mc_malloc((size_t)n + 1, size), *at = items;
    if (!keys || !copy) {
        free(keys);
        free(copy);
        return mc_error(MC_ERR_NOMEM, "out of memory sorting %lld items", (long long)n);
    }
    for (int64_t i = 0; i < n; i++)
        keys[i] = (mc_sort_key_t){key(at + (size_t)i * size, ctx), i};
    mc_sort_keys(keys, keys + n + 1, n);
    memcpy(copy, items, (size_t)n * size);
    for (int64_t i = 0; i < n; i++)
        memcpy(at + (size_t)i * size, copy + (size_t)keys[i].index * size, size);
    free(keys);
    free(copy);
    return MC_OK;
}
