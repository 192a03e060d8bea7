/* Random-case oracle for tiles and pieces. Every case (seeded; the seed and the case are
 * printed on failure) draws two meshes of up to 3 axes and 64 devices with disjoint,
 * overlapping or identical device ids, a tensor of up to 4 dims with uneven sizes (often
 * smaller than the shard count), and specs that are printed in a random notation and
 * parsed back. A brute-force oracle computes, for every element, which source devices
 * hold it and which destination devices need it straight from mesh coordinates, and the
 * pieces are checked against it element by element. MESHCAST_ORACLE_SEED=<n> reruns one
 * case. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/layout.h"
#include "layouts/layout_internal.h"
#include "layouts/pieces.h"

#define NCASES 3000
#define MAX_ELEMS 4096
#define MAX_DEV 64
#define MAX_ID 256

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rng_int(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

static void shuffle(uint64_t *r, int64_t *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rng_int(r, i + 1);
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

typedef struct {
    uint64_t seed;
    const char *ids_mode;
    char desc[2048];
    int ndim;
    int64_t shape[MC_MAX_NDIM];
    int64_t nelem;
    mc_dtype_t dtype;
    mc_mesh_t *mesh[2]; /* src, dst */
    mc_layout_t *layout[2];
    char spec_text[2][256];
    /* Oracle: hold[side][d][x] = mask of mesh indices whose shard along d contains x. */
    uint64_t hold[2][MC_MAX_NDIM][MAX_ELEMS];
    int64_t src_index_of_id[MAX_ID]; /* -1 if not in the src mesh */
    int64_t dst_index_of_id[MAX_ID];
} oracle_case_t;

static mc_mesh_t *random_mesh(uint64_t *r, int ndim_hint, int64_t max_size, const int64_t *ids,
                              int64_t *size_out)
{
    int ndim = ndim_hint ? ndim_hint : 1 + rng_int(r, 3);
    int64_t shape[3], size = 1;
    for (int a = 0; a < ndim; a++) {
        int64_t lim = max_size / size;
        shape[a] = 1 + rng_int(r, (int)(lim < 8 ? lim : 8));
        size *= shape[a];
    }
    static const char *pool[] = {"dp", "tp", "pp", "x", "y", "z", "mdl", "data"};
    const char *names[3];
    int pick[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int a = 0; a < ndim; a++) {
        int j = a + rng_int(r, 8 - a), t = pick[a];
        pick[a] = pick[j];
        pick[j] = t;
        names[a] = pool[pick[a]];
    }
    mc_mesh_t *m = NULL;
    if (mc_mesh_create(ndim, shape, ids, rng_int(r, 2) ? names : NULL, &m) != MC_OK)
        fail_msg("mesh: %s", mc_last_error());
    *size_out = size;
    return m;
}

/* Random spec on mesh m for the case's tensor; printed in a random notation that can
 * express it and parsed back, which must give the same spec. */
static mc_spec_t *random_spec(uint64_t *r, oracle_case_t *c, const mc_mesh_t *m, char *text)
{
    int naxes[MC_MAX_NDIM] = {0}, axes[MC_MAX_NDIM], per[MC_MAX_NDIM][MC_MAX_NDIM];
    int64_t order[MC_MAX_NDIM];
    for (int a = 0; a < m->ndim; a++)
        order[a] = a;
    shuffle(r, order, m->ndim);
    for (int i = 0; i < m->ndim; i++) {
        if (rng_int(r, 3) == 0)
            continue;
        int d = rng_int(r, c->ndim);
        per[d][naxes[d]++] = (int)order[i];
    }
    int pos = 0;
    for (int d = 0; d < c->ndim; d++)
        for (int k = 0; k < naxes[d]; k++)
            axes[pos++] = per[d][k];
    mc_spec_t *made = NULL, *parsed = NULL;
    if (mc_spec_create(c->ndim, naxes, axes, m, &made) != MC_OK)
        fail_msg("seed %llu: spec create: %s", (unsigned long long)c->seed, mc_last_error());
    int n = rng_int(r, 3);
    mc_status_t st;
    while ((st = mc_spec_format(made, m, (mc_notation_t)n, text, 256)) == MC_ERR_UNSUPPORTED)
        n = (n + 1) % 3;
    if (st != MC_OK)
        fail_msg("seed %llu: format: %s", (unsigned long long)c->seed, mc_last_error());
    if (mc_spec_parse(text, m, c->ndim, &parsed) != MC_OK)
        fail_msg("seed %llu: '%s' does not parse back: %s", (unsigned long long)c->seed, text,
                 mc_last_error());
    assert_memory_equal(made->naxes, parsed->naxes, sizeof made->naxes);
    for (int d = 0; d < c->ndim; d++)
        assert_memory_equal(made->axes[d], parsed->axes[d], (size_t)naxes[d] * sizeof(int));
    mc_spec_destroy(made);
    return parsed;
}

static void describe(oracle_case_t *c)
{
    size_t u = 0;
    u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, "seed %llu (ids %s): shape",
                          (unsigned long long)c->seed, c->ids_mode);
    for (int d = 0; d < c->ndim; d++)
        u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, "%s%lld", d ? "x" : " ",
                              (long long)c->shape[d]);
    for (int side = 0; side < 2; side++) {
        const mc_mesh_t *m = c->mesh[side];
        u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, "; %s mesh", side ? "dst" : "src");
        for (int a = 0; a < m->ndim; a++)
            u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, "%s%lld", a ? "x" : " ",
                                  (long long)m->shape[a]);
        u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, " spec %s ids", c->spec_text[side]);
        for (int64_t i = 0; i < m->size && u < sizeof c->desc - 8; i++)
            u += (size_t)snprintf(c->desc + u, sizeof c->desc - u, "%s%lld", i ? "," : " ",
                                  (long long)m->devices[i]);
    }
}

static void make_case(oracle_case_t *c, uint64_t seed)
{
    uint64_t r = seed;
    memset(c, 0, sizeof *c);
    c->seed = seed;
    /* Tensor: 1-4 dims, small and uneven sizes so that shards are short or empty. */
    c->ndim = 1 + rng_int(&r, 4);
    static const int lims[] = {3, 5, 8, 13, 24, 64};
    c->nelem = 1;
    for (int d = 0; d < c->ndim; d++) {
        c->shape[d] = 1 + rng_int(&r, lims[rng_int(&r, 6)]);
        c->nelem *= c->shape[d];
    }
    while (c->nelem > MAX_ELEMS) {
        int big = 0;
        for (int d = 1; d < c->ndim; d++)
            big = c->shape[d] > c->shape[big] ? d : big;
        c->nelem = c->nelem / c->shape[big] * (c->shape[big] / 2);
        c->shape[big] /= 2;
    }
    c->dtype = (mc_dtype_t)rng_int(&r, MC_DTYPE_COUNT);

    /* Device ids: a shuffled pool; the two meshes take disjoint, overlapping or equal parts. */
    int64_t pool[MAX_ID], src_size, dst_size;
    for (int i = 0; i < MAX_ID; i++)
        pool[i] = i;
    shuffle(&r, pool, MAX_ID);
    int mode = rng_int(&r, 4);
    c->mesh[0] = random_mesh(&r, 0, MAX_DEV, pool, &src_size);
    if (mode == 0) {
        c->ids_mode = "identical";
        mc_mesh_copy(c->mesh[0], &c->mesh[1]);
        assert_non_null(c->mesh[1]);
        dst_size = src_size;
    } else if (mode == 1) {
        c->ids_mode = "disjoint";
        c->mesh[1] = random_mesh(&r, 0, MAX_DEV, pool + MAX_DEV, &dst_size);
    } else {
        /* Overlap: the dst ids come from a window that straddles the end of the src ids,
         * reshuffled; mode 3 uses the src's own ids in a new order and shape. */
        c->ids_mode = mode == 2 ? "overlapping" : "same set";
        int64_t window[2 * MAX_DEV];
        int64_t start = mode == 2 ? rng_int(&r, (int)src_size) : 0;
        for (int i = 0; i < 2 * MAX_DEV; i++)
            window[i] = pool[start + i];
        int64_t n = mode == 2 ? 2 * MAX_DEV : src_size;
        shuffle(&r, window, (int)n);
        c->mesh[1] = random_mesh(&r, 0, n < MAX_DEV ? n : MAX_DEV, window, &dst_size);
        if (mode == 3 && dst_size != src_size) {
            /* Same set needs the same size: fall back to one axis. */
            mc_mesh_destroy(c->mesh[1]);
            int64_t shape1 = src_size;
            assert_int_equal(mc_mesh_create(1, &shape1, window, NULL, &c->mesh[1]), MC_OK);
            dst_size = src_size;
        }
    }
    (void)dst_size;
    for (int side = 0; side < 2; side++) {
        mc_spec_t *s = random_spec(&r, c, c->mesh[side], c->spec_text[side]);
        if (mc_layout_create(c->ndim, c->shape, c->dtype, c->mesh[side], s, &c->layout[side]))
            fail_msg("seed %llu: layout: %s", (unsigned long long)seed, mc_last_error());
        mc_spec_destroy(s);
    }
    describe(c);

    /* Oracle tables, straight from mesh coordinates and the torch.chunk rule. */
    for (int i = 0; i < MAX_ID; i++)
        c->src_index_of_id[i] = c->dst_index_of_id[i] = -1;
    for (int side = 0; side < 2; side++) {
        const mc_mesh_t *m = c->mesh[side];
        const mc_spec_t *sp = c->layout[side]->spec;
        for (int64_t i = 0; i < m->size; i++) {
            (side ? c->dst_index_of_id : c->src_index_of_id)[m->devices[i]] = i;
            int64_t coord[3], rest = i;
            for (int a = m->ndim - 1; a >= 0; a--) {
                coord[a] = rest % m->shape[a];
                rest /= m->shape[a];
            }
            for (int d = 0; d < c->ndim; d++) {
                int64_t k = 1, idx = 0;
                for (int j = 0; j < sp->naxes[d]; j++) {
                    k *= m->shape[sp->axes[d][j]];
                    idx = idx * m->shape[sp->axes[d][j]] + coord[sp->axes[d][j]];
                }
                int64_t chunk = (c->shape[d] + k - 1) / k;
                for (int64_t x = 0; x < c->shape[d]; x++)
                    if (x / chunk == idx)
                        c->hold[side][d][x] |= 1ULL << i;
                if (mc_layout_shard_index(c->layout[side], d, i) != idx)
                    fail_msg("%s: shard index of mesh index %lld along dim %d", c->desc,
                             (long long)i, d);
            }
        }
    }
}

static void free_case(oracle_case_t *c)
{
    for (int side = 0; side < 2; side++) {
        mc_layout_destroy(c->layout[side]);
        mc_mesh_destroy(c->mesh[side]);
    }
}

static void check_tiles(oracle_case_t *c)
{
    for (int side = 0; side < 2; side++) {
        const mc_mesh_t *m = c->mesh[side];
        for (int64_t i = 0; i < m->size; i++) {
            mc_box_t b;
            assert_int_equal(mc_layout_tile(c->layout[side], m->devices[i], &b), MC_OK);
            for (int d = 0; d < c->ndim; d++) {
                if (b.lo[d] < 0 || b.hi[d] < b.lo[d] || b.hi[d] > c->shape[d])
                    fail_msg("%s: bad tile dim %d of device %lld", c->desc, d,
                             (long long)m->devices[i]);
                for (int64_t x = 0; x < c->shape[d]; x++) {
                    int in_box = x >= b.lo[d] && x < b.hi[d];
                    int in_oracle = (c->hold[side][d][x] >> i) & 1;
                    if (in_box != in_oracle)
                        fail_msg("%s: %s device %lld tile dim %d [%lld,%lld) vs oracle at %lld",
                                 c->desc, side ? "dst" : "src", (long long)m->devices[i], d,
                                 (long long)b.lo[d], (long long)b.hi[d], (long long)x);
                }
            }
        }
    }
}

/* Converts an id list to a mask over mesh indices, checking it is strictly ascending. */
static uint64_t ids_mask(const oracle_case_t *c, const int64_t *ids, int n, const int64_t *index_of,
                         const char *what, int64_t piece)
{
    uint64_t mask = 0;
    for (int k = 0; k < n; k++) {
        if (ids[k] < 0 || ids[k] >= MAX_ID || index_of[ids[k]] < 0)
            fail_msg("%s: piece %lld %s has device %lld, not in its mesh", c->desc,
                     (long long)piece, what, (long long)ids[k]);
        if (k && ids[k] <= ids[k - 1])
            fail_msg("%s: piece %lld %s not strictly ascending", c->desc, (long long)piece, what);
        mask |= 1ULL << index_of[ids[k]];
    }
    return mask;
}

typedef struct {
    uint64_t holders, needers, self; /* holders over src indices, the rest over dst indices */
} sets_t;

static void check_pieces(oracle_case_t *c, int32_t *owner, sets_t *piece_sets)
{
    mc_pieces_t *p = NULL;
    if (mc_pieces_compute(c->layout[0], c->layout[1], &p) != MC_OK)
        fail_msg("%s: pieces: %s", c->desc, mc_last_error());
    assert_int_equal(p->ndim, c->ndim);
    assert_int_equal(p->elem_size, (int64_t)mc_dtype_size(c->dtype));
    assert_true(p->npieces <= c->nelem);
    for (int d = 0; d < c->ndim; d++)
        assert_int_equal(p->shape[d], c->shape[d]);
    int64_t stride[MC_MAX_NDIM];
    stride[c->ndim - 1] = 1;
    for (int d = c->ndim - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * c->shape[d + 1];
    for (int64_t e = 0; e < c->nelem; e++)
        owner[e] = -1;

    for (int64_t i = 0; i < p->npieces; i++) {
        const mc_piece_t *q = &p->pieces[i];
        int64_t vol = 1;
        for (int d = 0; d < c->ndim; d++) {
            if (q->box.lo[d] < 0 || q->box.hi[d] <= q->box.lo[d] || q->box.hi[d] > c->shape[d])
                fail_msg("%s: piece %lld has a bad or empty box along dim %d", c->desc,
                         (long long)i, d);
            vol *= q->box.hi[d] - q->box.lo[d];
        }
        if (q->bytes != vol * p->elem_size)
            fail_msg("%s: piece %lld bytes %lld for %lld elements", c->desc, (long long)i,
                     (long long)q->bytes, (long long)vol);
        if (i > 0) { /* row-major order of lower corners */
            int cmp = 0;
            for (int d = 0; d < c->ndim && !cmp; d++)
                cmp = (p->pieces[i - 1].box.lo[d] > q->box.lo[d]) -
                      (p->pieces[i - 1].box.lo[d] < q->box.lo[d]);
            if (cmp >= 0)
                fail_msg("%s: pieces %lld and %lld out of row-major order", c->desc,
                         (long long)i - 1, (long long)i);
        }
        sets_t s = {
            ids_mask(c, q->holders, q->nholders, c->src_index_of_id, "holders", i),
            ids_mask(c, q->needers, q->nneeders, c->dst_index_of_id, "needers", i),
            ids_mask(c, q->self, q->nself, c->dst_index_of_id, "self", i),
        };
        piece_sets[i] = s;
        /* Every element of the box: unowned so far, and the same sets as the oracle. */
        int64_t at[MC_MAX_NDIM];
        for (int d = 0; d < c->ndim; d++)
            at[d] = q->box.lo[d];
        for (int64_t k = 0; k < vol; k++) {
            int64_t e = 0;
            uint64_t h = ~0ULL, w = ~0ULL;
            for (int d = 0; d < c->ndim; d++) {
                e += at[d] * stride[d];
                h &= c->hold[0][d][at[d]];
                w &= c->hold[1][d][at[d]];
            }
            uint64_t self = 0;
            for (int64_t j = 0; j < c->mesh[1]->size; j++) {
                int64_t si = c->src_index_of_id[c->mesh[1]->devices[j]];
                if (((w >> j) & 1) && si >= 0 && ((h >> si) & 1))
                    self |= 1ULL << j;
            }
            if (owner[e] >= 0)
                fail_msg("%s: element %lld in pieces %d and %lld", c->desc, (long long)e, owner[e],
                         (long long)i);
            owner[e] = (int32_t)i;
            if (s.holders != h || s.needers != (w & ~self) || s.self != self)
                fail_msg("%s: piece %lld element %lld: holders/needers/self %llx/%llx/%llx, "
                         "oracle %llx/%llx/%llx (mesh-index masks)",
                         c->desc, (long long)i, (long long)e, (unsigned long long)s.holders,
                         (unsigned long long)s.needers, (unsigned long long)s.self,
                         (unsigned long long)h, (unsigned long long)(w & ~self),
                         (unsigned long long)self);
            for (int d = c->ndim - 1; d >= 0; d--) {
                if (++at[d] < q->box.hi[d])
                    break;
                at[d] = q->box.lo[d];
            }
        }
    }

    /* Coverage: an element is in a piece iff some dst device needs or copies it (a dst
     * layout covers the whole tensor, so that is every element). Maximality: pieces that
     * meet face to face with equal sets could have been one box. */
    for (int64_t e = 0; e < c->nelem; e++) {
        if (owner[e] < 0)
            fail_msg("%s: element %lld is needed but in no piece", c->desc, (long long)e);
        int64_t x[MC_MAX_NDIM], rest = e;
        for (int d = c->ndim - 1; d >= 0; d--) {
            x[d] = rest % c->shape[d];
            rest /= c->shape[d];
        }
        for (int d = 0; d < c->ndim; d++) {
            if (x[d] + 1 >= c->shape[d] || owner[e + stride[d]] == owner[e])
                continue;
            const mc_piece_t *a = &p->pieces[owner[e]], *b = &p->pieces[owner[e + stride[d]]];
            int mergeable = a->box.hi[d] == b->box.lo[d];
            for (int o = 0; o < c->ndim && mergeable; o++)
                if (o != d)
                    mergeable = a->box.lo[o] == b->box.lo[o] && a->box.hi[o] == b->box.hi[o];
            const sets_t *sa = &piece_sets[owner[e]], *sb = &piece_sets[owner[e + stride[d]]];
            if (mergeable && sa->holders == sb->holders && sa->needers == sb->needers &&
                sa->self == sb->self)
                fail_msg("%s: pieces %d and %d along dim %d are not maximal", c->desc, owner[e],
                         owner[e + stride[d]], d);
        }
    }
    mc_pieces_destroy(p);
}

static void test_oracle(void **state)
{
    (void)state;
    static oracle_case_t c; /* large tables: static in this single-threaded test */
    static int32_t owner[MAX_ELEMS];
    static sets_t piece_sets[MAX_ELEMS];
    uint64_t base = 0x6d657368ULL, first = 0, count = NCASES;
    const char *env = getenv("MESHCAST_ORACLE_SEED");
    if (env) {
        first = strtoull(env, NULL, 0) - base;
        count = 1;
    }
    int modes[4] = {0}, empty_tiles = 0;
    int64_t pieces = 0;
    for (uint64_t i = first; i < first + count; i++) {
        make_case(&c, base + i);
        if (env)
            print_message("%s\n", c.desc);
        check_tiles(&c);
        check_pieces(&c, owner, piece_sets);
        modes[c.ids_mode[0] == 'i' ? 0 : c.ids_mode[0] == 'd' ? 1 : c.ids_mode[0] == 'o' ? 2 : 3]++;
        for (int d = 0; d < c.ndim; d++)
            empty_tiles += mc_layout_shards(c.layout[0], d) > c.shape[d];
        for (int64_t e = 0, last = -1; e < c.nelem; e++)
            if (owner[e] > last)
                last = owner[e], pieces++;
        free_case(&c);
    }
    print_message("%llu cases (identical %d, disjoint %d, overlapping %d, same set %d), "
                  "%d dims with more shards than elements, %lld pieces\n",
                  (unsigned long long)count, modes[0], modes[1], modes[2], modes[3], empty_tiles,
                  (long long)pieces);
    if (!env)
        assert_true(modes[0] > 300 && modes[1] > 300 && modes[2] > 300 && empty_tiles > 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
