/* The test pattern: element i of the tensor holds the low bytes of a 64-bit hash of (i, seed).
 * Every byte depends on the position, so a misplaced element is caught. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "exec/combine.h"
#include "layouts/layout_internal.h"
#include "plan/plan_internal.h"
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

/* The runs of box (inside tile) of layout l. */
static mc_status_t each_run_in(const mc_layout_t *l, const mc_box_t *tile, const mc_box_t *box,
                               run_fn fn, void *ctx)
{
    int nd = l->ndim;
    int64_t idx[MC_MAX_NDIM], n = box->hi[nd - 1] - box->lo[nd - 1];
    for (int d = 0; d < nd; d++) {
        if (box->hi[d] <= box->lo[d])
            return MC_OK;
        idx[d] = box->lo[d];
    }
    for (;;) {
        int64_t flat = 0, at = 0;
        for (int d = 0; d < nd; d++) {
            flat = flat * l->shape[d] + idx[d];
            at = at * (tile->hi[d] - tile->lo[d]) + idx[d] - tile->lo[d];
        }
        fn(ctx, flat, at, n);
        int d = nd - 2;
        while (d >= 0 && ++idx[d] == box->hi[d]) {
            idx[d] = box->lo[d];
            d--;
        }
        if (d < 0)
            return MC_OK;
    }
}

static mc_status_t each_run(const mc_layout_t *l, int64_t device, run_fn fn, void *ctx)
{
    if (!l)
        return mc_error(MC_ERR_INVALID, "pattern: layout must not be NULL");
    mc_box_t box;
    mc_status_t s = mc_layout_tile(l, device, &box);
    return s ? s : each_run_in(l, &box, &box, fn, ctx);
}

typedef struct {
    uint64_t seed;
    size_t esize;
    unsigned char *tile;
    const unsigned char *ctile;
    int64_t wrong;
    /* reductions */
    mc_dtype_t dtype;
    mc_reduce_t op;
    int64_t naddends, addend;
    unsigned char *vals; /* naddends elements: one element's addends */
    const void **ptrs;
    double max_diff;
    const mc_reduce_tree_t *tree; /* the flow's combine tree */
    unsigned char *partial;       /* per combiner: its partial of one element */
} pat_t;

static int is_float(mc_dtype_t t)
{
    return t == MC_DTYPE_F64 || t == MC_DTYPE_F32 || t == MC_DTYPE_F16 || t == MC_DTYPE_BF16;
}

/* Addend a of element flat, written to out; *exact gets its value as a double. */
static void addend_value(const pat_t *p, int64_t flat, int64_t a, void *out, double *exact)
{
    uint64_t h = mix(mix((uint64_t)flat ^ p->seed) + (uint64_t)a);
    double v = (double)(int64_t)(h % 2048) / 16.0 - 64.0; /* exact in every float dtype */
    switch (p->dtype) {
    case MC_DTYPE_F64:
        memcpy(out, &v, 8);
        break;
    case MC_DTYPE_F32: {
        float f = (float)v;
        memcpy(out, &f, 4);
        break;
    }
    case MC_DTYPE_F16:
    case MC_DTYPE_BF16: {
        uint16_t x = p->dtype == MC_DTYPE_F16 ? mc_f32_to_f16((float)v) : mc_f32_to_bf16((float)v);
        memcpy(out, &x, 2);
        break;
    }
    case MC_DTYPE_BOOL:
        h &= 1;
        memcpy(out, &h, 1);
        break;
    default:
        memcpy(out, &h, p->esize);
    }
    if (exact && p->dtype == MC_DTYPE_BF16) { /* bf16 rounds it: the value stored */
        uint16_t x;
        memcpy(&x, out, 2);
        v = mc_bf16_to_f32(x);
    }
    if (exact)
        *exact = v;
}

static void fill_addend_run(void *ctx, int64_t flat, int64_t at, int64_t n)
{
    pat_t *p = ctx;
    for (int64_t i = 0; i < n; i++)
        addend_value(p, flat + i, p->addend, p->tile + (size_t)(at + i) * p->esize, NULL);
}

/* Each element: the addends combined along the flow's combine tree by the reduction kernel
 * (the bits every device must get: each combiner's partial rounded to the dtype, as it
 * travels); floats also against the float64 combination. */
static void check_reduced_run(void *ctx, int64_t flat, int64_t at, int64_t n)
{
    pat_t *p = ctx;
    for (int64_t i = 0; i < n; i++) {
        double ref = 0, v;
        for (int64_t a = 0; a < p->naddends; a++) {
            addend_value(p, flat + i, a, p->vals + (size_t)a * p->esize, &v);
            if (p->op == MC_REDUCE_SUM || p->op == MC_REDUCE_AVG)
                ref += v;
            else if (a == 0 || (p->op == MC_REDUCE_MAX ? v > ref : v < ref))
                ref = v;
        }
        if (p->op == MC_REDUCE_AVG)
            ref /= (double)p->naddends;
        const mc_reduce_tree_t *t = p->tree;
        for (int64_t c = 0; c < t->ncomb; c++) {
            for (int64_t j = 0; j < t->comb[c].nin; j++) {
                int64_t v = t->in[t->comb[c].in0 + j];
                p->ptrs[j] = v >= 0 ? p->vals + (size_t)v * p->esize
                                    : p->partial + (size_t)(-v - 1) * p->esize;
            }
            mc_combine(p->dtype, p->op, (int)t->comb[c].nin, p->ptrs,
                       p->partial + (size_t)c * p->esize, 1);
        }
        const unsigned char *want = p->partial + (size_t)(t->ncomb - 1) * p->esize;
        const unsigned char *got = p->ctile + (size_t)(at + i) * p->esize;
        if (memcmp(got, want, p->esize))
            p->wrong++;
        if (!is_float(p->dtype))
            continue;
        double g;
        if (p->dtype == MC_DTYPE_F64) {
            memcpy(&g, got, 8);
        } else if (p->dtype == MC_DTYPE_F32) {
            float f;
            memcpy(&f, got, 4);
            g = f;
        } else {
            uint16_t x;
            memcpy(&x, got, 2);
            g = p->dtype == MC_DTYPE_F16 ? mc_f16_to_f32(x) : mc_bf16_to_f32(x);
        }
        double d = fabs(g - ref);
        if (!(d <= p->max_diff)) /* NaN counts as the largest */
            p->max_diff = isnan(d) ? INFINITY : d;
    }
}

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

static void check_identity_run(void *ctx, int64_t flat, int64_t at, int64_t n)
{
    pat_t *p = ctx;
    (void)flat;
    for (int64_t i = 0; i < n; i++)
        if (memcmp(p->ctile + (size_t)(at + i) * p->esize, p->vals, p->esize))
            p->wrong++;
}

/* On a Partial destination, a device other than addend 0 must hold the op's identity
 * (mc_combine_identity): checks that, and returns 1, when device_id is one (else 0). */
static int check_identity(const mc_layout_t *dst, int64_t device_id, const void *tile,
                          int64_t *wrong, mc_status_t *s)
{
    int64_t mi = dst ? mc_mesh_find(dst->mesh, device_id) : -1;
    if (mi < 0 || mc_layout_addends(dst) < 2 || mc_layout_addend_index(dst, mi) == 0)
        return 0;
    unsigned char elem[8];
    mc_combine_identity(dst->dtype, mc_spec_reduce(dst->spec), elem);
    pat_t p = {.ctile = tile, .esize = mc_dtype_size(dst->dtype), .vals = elem};
    *s = each_run(dst, device_id, check_identity_run, &p);
    if (!*s)
        *wrong = p.wrong;
    return 1;
}

mc_status_t mc_pattern_fill(const mc_layout_t *layout, int64_t device_id, uint64_t seed, void *tile)
{
    if (!tile)
        return mc_error(MC_ERR_INVALID, "pattern: tile must not be NULL");
    pat_t p = {.seed = seed * 0x9e3779b97f4a7c15ULL, .tile = tile};
    if (layout && mc_layout_addends(layout) > 1) {
        int64_t mi = mc_mesh_find(layout->mesh, device_id);
        if (mi < 0)
            return mc_error(MC_ERR_INVALID, "pattern: device %lld is not in the mesh",
                            (long long)device_id);
        p.esize = mc_dtype_size(layout->dtype);
        p.dtype = layout->dtype;
        p.addend = mc_layout_addend_index(layout, mi);
        return each_run(layout, device_id, fill_addend_run, &p);
    }
    if (layout)
        p.esize = mc_dtype_size(layout->dtype);
    return each_run(layout, device_id, fill_run, &p);
}

mc_status_t mc_pattern_check(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                             const void *tile, int64_t *wrong)
{
    if (!tile || !wrong)
        return mc_error(MC_ERR_INVALID, "pattern: tile and wrong must not be NULL");
    mc_status_t s = MC_OK;
    if (check_identity(layout, device_id, tile, wrong, &s))
        return s;
    pat_t p = {.seed = seed * 0x9e3779b97f4a7c15ULL, .ctile = tile};
    if (layout)
        p.esize = mc_dtype_size(layout->dtype);
    s = each_run(layout, device_id, check_run, &p);
    if (!s)
        *wrong = p.wrong;
    return s;
}

mc_status_t mc_pattern_check_reduced(const mc_plan_t *plan, int64_t device_id, uint64_t seed,
                                     const void *tile, int64_t *wrong, double *max_diff)
{
    if (!plan || !tile || !wrong)
        return mc_error(MC_ERR_INVALID, "pattern: plan, tile and wrong must not be NULL");
    const mc_layout_t *src = plan->src, *dst = plan->dst;
    if (src->dtype != dst->dtype || mc_layout_addends(src) < 2)
        return mc_error(MC_ERR_INVALID, "pattern: the plan's source must be partial");
    mc_status_t s = mc_combine_check(src->dtype, mc_spec_reduce(src->spec));
    if (s)
        return s;
    if (check_identity(dst, device_id, tile, wrong, &s)) {
        if (!s && max_diff)
            *max_diff = 0;
        return s;
    }
    mc_box_t tbox;
    if ((s = mc_layout_tile(dst, device_id, &tbox)))
        return s;
    pat_t p = {.seed = seed * 0x9e3779b97f4a7c15ULL,
               .ctile = tile,
               .esize = mc_dtype_size(src->dtype),
               .dtype = src->dtype,
               .op = mc_spec_reduce(src->spec),
               .naddends = mc_layout_addends(src)};
    int64_t k = p.naddends, covered = 0;
    p.vals = mc_calloc((size_t)k, p.esize);
    p.ptrs = mc_calloc((size_t)k + 1, sizeof *p.ptrs);
    p.partial = mc_calloc((size_t)k + 1, p.esize); /* a tree has at most k combiners */
    if (!p.vals || !p.ptrs || !p.partial)
        s = MC_ERR_NOMEM;
    /* every element comes from one flow, combined along that flow's tree */
    for (int64_t fi = 0; fi < plan->nflows && !s; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        if (!mc_piece_needs(&plan->pieces->pieces[f->piece], device_id))
            continue;
        mc_reduce_tree_t t;
        if ((s = mc_reduce_tree(plan, fi, &t)))
            break;
        p.tree = &t;
        s = each_run_in(dst, &tbox, &f->box, check_reduced_run, &p);
        covered += mc_box_volume(&f->box, dst->ndim);
        mc_reduce_tree_free(&t);
    }
    free(p.vals);
    free(p.ptrs);
    free(p.partial);
    if (!s) {
        int64_t missing = mc_box_volume(&tbox, dst->ndim) - covered;
        *wrong = p.wrong + (missing > 0 ? missing : 0); /* elements no flow delivers */
        if (max_diff)
            *max_diff = p.max_diff;
    }
    return s;
}
