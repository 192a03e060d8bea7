/* Strided pack/unpack/copy/range (lib/exec/strided.h) against a naive oracle. Every random
 * case (seeded; the seed and the case are printed on failure) draws a tile of 1-5 dims at a
 * random tensor position, a sub-box of it (often full, extent 1 or empty along a dim) and an
 * element size of 1, 2, 4, 8 or 16 bytes. The oracle maps every byte of the box's row-major
 * string to its tile offset from coordinates alone; byte ranges (unaligned, empty, whole)
 * are then checked byte for byte, over the whole tile plus guard bytes on both sides so
 * writes outside the box show up. MESHCAST_STRIDED_SEED=<n> reruns one case. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "exec/strided.h"

#define NCASES 3000
#define NRANGES 5
#define MAX_TILE_ELEMS 2048
#define GUARD 64

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* One side: a tile with guard bytes around it, a box, and the oracle's byte map. */
typedef struct {
    int ndim;
    size_t elem;
    mc_box_t tile, box;
    int64_t tile_bytes, bytes;
    int64_t *addr; /* addr[b]: tile offset of byte b of the box's string */
    unsigned char *buf;
    unsigned char *data; /* buf + GUARD */
} side_t;

static void side_free(side_t *sd)
{
    free(sd->addr);
    free(sd->buf);
    sd->addr = NULL;
    sd->buf = NULL;
}

static void fill(uint64_t *r, unsigned char *p, int64_t n)
{
    for (int64_t i = 0; i < n; i += 8) {
        uint64_t v = rng_next(r);
        memcpy(p + i, &v, (size_t)(n - i < 8 ? n - i : 8));
    }
}

/* Oracle: the tile offset of byte b of the box's string, from the element's box
 * coordinates (div/mod of its row-major index). */
static int64_t byte_addr(const side_t *sd, int64_t b)
{
    int64_t q = b / (int64_t)sd->elem, lin = 0, c[MC_MAX_NDIM];
    for (int d = sd->ndim - 1; d >= 0; d--) {
        int64_t ext = sd->box.hi[d] - sd->box.lo[d];
        c[d] = q % ext;
        q /= ext;
    }
    for (int d = 0; d < sd->ndim; d++)
        lin = lin * (sd->tile.hi[d] - sd->tile.lo[d]) + (sd->box.lo[d] + c[d] - sd->tile.lo[d]);
    return lin * (int64_t)sd->elem + b % (int64_t)sd->elem;
}

/* Sizes, a tile buffer of random bytes with guards, and (with_map) the map of every byte. */
static void side_alloc(side_t *sd, uint64_t *r, int with_map)
{
    int64_t tile_elems = 1, box_elems = 1;
    for (int d = 0; d < sd->ndim; d++) {
        tile_elems *= sd->tile.hi[d] - sd->tile.lo[d];
        box_elems *= sd->box.hi[d] - sd->box.lo[d];
    }
    sd->tile_bytes = tile_elems * (int64_t)sd->elem;
    sd->bytes = box_elems * (int64_t)sd->elem;
    sd->buf = malloc((size_t)(sd->tile_bytes + 2 * GUARD));
    assert_non_null(sd->buf);
    sd->data = sd->buf + GUARD;
    fill(r, sd->buf, sd->tile_bytes + 2 * GUARD);
    sd->addr = NULL;
    if (!with_map)
        return;
    sd->addr = malloc((size_t)(sd->bytes > 0 ? sd->bytes : 1) * sizeof *sd->addr);
    assert_non_null(sd->addr);
    for (int64_t b = 0; b < sd->bytes; b++)
        sd->addr[b] = byte_addr(sd, b);
}

static void side_build(side_t *sd, uint64_t *r)
{
    side_alloc(sd, r, 1);
}

static const size_t elem_sizes[] = {1, 2, 4, 8, 16};

/* A random tile of ndim dims (at most MAX_TILE_ELEMS elements) and a sub-box. */
static void side_random(side_t *sd, uint64_t *r)
{
    memset(sd, 0, sizeof *sd);
    sd->ndim = rng_range(r, 0, 9) == 0 ? 1 : (int)rng_range(r, 2, 5);
    sd->elem = elem_sizes[rng_range(r, 0, 4)];
    int64_t budget = MAX_TILE_ELEMS;
    int empty_dim = rng_range(r, 0, 19) == 0 ? (int)rng_range(r, 0, sd->ndim - 1) : -1;
    for (int d = 0; d < sd->ndim; d++) {
        int64_t max_ext = budget < 12 ? budget : 12;
        int64_t ext = rng_range(r, 0, 7) == 0 ? 1 : rng_range(r, 2, max_ext < 2 ? 2 : max_ext);
        if (ext > budget)
            ext = budget;
        budget /= ext;
        sd->tile.lo[d] = rng_range(r, 0, 20);
        sd->tile.hi[d] = sd->tile.lo[d] + ext;
        int kind = (int)rng_range(r, 0, 9);
        if (d == empty_dim) { /* lo == hi anywhere in the tile, edges included */
            sd->box.lo[d] = sd->box.hi[d] = rng_range(r, sd->tile.lo[d], sd->tile.hi[d]);
        } else if (kind < 2) { /* full extent: merges with the next outer dim */
            sd->box.lo[d] = sd->tile.lo[d];
            sd->box.hi[d] = sd->tile.hi[d];
        } else if (kind < 3) { /* extent 1: dropped */
            sd->box.lo[d] = rng_range(r, sd->tile.lo[d], sd->tile.hi[d] - 1);
            sd->box.hi[d] = sd->box.lo[d] + 1;
        } else {
            /* a strict sub-range where the tile allows one, so the dim stays strided */
            int64_t n = ext > 1 ? rng_range(r, 1, ext - 1) : 1;
            sd->box.lo[d] = sd->tile.lo[d] + rng_range(r, 0, ext - n);
            sd->box.hi[d] = sd->box.lo[d] + n;
        }
    }
    side_build(sd, r);
}

/* A side holding the same number of bytes in another shape: 1-byte elements, 2-d box
 * (bytes/k, k) inside a padded tile. Empty stays empty. */
static void side_reshaped(side_t *sd, uint64_t *r, int64_t bytes)
{
    memset(sd, 0, sizeof *sd);
    sd->ndim = 2;
    sd->elem = 1;
    int64_t k = 1;
    for (int t = 0; t < 8 && bytes > 0; t++) {
        int64_t c = rng_range(r, 1, bytes < 64 ? bytes : 64);
        if (bytes % c == 0)
            k = c;
    }
    int64_t ext[2] = {bytes > 0 ? bytes / k : 0, k};
    for (int d = 0; d < 2; d++) {
        int64_t pad = rng_range(r, 0, 2), at = rng_range(r, 0, pad);
        sd->tile.lo[d] = rng_range(r, 0, 5);
        sd->tile.hi[d] = sd->tile.lo[d] + ext[d] + pad;
        sd->box.lo[d] = sd->tile.lo[d] + at;
        sd->box.hi[d] = sd->box.lo[d] + ext[d];
    }
    side_build(sd, r);
}

/* The same box shape and element size as src, in a different random tile. */
static void side_same_shape(side_t *sd, uint64_t *r, const side_t *src)
{
    memset(sd, 0, sizeof *sd);
    sd->ndim = src->ndim;
    sd->elem = src->elem;
    for (int d = 0; d < sd->ndim; d++) {
        int64_t ext = src->box.hi[d] - src->box.lo[d];
        int64_t pad = rng_range(r, 0, 3) == 0 ? 0 : rng_range(r, 0, 2);
        int64_t at = rng_range(r, 0, pad);
        sd->tile.lo[d] = rng_range(r, 0, 20);
        sd->tile.hi[d] = sd->tile.lo[d] + ext + pad;
        sd->box.lo[d] = sd->tile.lo[d] + at;
        sd->box.hi[d] = sd->box.lo[d] + ext;
    }
    side_build(sd, r);
}

static int describe(char *out, size_t cap, const char *name, const side_t *sd)
{
    int n = snprintf(out, cap, "%s: ndim %d elem %zu bytes %lld tile", name, sd->ndim, sd->elem,
                     (long long)sd->bytes);
    for (int d = 0; d < sd->ndim; d++)
        n += snprintf(out + n, cap - (size_t)n, " [%lld,%lld)", (long long)sd->tile.lo[d],
                      (long long)sd->tile.hi[d]);
    n += snprintf(out + n, cap - (size_t)n, " box");
    for (int d = 0; d < sd->ndim; d++)
        n += snprintf(out + n, cap - (size_t)n, " [%lld,%lld)", (long long)sd->box.lo[d],
                      (long long)sd->box.hi[d]);
    return n;
}

static void init_side(mc_strided_t *s, side_t *sd)
{
    mc_strided_init(s, sd->data, &sd->tile, &sd->box, sd->ndim, sd->elem);
}

/* A random byte range of a string of `bytes` bytes, biased to the edge cases. */
static void random_range(uint64_t *r, int64_t bytes, int64_t elem, int64_t *off, int64_t *len)
{
    switch (rng_range(r, 0, 6)) {
    case 0: /* whole */
        *off = 0;
        *len = bytes;
        return;
    case 1: /* empty, anywhere including the end */
        *off = rng_range(r, 0, bytes);
        *len = 0;
        return;
    case 2: /* short, often inside one element */
        *off = rng_range(r, 0, bytes);
        *len = rng_range(r, 0, 2 * elem);
        if (*len > bytes - *off)
            *len = bytes - *off;
        return;
    case 3: /* element-aligned, as the engine uses */
        *off = rng_range(r, 0, bytes / elem) * elem;
        *len = rng_range(r, 0, (bytes - *off) / elem) * elem;
        return;
    case 4: /* to the end */
        *off = rng_range(r, 0, bytes);
        *len = bytes - *off;
        return;
    default:
        *off = rng_range(r, 0, bytes);
        *len = rng_range(r, 0, bytes - *off);
    }
}

#define FAIL_IF(cond, ...)                                                                         \
    do {                                                                                           \
        if (cond) {                                                                                \
            print_error("strided: seed %llu: ", (unsigned long long)seed);                         \
            print_error(__VA_ARGS__);                                                              \
            print_error("\n  %s\n", desc);                                                         \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* The merged description: extents multiply to bytes, runs are innermost, extent-1 dims
 * are gone, and no two neighbouring dims could have merged. */
static void check_merged(const mc_strided_t *s, const side_t *sd, uint64_t seed, const char *desc)
{
    FAIL_IF(s->bytes != sd->bytes, "bytes %lld, expected %lld", (long long)s->bytes,
            (long long)sd->bytes);
    FAIL_IF(s->ndim < 1 || s->ndim > (sd->ndim > 1 ? sd->ndim : 1), "merged ndim %d", s->ndim);
    FAIL_IF(s->stride[s->ndim - 1] != 1, "innermost stride %lld",
            (long long)s->stride[s->ndim - 1]);
    FAIL_IF(s->run_bytes != s->count[s->ndim - 1], "run_bytes %lld", (long long)s->run_bytes);
    if (sd->bytes == 0)
        return;
    int64_t prod = 1;
    for (int d = 0; d < s->ndim; d++) {
        prod *= s->count[d];
        FAIL_IF(d < s->ndim - 1 && s->count[d] < 2, "dim %d of extent %lld kept", d,
                (long long)s->count[d]);
        FAIL_IF(d < s->ndim - 1 && s->count[d + 1] * s->stride[d + 1] == s->stride[d],
                "dims %d and %d not merged", d, d + 1);
    }
    FAIL_IF(prod != sd->bytes, "counts multiply to %lld", (long long)prod);
    FAIL_IF(s->base != (char *)sd->data + sd->addr[0], "base at %lld, expected %lld",
            (long long)(s->base - (char *)sd->data), (long long)sd->addr[0]);
}

static void check_one_side(const side_t *sd, const mc_strided_t *s, uint64_t *r, uint64_t seed,
                           const char *desc)
{
    int64_t tb = sd->tile_bytes + 2 * GUARD;
    unsigned char *expect = malloc((size_t)tb), *save = malloc((size_t)tb);
    assert_non_null(expect);
    assert_non_null(save);
    for (int k = 0; k < NRANGES; k++) {
        int64_t off, len;
        random_range(r, sd->bytes, (int64_t)sd->elem, &off, &len);
        /* Exact-size flat buffers, so ASan sees any overrun of them. */
        unsigned char *out = malloc((size_t)(len > 0 ? len : 1));
        unsigned char *in = malloc((size_t)(len > 0 ? len : 1));
        assert_non_null(out);
        assert_non_null(in);

        memcpy(save, sd->buf, (size_t)tb);
        mc_strided_pack(s, off, len, out);
        for (int64_t i = 0; i < len; i++)
            FAIL_IF(out[i] != sd->data[sd->addr[off + i]], "pack [%lld,+%lld): byte %lld differs",
                    (long long)off, (long long)len, (long long)i);
        FAIL_IF(memcmp(save, sd->buf, (size_t)tb) != 0, "pack [%lld,+%lld) wrote to the tile",
                (long long)off, (long long)len);

        fill(r, in, len);
        memcpy(expect, sd->buf, (size_t)tb);
        for (int64_t i = 0; i < len; i++)
            expect[GUARD + sd->addr[off + i]] = in[i];
        mc_strided_unpack(s, off, len, in);
        for (int64_t i = 0; i < tb; i++)
            FAIL_IF(expect[i] != sd->buf[i], "unpack [%lld,+%lld): tile byte %lld (%s)",
                    (long long)off, (long long)len, (long long)(i - GUARD),
                    i < GUARD || i >= GUARD + sd->tile_bytes ? "guard" : "tile");

        /* Contiguous in memory exactly when the oracle's addresses are consecutive. */
        int contiguous = 1;
        for (int64_t i = 1; i < len; i++)
            contiguous &= sd->addr[off + i] == sd->addr[off] + i;
        char *p = mc_strided_range(s, off, len);
        if (len == 0) {
            FAIL_IF(p == NULL, "range [%lld,+0) is NULL", (long long)off);
        } else {
            FAIL_IF(contiguous != (p != NULL), "range [%lld,+%lld): %s, expected %s",
                    (long long)off, (long long)len, p ? "pointer" : "NULL",
                    contiguous ? "pointer" : "NULL");
            FAIL_IF(p && p != (char *)sd->data + sd->addr[off], "range [%lld,+%lld) at %lld",
                    (long long)off, (long long)len, (long long)(p - (char *)sd->data));
        }
        free(out);
        free(in);
    }
    free(expect);
    free(save);
}

static void check_copy(const side_t *src, const side_t *dst, uint64_t *r, uint64_t seed,
                       const char *desc)
{
    mc_strided_t ss, sd;
    mc_strided_init(&ss, src->data, &src->tile, &src->box, src->ndim, src->elem);
    mc_strided_init(&sd, dst->data, &dst->tile, &dst->box, dst->ndim, dst->elem);
    int64_t tb = dst->tile_bytes + 2 * GUARD, stb = src->tile_bytes + 2 * GUARD;
    unsigned char *expect = malloc((size_t)tb), *save = malloc((size_t)stb);
    assert_non_null(expect);
    assert_non_null(save);
    for (int k = 0; k < NRANGES; k++) {
        int64_t off, len;
        random_range(r, src->bytes, (int64_t)src->elem, &off, &len);
        fill(r, dst->buf, tb);
        memcpy(expect, dst->buf, (size_t)tb);
        memcpy(save, src->buf, (size_t)stb);
        for (int64_t i = 0; i < len; i++)
            expect[GUARD + dst->addr[off + i]] = src->data[src->addr[off + i]];
        mc_strided_copy(&sd, &ss, off, len);
        for (int64_t i = 0; i < tb; i++)
            FAIL_IF(expect[i] != dst->buf[i], "copy [%lld,+%lld): dst byte %lld (%s)",
                    (long long)off, (long long)len, (long long)(i - GUARD),
                    i < GUARD || i >= GUARD + dst->tile_bytes ? "guard" : "tile");
        FAIL_IF(memcmp(save, src->buf, (size_t)stb) != 0, "copy [%lld,+%lld) wrote to src",
                (long long)off, (long long)len);
    }
    free(expect);
    free(save);
}

static uint64_t env_seed(int *one)
{
    const char *e = getenv("MESHCAST_STRIDED_SEED");
    *one = e && *e;
    return *one ? strtoull(e, NULL, 0) : 0;
}

static void run_case(uint64_t seed)
{
    uint64_t r = seed;
    side_t a, b;
    char desc[1024];
    side_random(&a, &r);
    int n = describe(desc, sizeof desc, "src", &a);
    mc_strided_t s;
    init_side(&s, &a);
    check_merged(&s, &a, seed, desc);
    check_one_side(&a, &s, &r, seed, desc);
    if (rng_range(&r, 0, 3) == 0)
        side_reshaped(&b, &r, a.bytes);
    else
        side_same_shape(&b, &r, &a);
    n += snprintf(desc + n, sizeof desc - (size_t)n, "\n  ");
    describe(desc + n, sizeof desc - (size_t)n, "dst", &b);
    mc_strided_t t;
    init_side(&t, &b);
    check_merged(&t, &b, seed, desc);
    check_copy(&a, &b, &r, seed, desc);
    check_copy(&b, &a, &r, seed, desc);
    side_free(&a);
    side_free(&b);
}

static void test_random_oracle(void **state)
{
    (void)state;
    int one;
    uint64_t seed = env_seed(&one);
    if (one) {
        run_case(seed);
        return;
    }
    for (uint64_t i = 0; i < NCASES; i++)
        run_case(0x5eed0000ULL + i);
}

/* Packing a box in one random chunking and unpacking it in another restores exactly the
 * box into a zeroed tile and leaves the rest zero. */
static void test_roundtrip(void **state)
{
    (void)state;
    for (uint64_t seed = 0x70000; seed < 0x70000 + 500; seed++) {
        uint64_t r = seed;
        side_t a;
        char desc[512];
        side_random(&a, &r);
        describe(desc, sizeof desc, "box", &a);
        mc_strided_t s, z;
        init_side(&s, &a);
        unsigned char *flat = malloc((size_t)(a.bytes > 0 ? a.bytes : 1));
        unsigned char *zero = calloc(1, (size_t)(a.tile_bytes > 0 ? a.tile_bytes : 1));
        assert_non_null(flat);
        assert_non_null(zero);
        for (int64_t off = 0, len; off < a.bytes || off == 0; off += len) {
            len = rng_range(&r, 0, a.bytes - off);
            mc_strided_pack(&s, off, len, flat + off);
            if (a.bytes == 0)
                break;
        }
        mc_strided_init(&z, zero, &a.tile, &a.box, a.ndim, a.elem);
        for (int64_t off = 0, len; off < a.bytes; off += len) {
            len = rng_range(&r, 1, (int64_t)a.elem * 3);
            if (len > a.bytes - off)
                len = a.bytes - off;
            mc_strided_unpack(&z, off, len, flat + off);
        }
        unsigned char *inside = calloc(1, (size_t)(a.tile_bytes > 0 ? a.tile_bytes : 1));
        assert_non_null(inside);
        for (int64_t b = 0; b < a.bytes; b++)
            inside[a.addr[b]] = 1;
        for (int64_t i = 0; i < a.tile_bytes; i++)
            FAIL_IF(zero[i] != (inside[i] ? a.data[i] : 0), "roundtrip: tile byte %lld",
                    (long long)i);
        free(inside);
        free(flat);
        free(zero);
        side_free(&a);
    }
}

/* Copying a whole box into a larger tile leaves everything around the box as it was. */
static void test_copy_guard(void **state)
{
    (void)state;
    enum { N = 40 };
    const uint64_t seed = 0;
    const char *desc = "copy guard";
    /* src: a 3-d box of 4-byte elements; dst: the same box shape inside a padded tile,
     * with the pattern 0xA5 around it. */
    static const int64_t ext[3] = {3, 5, 7};
    mc_box_t st = {{0, 0, 0}, {3, 9, 7}}, sb = {{0, 2, 0}, {3, 7, 7}};
    mc_box_t dt = {{10, 10, 10}, {15, 16, 19}}, db = {{11, 11, 12}, {14, 16, 19}};
    int32_t src[3][9][7], dst[5][6][9];
    for (int i = 0; i < 3 * 9 * 7; i++)
        ((int32_t *)src)[i] = i + 1;
    for (int len = 0; len < N; len++) {
        memset(dst, 0xA5, sizeof dst);
        mc_strided_t s, d;
        mc_strided_init(&s, src, &st, &sb, 3, 4);
        mc_strided_init(&d, dst, &dt, &db, 3, 4);
        assert_int_equal(s.bytes, ext[0] * ext[1] * ext[2] * 4);
        /* Grow the range from both ends so partial runs at either end are covered. */
        int64_t off = len * 7 % 13, n = s.bytes - off - len * 3;
        mc_strided_copy(&d, &s, off, n);
        for (int z = 0; z < 5; z++)
            for (int y = 0; y < 6; y++)
                for (int x = 0; x < 9; x++) {
                    const unsigned char *p = (const unsigned char *)&dst[z][y][x];
                    int in_box = z >= 1 && z < 4 && y >= 1 && y < 6 && x >= 2 && x < 9;
                    int64_t b0 = in_box ? (((z - 1) * 5 + (y - 1)) * 7 + (x - 2)) * 4 : -1;
                    for (int k = 0; k < 4; k++) {
                        int64_t b = b0 + k;
                        int copied = in_box && b >= off && b < off + n;
                        unsigned char want = 0xA5;
                        if (copied) {
                            int32_t v = src[z - 1][y + 1][x - 2];
                            want = ((const unsigned char *)&v)[k];
                        }
                        FAIL_IF(p[k] != want, "len %d: dst[%d][%d][%d] byte %d", len, z, y, x, k);
                    }
                }
    }
}

/* Ranges of 16 MiB and more take the streaming-store path; it must move the same bytes
 * as the plain path, which ranges under 1 MiB take. Each shape is packed, unpacked and
 * copied in one call with unaligned ends, then again in 1 MiB chunks, and the results
 * (whole tiles, guards included) compared. */
static void test_streaming_matches_plain(void **state)
{
    (void)state;
    const uint64_t seed = 0;
    static const struct {
        int ndim;
        mc_box_t tile, box, dtile, dbox;
    } shapes[] = {
        /* runs of 4100 bytes at odd addresses; dst runs shifted by 3 */
        {2,
         {{0, 0}, {4200, 6000}},
         {{3, 7}, {4200, 4107}},
         {{0, 0}, {4197, 4200}},
         {{0, 3}, {4197, 4103}}},
        /* 3-d, runs of 300 bytes; dst has runs of 600 (two rows merged) */
        {3,
         {{0, 0, 0}, {2, 30000, 400}},
         {{0, 1, 50}, {2, 29999, 350}},
         {{0, 0, 0}, {2, 29998, 300}},
         {{0, 0, 0}, {2, 29998, 300}}},
        /* contiguous box */
        {2,
         {{0, 0}, {5000, 4000}},
         {{1, 0}, {4500, 4000}},
         {{0, 0}, {4600, 4000}},
         {{1, 0}, {4500, 4000}}},
    };
    const int64_t chunk = 1 << 20;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        char desc[64];
        snprintf(desc, sizeof desc, "streaming shape %zu", k);
        side_t a = {
            .ndim = shapes[k].ndim, .elem = 1, .tile = shapes[k].tile, .box = shapes[k].box};
        side_t b = {
            .ndim = shapes[k].ndim, .elem = 1, .tile = shapes[k].dtile, .box = shapes[k].dbox};
        uint64_t r = 42 + k;
        side_alloc(&a, &r, 0);
        side_alloc(&b, &r, 0);
        assert_int_equal(a.bytes, b.bytes);
        int64_t bytes = a.bytes, off = 13, len = bytes - off - 7;
        assert_true(len >= (int64_t)16 << 20);
        mc_strided_t sa, sb;
        init_side(&sa, &a);
        init_side(&sb, &b);
        unsigned char *big = malloc((size_t)bytes), *ref = malloc((size_t)bytes);
        int64_t atb = a.tile_bytes + 2 * GUARD, btb = b.tile_bytes + 2 * GUARD;
        unsigned char *a2 = malloc((size_t)atb), *b2 = malloc((size_t)btb);
        assert_non_null(big);
        assert_non_null(ref);
        assert_non_null(a2);
        assert_non_null(b2);

        mc_strided_pack(&sa, off, len, big);
        for (int64_t o = 0; o < len; o += chunk)
            mc_strided_pack(&sa, off + o, len - o < chunk ? len - o : chunk, ref + o);
        FAIL_IF(memcmp(big, ref, (size_t)len) != 0, "pack differs");
        for (int64_t i = 0; i < len; i += 4099)
            FAIL_IF(big[i] != a.data[byte_addr(&a, off + i)], "pack byte %lld", (long long)i);

        fill(&r, big, len);
        memcpy(a2, a.buf, (size_t)atb);
        mc_strided_unpack(&sa, off, len, big);
        mc_strided_t sa2;
        mc_strided_init(&sa2, a2 + GUARD, &a.tile, &a.box, a.ndim, a.elem);
        for (int64_t o = 0; o < len; o += chunk)
            mc_strided_unpack(&sa2, off + o, len - o < chunk ? len - o : chunk, big + o);
        FAIL_IF(memcmp(a2, a.buf, (size_t)atb) != 0, "unpack differs");

        memcpy(b2, b.buf, (size_t)btb);
        mc_strided_copy(&sb, &sa, off, len);
        mc_strided_t sb2;
        mc_strided_init(&sb2, b2 + GUARD, &b.tile, &b.box, b.ndim, b.elem);
        for (int64_t o = 0; o < len; o += chunk)
            mc_strided_copy(&sb2, &sa, off + o, len - o < chunk ? len - o : chunk);
        FAIL_IF(memcmp(b2, b.buf, (size_t)btb) != 0, "copy differs");
        for (int64_t i = 0; i < len; i += 4099)
            FAIL_IF(b.data[byte_addr(&b, off + i)] != a.data[byte_addr(&a, off + i)],
                    "copy byte %lld", (long long)i);
        free(big);
        free(ref);
        free(a2);
        free(b2);
        side_free(&a);
        side_free(&b);
    }
}

/* Hand-checked merges. */
static void test_merge(void **state)
{
    (void)state;
    char buf[4096];
    mc_strided_t s;
    /* Whole tile: one run. */
    mc_box_t t2 = {{0, 0}, {4, 6}}, b = {{0, 0}, {4, 6}};
    mc_strided_init(&s, buf, &t2, &b, 2, 4);
    assert_int_equal(s.ndim, 1);
    assert_int_equal(s.run_bytes, 96);
    assert_int_equal(s.bytes, 96);
    assert_ptr_equal(mc_strided_range(&s, 10, 50), buf + 10);
    /* Full rows: still one run, starting at row 1. */
    b = (mc_box_t){{1, 0}, {3, 6}};
    mc_strided_init(&s, buf, &t2, &b, 2, 4);
    assert_int_equal(s.ndim, 1);
    assert_int_equal(s.run_bytes, 48);
    assert_ptr_equal(s.base, buf + 24);
    /* Column slab: 4 runs of 8 bytes at stride 24. */
    b = (mc_box_t){{0, 1}, {4, 3}};
    mc_strided_init(&s, buf, &t2, &b, 2, 4);
    assert_int_equal(s.ndim, 2);
    assert_int_equal(s.count[0], 4);
    assert_int_equal(s.count[1], 8);
    assert_int_equal(s.stride[0], 24);
    assert_int_equal(s.stride[1], 1);
    assert_ptr_equal(s.base, buf + 4);
    assert_null(mc_strided_range(&s, 6, 4));
    assert_ptr_equal(mc_strided_range(&s, 8, 8), buf + 28);
    /* 3-d, middle dim full: the outer two merge; extent-1 inner dim is dropped. */
    mc_box_t t3 = {{5, 0, 0}, {9, 3, 5}}, b3 = {{6, 0, 2}, {8, 3, 3}};
    mc_strided_init(&s, buf, &t3, &b3, 3, 2);
    assert_int_equal(s.ndim, 2);
    assert_int_equal(s.count[0], 6);
    assert_int_equal(s.stride[0], 10);
    assert_int_equal(s.run_bytes, 2);
    assert_ptr_equal(s.base, buf + 30 + 4);
    /* Empty box. */
    b3 = (mc_box_t){{6, 1, 2}, {8, 1, 3}};
    mc_strided_init(&s, buf, &t3, &b3, 3, 2);
    assert_int_equal(s.bytes, 0);
    assert_non_null(mc_strided_range(&s, 0, 0));
    mc_strided_pack(&s, 0, 0, buf);
    mc_strided_unpack(&s, 0, 0, buf);
    mc_strided_copy(&s, &s, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_random_oracle),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_copy_guard),
        cmocka_unit_test(test_streaming_matches_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
