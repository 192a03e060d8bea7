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
 * MC_TEST_SEED=N reruns one case. The random cases rarely have several addends of a stripe
 * on one host, so the pre-combined kinds get hosts of 4 devices, and a second set of 160
 * cases (test_random_precombined) is made for pre-combining: 4..16 addends per element. */
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
static mc_status_t force_reduce_scatter(mc_plan_t *plan, unsigned flags)
{
    mc_status_t s;
    plan->nflows = plan->nedges = 0;
    if ((s = mc_strategy_reduce_scatter(plan, flags)) || (s = mc_plan_set_chunks(plan)) ||
        (s = mc_plan_count(plan)))
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
    if (which >= 4 && mc_topology_devices_per_host(c.topo) < 4) {
        /* pre-combining needs several addends per host: the same devices, 4 per host */
        char text[256];
        int64_t hosts = (mc_topology_devices(c.topo) + 3) / 4;
        snprintf(text, sizeof text,
                 "name dense\nhosts %lld\ndevices_per_host 4\nlink copy bandwidth=10GB/s "
                 "latency=1us\nlink intra bandwidth=20GB/s latency=5us\nnic count=1 "
                 "in=100Gbit/s out=100Gbit/s latency=10us\n",
                 (long long)hosts);
        mc_topology_destroy(c.topo);
        c.topo = NULL;
        assert_int_equal(mc_topology_parse(text, "dense.topo", &c.topo), MC_OK);
        size_t end = strlen(what);
        snprintf(what + end, sizeof what - end, ", %lld hosts x 4 devices", (long long)hosts);
    }
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
        (which >= 2 && force_reduce_scatter(plan, (which % 2 ? MC_RS_HIERARCHICAL : 0) |
                                                      (which >= 4 ? MC_RS_PRECOMBINE : 0)))) {
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

/* Cases made for host pre-combining: 4..16 addends (a [Partial(op)] or [Partial(op),
 * Shard(0)|Replicate()] source over up to 32 devices, ids shuffled over hosts of 2..8
 * devices), into [Replicate()], [Shard(0)] or [Shard(1)] on the same devices or others;
 * every dtype and op, plans forced pre-combined (flat, hierarchical, hierarchical with one
 * stripe per host) or meshcast's choice, 1..8 ranks, tiny or default chunks. Each
 * destination element bit-exact against the plan's combine trees; avg plans have none; the
 * bound not above the estimate. */
static void test_random_precombined(void **state)
{
    (void)state;
    int64_t nruns = 0, with_tree = 0, ncases = 160;
    failures = 0;
    for (int64_t i = 0; i < ncases; i++) {
        uint64_t seed = 9000 + (uint64_t)i;
        rc_rng_t rng = {seed * 0x9e3779b97f4a7c15ULL + 1};
        rc_case_t c = {.seed = seed};
        mc_dtype_t dt = dtypes[i % 10];
        mc_reduce_t op = (mc_reduce_t)(MC_REDUCE_SUM + i / 10 % 4);
        if (dt == MC_DTYPE_BOOL && op == MC_REDUCE_AVG)
            op = MC_REDUCE_SUM;
        int64_t k = rc_range(&rng, 4, 16), inner = rc_range(&rng, 0, 1) ? rc_range(&rng, 2, 2) : 1;
        int64_t nsrc = k * inner, ndst = rc_range(&rng, 2, 12), dph = rc_range(&rng, 2, 8);
        int same = rc_range(&rng, 0, 1) && ndst <= nsrc;
        int64_t total = same ? nsrc : nsrc + ndst, hosts = (total + dph - 1) / dph;
        int64_t ids[64], sshape[2] = {k, inner}, dshape[1] = {ndst};
        for (int64_t d = 0; d < hosts * dph; d++)
            ids[d] = d;
        rc_shuffle(&rng, ids, hosts * dph);
        char topo[256], sspec[96], what[256];
        static const char *const inners[] = {"Shard(0)", "Replicate()"};
        static const char *const dsts[] = {"[Replicate()]", "[Shard(0)]", "[Shard(1)]"};
        const char *dspec = dsts[rc_range(&rng, 0, 2)];
        if (inner > 1)
            snprintf(sspec, sizeof sspec, "[Partial('%s'), %s]", mc_reduce_name(op),
                     inners[rc_range(&rng, 0, 1)]);
        else
            snprintf(sspec, sizeof sspec, "[Partial('%s')]", mc_reduce_name(op));
        snprintf(topo, sizeof topo,
                 "name pre\nhosts %lld\ndevices_per_host %lld\nlink copy bandwidth=10GB/s "
                 "latency=1us\nlink intra bandwidth=%lldGB/s latency=5us\nnic count=1 "
                 "in=%lldGbit/s out=%lldGbit/s latency=20us\n",
                 (long long)hosts, (long long)dph, (long long)rc_range(&rng, 2, 40),
                 (long long)rc_range(&rng, 10, 200), (long long)rc_range(&rng, 10, 200));
        int64_t shape[2] = {rc_range(&rng, 1, 40), rc_range(&rng, 1, 9)};
        /* pre-combined flat, hierarchical, hierarchical with a stripe per host, meshcast's */
        int which = (int)(i % 4);
        static const unsigned kinds[] = {MC_RS_PRECOMBINE, MC_RS_PRECOMBINE | MC_RS_HIERARCHICAL,
                                         MC_RS_PRECOMBINE | MC_RS_HIERARCHICAL | MC_RS_PER_HOST};
        static const char *const names[] = {"pre-combined", "hierarchical pre-combined",
                                            "per-host hierarchical pre-combined", "meshcast"};
        snprintf(what, sizeof what, "%s %s %s -> %s on %lld, %lld hosts x %lld, %lldx%lld, %s",
                 mc_dtype_name(dt), mc_reduce_name(op), sspec, dspec, (long long)ndst,
                 (long long)hosts, (long long)dph, (long long)shape[0], (long long)shape[1],
                 names[which]);
        snprintf(c.desc, sizeof c.desc, "%s", what);
        mc_mesh_t *sm = NULL, *dm = NULL;
        mc_spec_t *ss = NULL, *ds = NULL;
        mc_layout_t *src = NULL, *dst = NULL;
        mc_plan_t *plan = NULL;
        assert_int_equal(mc_topology_parse(topo, "pre.topo", &c.topo), MC_OK);
        assert_int_equal(mc_mesh_create(inner > 1 ? 2 : 1, sshape, ids, NULL, &sm), MC_OK);
        assert_int_equal(mc_mesh_create(1, dshape, same ? ids : ids + nsrc, NULL, &dm), MC_OK);
        assert_int_equal(mc_spec_parse(sspec, sm, 2, &ss), MC_OK);
        assert_int_equal(mc_spec_parse(dspec, dm, 2, &ds), MC_OK);
        assert_int_equal(mc_layout_create(2, shape, dt, sm, ss, &src), MC_OK);
        assert_int_equal(mc_layout_create(2, shape, dt, dm, ds, &dst), MC_OK);
        mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                                   .strategy = MC_STRATEGY_MESHCAST};
        if (mc_plan_create(src, dst, c.topo, &params, &plan) ||
            (which < 3 && force_reduce_scatter(plan, kinds[which]))) {
            report(&c, "planning: %s", mc_last_error());
        } else {
            int tree = has_host_combiner(plan);
            double est = 0;
            assert_int_equal(mc_plan_simulate(plan, &est), MC_OK);
            if (plan->stats.lower_bound_s > est * (1 + 1e-9))
                report(&c, "bound %g s above the estimate %g s", plan->stats.lower_bound_s, est);
            with_tree += tree;
            if (tree && op == MC_REDUCE_AVG)
                report(&c, "avg pre-combined");
            int nranks = (int)rc_range(&rng, 1, 8);
            int64_t chunk = rc_range(&rng, 0, 1) ? rc_range(&rng, 1, 64) : 0;
            eh_tiles_t st, dtl;
            char err[1024];
            eh_tiles_make(&st, src, 1, seed);
            eh_tiles_make(&dtl, dst, 0, seed);
            mc_status_t s = eh_execute(plan, nranks, st.bufs, dtl.bufs, chunk, 20, err, sizeof err);
            nruns++;
            int64_t wrong = 0;
            for (int64_t d = 0; !s && d < dtl.n; d++) {
                int64_t w = 0;
                assert_int_equal(mc_pattern_check_reduced(plan, mc_mesh_device(dm, d), seed,
                                                          dtl.bufs[d].ptr, &w, NULL),
                                 MC_OK);
                wrong += w;
            }
            if (s || wrong)
                report(&c, "%d ranks, chunk %lld: status %d (%s), %lld wrong", nranks,
                       (long long)chunk, s, s ? err : "", (long long)wrong);
            eh_tiles_free(&st);
            eh_tiles_free(&dtl);
        }
        mc_plan_destroy(plan);
        mc_layout_destroy(src);
        mc_layout_destroy(dst);
        mc_spec_destroy(ss);
        mc_spec_destroy(ds);
        mc_mesh_destroy(sm);
        mc_mesh_destroy(dm);
        mc_topology_destroy(c.topo);
    }
    if (failures)
        fail_msg("%d failures over %lld cases (first %d printed)", failures, (long long)ncases,
                 MAX_REPORTS);
    printf("%lld cases made for pre-combining: %lld executed and verified bit for bit, %lld of "
           "them with host combiners\n",
           (long long)ncases, (long long)nruns, (long long)with_tree);
    assert_true(with_tree > ncases / 3); /* avg (a quarter) never pre-combines */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_reductions),
        cmocka_unit_test(test_random_precombined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
