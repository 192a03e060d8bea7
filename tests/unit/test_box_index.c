/* box_index.h, the address math shared by the CPU path and the CUDA kernels, against a
 * brute-force oracle. Seeded random cases: a tile of 1-6 dims at a random tensor position,
 * a box inside it (often full, extent 1 or empty along a dim), an element of 1, 2, 4, 8 or
 * 16 bytes. The oracle turns every byte of the box's row-major string into coordinates and
 * those into a tile offset; mc_box_offset must give the same address for every byte, and
 * mc_box_locate the same run start, offset in the run and outer indices. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "exec/strided.h"

#define NCASES 2000
#define SEED 0x5eedb0c5u

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* Tile offset of byte b of box's row-major string, from coordinates alone. */
static int64_t oracle(int ndim, const mc_box_t *tile, const mc_box_t *box, int64_t elem, int64_t b)
{
    int64_t e = b / elem, off = 0, tstride = elem;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t ext = box->hi[d] - box->lo[d];
        int64_t c = box->lo[d] + e % ext;
        e /= ext;
        off += (c - tile->lo[d]) * tstride;
        tstride *= tile->hi[d] - tile->lo[d];
    }
    return off + b % elem;
}

static void check_case(uint64_t seed)
{
    uint64_t r = seed;
    int ndim = (int)rng_range(&r, 1, 6);
    int64_t elem = (int64_t)1 << rng_range(&r, 0, 4);
    mc_box_t tile, box;
    for (int d = 0; d < ndim; d++) {
        tile.lo[d] = rng_range(&r, 0, 7);
        tile.hi[d] = tile.lo[d] + rng_range(&r, 1, ndim > 3 ? 3 : 5);
        int kind = (int)rng_range(&r, 0, 9);
        if (kind < 4) { /* the whole extent: dims merge */
            box.lo[d] = tile.lo[d];
            box.hi[d] = tile.hi[d];
        } else if (kind == 4) { /* empty */
            box.lo[d] = box.hi[d] = rng_range(&r, tile.lo[d], tile.hi[d]);
        } else {
            box.lo[d] = rng_range(&r, tile.lo[d], tile.hi[d] - 1);
            box.hi[d] = rng_range(&r, box.lo[d] + 1, tile.hi[d]);
        }
    }
    static char tile_mem[1];
    mc_strided_t s;
    mc_strided_init(&s, tile_mem, &tile, &box, ndim, (size_t)elem);
    int64_t n = elem;
    for (int d = 0; d < ndim; d++)
        n *= box.hi[d] - box.lo[d];
    if (s.bytes != n)
        fail_msg("seed %llu: %lld bytes, oracle %lld", (unsigned long long)seed, (long long)s.bytes,
                 (long long)n);
    int64_t start = s.base - tile_mem;
    for (int64_t b = 0; b < n; b++) {
        int64_t want = oracle(ndim, &tile, &box, elem, b);
        int64_t got = start + mc_box_offset(&s, b);
        if (got != want)
            fail_msg("seed %llu: byte %lld of the box at tile offset %lld, oracle %lld",
                     (unsigned long long)seed, (long long)b, (long long)got, (long long)want);
        int64_t idx[MC_MAX_NDIM], in;
        int64_t pos = mc_box_locate(&s, b, idx, &in);
        int64_t from_idx = 0;
        for (int d = 0; d < s.ndim - 1; d++) {
            assert_true(idx[d] >= 0 && idx[d] < s.count[d]);
            from_idx += idx[d] * s.stride[d];
        }
        if (pos != from_idx || in < 0 || in >= s.run_bytes || pos + in != want - start)
            fail_msg("seed %llu: byte %lld located at run %lld + %lld", (unsigned long long)seed,
                     (long long)b, (long long)pos, (long long)in);
    }
}

static void test_random_boxes(void **state)
{
    (void)state;
    uint64_t r = SEED;
    for (int i = 0; i < NCASES; i++)
        check_case(rng_next(&r));
}

/* A box whose runs are single elements in every dim: nothing merges. */
static void test_no_merge(void **state)
{
    (void)state;
    mc_box_t tile = {.lo = {0, 0, 0}, .hi = {4, 5, 6}}, box = {.lo = {1, 2, 3}, .hi = {3, 4, 5}};
    static char tile_mem[1];
    mc_strided_t s;
    mc_strided_init(&s, tile_mem, &tile, &box, 3, 4);
    assert_int_equal(s.ndim, 3);
    assert_int_equal(s.run_bytes, 8);
    for (int64_t b = 0; b < s.bytes; b++)
        assert_int_equal(s.base - tile_mem + mc_box_offset(&s, b), oracle(3, &tile, &box, 4, b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_boxes),
        cmocka_unit_test(test_no_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
