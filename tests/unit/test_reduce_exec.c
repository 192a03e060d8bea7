/* Executing reduction plans, checked element by element: random cases (random_case.h:
 * same, overlapping and disjoint meshes, uneven shards, every cut) whose source gets every
 * free mesh axis made partial at random; case i takes dtype i mod 10, op (i / 10) mod 4
 * and plan (i / 40) mod 6 — naive (send_recv), meshcast's choice, reduce-scatter flat and
 * hierarchical, each also with host pre-combining (forced) — so 480 cases cover every
 * combination; they run on one rank (the worker pool) or 2..8 ranks as threads (the chunk
 * engine), with whole-flow or tiny chunks; every destination element must equal, bit for
 * bit, the addends combined along the plan's combine trees (mc_pattern_check_reduced), and
 * the reduction bound must not exceed the plan's estimate.
 * Every third case has a partial destination (sum, max or min on a free axis; every ninth
 * from a plain source): its devices off addend 0 must hold the op's identity.
 * MC_TEST_SEED=N reruns one case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"
#include "plan/plan_internal.h"
#include "exec_harness.h"
#include "random_case.h"

#define NCASES 480
#define MAX_REPORTS 10

static int failures;
static int64_t partial_dsts, copies; /* executed cases with a partial destination */

static void report(const rc_case_t *c, const char *fmt, ...)
{
    if (failures++ >= MAX_REPORTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "seed %llu: ", (unsigned long long)c->seed);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  case: %s\n", c->desc);
    va_end(ap);
}

static const mc_dtype_t dtypes[] = {MC_DTYPE_F64, MC_DTYPE_F32, MC_DTYPE_F16, MC_DTYPE_BF16,
                                    MC_DTYPE_I64, MC_DTYPE_I32, MC_DTYPE_I16, MC_DTYPE_I8,
                                    MC_DTYPE_U8,  MC_DTYPE_BOOL};

/* The case's source with its free mesh axes partial at random (at least one; when there is
 * none, one axis stops sharding), a random op and dtype; NULL for a mesh of one device. */
static mc_layout_t *partial_source(rc_rng_t *rng, const rc_case_t *c, int64_t index,
                                   mc_layout_t **dst, char *what, size_t len)
{
    const mc_spec_t *spec = mc_layout_spec(c->src);
    const mc_mesh_t *mesh = mc_layout_mesh(c->src);
    int free_axes[MC_MAX_NDIM], nfree = 0;
    for (int a = 0; a < mc_mesh_ndim(mesh); a++) {
        int used = 0;
        for (int d = 0; d < mc_spec_tensor_ndim(spec); d++)
            for (int k = 0; k < mc_spec_dim_naxes(spec, d); k++)
                used |= mc_spec_dim_axis(spec, d, k) == a;
        if (!used && mc_mesh_axis_size(mesh, a) > 1)
            free_axes[nfree++] = a;
    }
    mc_spec_t *ps = NULL;
    if (nfree == 0) {
        /* Every axis shards a dim: drop one (of size > 1) from the spec, keeping the cut
         * (split factors and extents are dropped with it). */
        int drop = -1, naxes[MC_MAX_NDIM], axes[MC_MAX_NDIM * MC_MAX_NDIM], n = 0;
        for (int a = 0; a < mc_mesh_ndim(mesh); a++)
            if (mc_mesh_axis_size(mesh, a) > 1 && (drop < 0 || rc_range(rng, 0, 1)))
                drop = a;
        if (drop < 0)
            return NULL;
        for (int d = 0; d < mc_spec_tensor_ndim(spec); d++) {
            naxes[d] = 0;
            for (int k = 0; k < mc_spec_dim_naxes(spec, d); k++)
                if (mc_spec_dim_axis(spec, d, k) != drop) {
                    axes[n++] = mc_spec_dim_axis(spec, d, k);
                    naxes[d]++;
                }
        }
        assert_int_equal(mc_spec_create(mc_spec_tensor_ndim(spec), naxes, axes, mesh, &ps), MC_OK);
        assert_int_equal(mc_spec_set_cut(ps, mc_spec_cut(spec)), MC_OK);
        free_axes[nfree++] = drop;
    } else {
        assert_int_equal(mc_spec_copy(spec, &ps), MC_OK);
    }
    mc_dtype_t dt = dtypes[index % 10];
    mc_reduce_t op = (mc_reduce_t)(MC_REDUCE_SUM + index / 10 % 4);
    if (dt == MC_DTYPE_BOOL && op == MC_REDUCE_AVG)
        op = MC_REDUCE_SUM;
    int first = (int)rc_range(rng, 0, nfree - 1);
    for (int i = 0; i < nfree; i++)
        if (i == first || rc_range(rng, 0, 1))
            assert_int_equal(mc_spec_set_reduce(ps, free_axes[i], op), MC_OK);
    char text[256] = "";
    if (mc_spec_format(ps, mesh, MC_NOTATION_DTENSOR, text, sizeof text))
        mc_spec_format(ps, mesh, MC_NOTATION_ALPA, text, sizeof text);
    snprintf(what, len, "%s %s, src %s", mc_dtype_name(dt), mc_reduce_name(op), text);
    int64_t shape[MC_MAX_NDIM];
    for (int d = 0; d < c->ndim; d++)
        shape[d] = c->shape[d];
    mc_layout_t *src = NULL;
    assert_int_equal(mc_layout_create(c->ndim, shape, dt, mesh, ps, &src), MC_OK);
    assert_int_equal(
        mc_layout_create(c->ndim, shape, dt, mc_layout_mesh(c->dst), mc_layout_spec(c->dst), dst),
        MC_OK);
    mc_spec_destroy(ps);
    return src;
}

/* dst with one free mesh axis (of size > 1) made partial, op sum, max or min (NULL when
 * there is none): its devices off addend 0 must get the op's identity. */
static mc_layout_t *partial_destination(rc_rng_t *rng, const mc_layout_t *dst)
{
    const mc_spec_t *spec = mc_layout_spec(dst);
    const mc_mesh_t *mesh = mc_layout_mesh(dst);
    int axis = -1;
    for (int a = 0; a < mc_mesh_ndim(mesh); a++) {
        int used = 0;
        for (int d = 0; d < mc_spec_tensor_ndim(spec); d++)
            for (int k = 0; k < mc_spec_dim_naxes(spec, d); k++)
                used |= mc_spec_dim_axis(spec, d, k) == a;
        if (!used && mc_mesh_axis_size(mesh, a) > 1 && (axis < 0 || rc_range(rng, 0, 1)))
            axis = a;
    }
    if (axis < 0)
        return NULL;
    mc_spec_t *ps = NULL;
    mc_layout_t *out = NULL;
    static const mc_reduce_t ops[] = {MC_REDUCE_SUM, MC_REDUCE_MAX, MC_REDUCE_MIN};
    assert_int_equal(mc_spec_copy(spec, &ps), MC_OK);
    assert_int_equal(mc_spec_set_reduce(ps, axis, ops[rc_range(rng, 0, 2)]), MC_OK);
    int64_t shape[MC_MAX_NDIM];
    for (int d = 0; d < mc_layout_ndim(dst); d++)
        shape[d] = mc_layout_dim(dst, d);
    assert_int_equal(
        mc_layout_create(mc_layout_ndim(dst), shape, mc_layout_dtype(dst), mesh, ps, &out), MC_OK);
    mc_spec_destroy(ps);
    return out;
}

static const char *const plans[] = {"naive",
                                    "meshcast",
                                    "reduce_scatter",
                                    "hierarchical",
                                    "reduce_scatter pre-combined",
                                    "hierarchical pre-combined"};
static int64_t precombined; /* executed cases whose plan has a host combiner */

/* Whether some flow of plan combines on a host before the reducer. */
static int has_host_combiner(const mc_plan_t *plan)
{
    for (int64_t fi = 0; fi < plan->nflows; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        for (int64_t j = 0; j + 1 < f->ngather; j++)
            if (plan->edges[f->edge0 + j].to != plan->edges[f->edge0 + f->ngather - 1].to)
                return 1;
    }
    return 0;
}

/* Replaces plan's flows by the reduce-scatter strategy's (flat or hierarchical), which
 * meshcast's cost model may not pick for a small case, and re-checks the plan. */
static mc_status_t force_reduce_scatter(mc_plan_t *plan, int hierarchical, int precombine)
{
    mc_status_t s;
    plan->nflows = plan->nedges = 0;
    if ((s = mc_strategy_reduce_scatter(plan, hierarchical, precombine)) ||
        (s = mc_plan_set_chunks(plan)) || (s = mc_plan_count(plan)))
        return s;
    return mc_plan_validate(plan);
}

static void run_case(uint64_t seed, int64_t index, int64_t *nruns, int64_t *skipped)
{
    rc_case_t c;
    char err[1024], what[512];
    if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err)) {
        report(&c, "generator: %s", err);
        return;
    }
    rc_rng_t rng = {seed ^ 0xadd};
    mc_layout_t *dst = NULL, *src = partial_source(&rng, &c, index, &dst, what, sizeof what);
    int which = (int)(index / 40 % 6);
    if (!src) {
        (*skipped)++;
        rc_case_free(&c);
        return;
    }
    /* every third case a partial destination, every ninth from a plain (copy) source */
    mc_layout_t *pd = index % 3 == 2 ? partial_destination(&rng, dst) : NULL;
    int copy = pd && index % 9 == 8;
    if (pd) {
        mc_layout_destroy(dst);
        dst = pd;
    }
    if (copy) {
        int64_t shape[MC_MAX_NDIM];
        for (int d = 0; d < c.ndim; d++)
            shape[d] = c.shape[d];
        mc_layout_destroy(src);
        assert_int_equal(mc_layout_create(c.ndim, shape, mc_layout_dtype(dst),
                                          mc_layout_mesh(c.src), mc_layout_spec(c.src), &src),
                         MC_OK);
        which = 1;
    }
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = which ? MC_STRATEGY_MESHCAST : MC_STRATEGY_SEND_RECV};
    mc_plan_t *plan = NULL;
    size_t at = strlen(what);
    char text[256] = "";
    if (pd && mc_spec_format(mc_layout_spec(dst), mc_layout_mesh(dst), MC_NOTATION_DTENSOR, text,
                             sizeof text))
        mc_spec_format(mc_layout_spec(dst), mc_layout_mesh(dst), MC_NOTATION_ALPA, text,
                       sizeof text);
    snprintf(what + at, sizeof what - at, ", plan %s%s%s%s", plans[which], copy ? ", copy" : "",
             pd ? ", partial dst " : "", text);
    if (mc_plan_create(src, dst, c.topo, &params, &plan) ||
        (which >= 2 && force_reduce_scatter(plan, which % 2 == 1, which >= 4))) {
        report(&c, "%s: planning: %s", what, mc_last_error());
    } else {
        double est = 0;
        assert_int_equal(mc_plan_simulate(plan, &est), MC_OK);
        if (plan->stats.lower_bound_s > est * (1 + 1e-9))
            report(&c, "%s: bound %g s above the estimate %g s", what, plan->stats.lower_bound_s,
                   est);
        int nranks = (int)(seed % 3 == 0 ? 1 : rc_range(&rng, 1, 8));
        int64_t chunk = rc_range(&rng, 0, 2) == 0 ? rc_range(&rng, 1, 64) : 0;
        eh_tiles_t st, dt;
        eh_tiles_make(&st, src, 1, seed);
        eh_tiles_make(&dt, dst, 0, seed);
        mc_status_t s = eh_execute(plan, nranks, st.bufs, dt.bufs, chunk, 20, err, sizeof err);
        (*nruns)++;
        precombined += has_host_combiner(plan);
        partial_dsts += pd != NULL;
        copies += copy;
        if (s) {
            report(&c, "%s, %d ranks, chunk %lld: status %d: %s", what, nranks, (long long)chunk, s,
                   err);
        } else {
            const mc_mesh_t *m = mc_layout_mesh(dst);
            int64_t wrong = 0;
            for (int64_t i = 0; i < dt.n; i++) {
                int64_t w = 0;
                int64_t dev = mc_mesh_device(m, i);
                assert_int_equal(
                    copy ? mc_pattern_check(dst, dev, seed, dt.bufs[i].ptr, &w)
                         : mc_pattern_check_reduced(plan, dev, seed, dt.bufs[i].ptr, &w, NULL),
                    MC_OK);
                wrong += w;
            }
            if (wrong)
                report(&c, "%s, %d ranks, chunk %lld: %lld wrong elements", what, nranks,
                       (long long)chunk, (long long)wrong);
        }
        eh_tiles_free(&st);
        eh_tiles_free(&dt);
    }
    mc_plan_destroy(plan);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    rc_case_free(&c);
}

static void test_random_reductions(void **state)
{
    (void)state;
    int64_t nruns = 0, skipped = 0, ncases = NCASES;
    uint64_t first = 1;
    const char *one = getenv("MC_TEST_SEED");
    if (one) {
        first = strtoull(one, NULL, 10);
        ncases = 1;
    }
    failures = 0;
    for (int64_t i = 0; i < ncases; i++)
        run_case(first + (uint64_t)i, (int64_t)(first - 1) + i, &nruns, &skipped);
    if (failures)
        fail_msg("%d failures over %lld cases (first %d printed; rerun one with MC_TEST_SEED=N)",
                 failures, (long long)ncases, MAX_REPORTS);
    printf("%lld cases: %lld reductions executed and verified bit for bit (%lld into a partial "
           "destination, %lld of them copies; %lld with host pre-combining), %lld without a "
           "free mesh axis\n",
           (long long)ncases, (long long)nruns, (long long)partial_dsts, (long long)copies,
           (long long)precombined, (long long)skipped);
    assert_true(ncases == 1 || nruns > ncases / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_reductions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
