/* The test pattern: element i of the tensor holds the low bytes of a 64-bit hash of (i, seed).
 * Every byte depends on the position, so a misplaced element is caught. */
#include <string.h>
#include "layouts/layout_internal.h"
#include "meshcast/pattern.h"
#include "util/util.h"

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Calls fn on each run of the innermost dim: flat index of its first element, element
 * offset in the tile, run length. */
typedef void (*run_fn)(void *ctx, int64_t flat, int64_t at, int64_t n);

static mc_status_t each_run(const mc_layout_t *l, int64_t device, run_fn fn, void *ctx)
{
    if (!l)
        return mc_error(MC_ERR_INVALID, "pattern: layout must not be NULL");
    mc_box_t box;
    mc_status_t s = mc_layout_tile(l, device, &box);
    if (s)
        return s;
    int nd = l->ndim;
    int64_t idx[MC_MAX_NDIM], n = box.hi[nd - 1] - box.lo[nd - 1], at = 0;
    for (int d = 0; d < nd; d++) {
        if (box.hi[d] <= box.lo[d])
            return MC_OK;
        idx[d] = box.lo[d];
    }
    for (;;) {
        int64_t flat = 0;
        for (int d = 0; d < nd; d++)
            flat = flat * l->shape[d] + idx[d];
        fn(ctx, flat, at, n);
        at += n;
        int d = nd - 2;
        while (d >= 0 && ++idx[d] == box.hi[d]) {
            idx[d] = box.lo[d];
            d--;
        }
        if (d < 0)
            return MC_OK;
    }
}

typedef struct {
    uint64_t seed;
    size_t esize;
    unsigned char *tile;
    const unsigned char *ctile;
    int64_t wrong;
} pat_t;

static void fill_run(void *ctx, int64_t flat, int64_t at, int64_t n)
{
    pat_t *p = ctx;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = mix((uint64_t)(flat + i) ^ p->seed);
        memcpy(p->tile + (size_t)(at + i) * p->esize, &v, p->esize);
    }
}

static void check_run(void *ctx, int64_t flat, int64_t at, int64_t n)
{
    pat_t *p = ctx;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = mix((uint64_t)(flat + i) ^ p->seed);
        if (memcmp(p->ctile + (size_t)(at + i) * p->esize, &v, p->esize))
            p->wrong++;
    }
}

mc_status_t mc_pattern_fill(const mc_layout_t *layout, int64_t device_id, uint64_t seed, void *tile)
{
    if (!tile)
        return mc_error(MC_ERR_INVALID, "pattern: tile must not be NULL");
    pat_t p = {.seed = seed * 0x9e3779b97f4a7c15ULL, .tile = tile};
    if (layout)
        p.esize = mc_dtype_size(layout->dtype);
    return each_run(layout, device_id, fill_run, &p);
}

mc_status_t mc_pattern_check(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                             const void *tile, int64_t *wrong)
{
    if (!tile || !wrong)
        return mc_error(MC_ERR_INVALID, "pattern: tile and wrong must not be NULL");
    pat_t p = {.seed = seed * 0x9e3779b97f4a7c15ULL, .ctile = tile};
    if (layout)
        p.esize = mc_dtype_size(layout->dtype);
    mc_status_t s = each_run(layout, device_id, check_run, &p);
    if (!s)
        *wrong = p.wrong;
    return s;
}
