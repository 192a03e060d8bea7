/* mc_sort_keys and mc_sort_by_key (lib/util/sort_keys.c) against brute force: on seeded
 * random arrays of 0-3,000 items, keys drawn from few values (ties decide), from one byte at
 * some position (the bytes every key shares are skipped), or from all 64 bits, every sort
 * must leave what a stable insertion sort leaves: keys ascending, equal keys in their first
 * order (each item carries its first position). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "util/util.h"

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A key of one of four kinds: few values, one random byte, a high byte only, any bits. */
static uint64_t draw_key(uint64_t *s, int kind, int shift)
{
    switch (kind) {
    case 0:
        return next(s) % 7;
    case 1:
        return (next(s) & 0xff) << shift;
    case 2:
        return (next(s) % 3) << 56 | 0x0101010101ull;
    default:
        return next(s);
    }
}

/* An item as a caller sorts one: a key among other fields. */
typedef struct {
    int64_t first; /* its position before the sort */
    uint64_t key;
    double payload;
} item_t;

static uint64_t item_key(const void *item, const void *ctx)
{
    (void)ctx;
    return ((const item_t *)item)->key;
}

/* The oracle: a stable insertion sort by key. */
static void insertion_sort(item_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        item_t x = v[i];
        int64_t j = i;
        for (; j > 0 && v[j - 1].key > x.key; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void test_sort_random(void **state)
{
    (void)state;
    uint64_t s = 20261202;
    for (int trial = 0; trial < 400; trial++) {
        int64_t n = trial < 8 ? trial : (int64_t)(next(&s) % 3000);
        int kind = (int)(next(&s) % 4), shift = 8 * (int)(next(&s) % 8);
        item_t *items = malloc(((size_t)n + 1) * sizeof *items);
        item_t *want = malloc(((size_t)n + 1) * sizeof *want);
        mc_sort_key_t *keys = malloc(((size_t)n + 1) * sizeof *keys);
        mc_sort_key_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
        assert_non_null(items);
        assert_non_null(want);
        assert_non_null(keys);
        assert_non_null(tmp);
        for (int64_t i = 0; i < n; i++) {
            items[i] = (item_t){i, draw_key(&s, kind, shift), (double)next(&s)};
            keys[i] = (mc_sort_key_t){items[i].key, i};
        }
        memcpy(want, items, (size_t)n * sizeof *items);
        insertion_sort(want, n);
        mc_sort_keys(keys, tmp, n);
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(keys[i].key, want[i].key);
            assert_int_equal(keys[i].index, want[i].first);
        }
        assert_int_equal(mc_sort_by_key(items, n, sizeof *items, item_key, NULL), MC_OK);
        assert_memory_equal(items, want, (size_t)n * sizeof *items);
        free(items);
        free(want);
        free(keys);
        free(tmp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
