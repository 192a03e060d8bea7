/* Equal stripes (lib/plan/stripes_equal.c):
 * - hand-worked: 12 x 4 f32 rows cut at 6 by the source (2 devices) and at 4 and 8 by the
 *   destination (3 devices) make pieces of 4, 2, 2 and 4 rows (64, 32, 32, 64 bytes);
 *   send_recv's plan has a flow per piece. The size of share 0.10 is 32 bytes (the smallest
 *   flows carry 33% of the bytes), of share 0.5 64 bytes. Cut at 32 bytes the 4-row pieces
 *   become rows [0,2), [2,4) and [8,10), [10,12), the others stay, each stripe with its
 *   flow's edge; at 16 bytes every row is a stripe (12); at 64 nothing changes and nothing is
 *   built, nor with at most 5 edges;
 * - the 16-byte cut of the hand case, and a meshcast plan with trees over hosts (S0R -> RR
 *   from 2 x 8 devices to 3 x 8 more) cut at a quarter of its size, still deliver every
 *   destination byte (thread ranks, element by element);
 * - g0106 of seed 19 of the scale benchmark, smaller (S0RS1 -> RS1S0 on the same 9 x 8
 *   devices, 72 x 64 x 1152 f32, dgx-h100 figures, 4 KiB chunks): 1152 columns cut for 8
 *   source devices and 9 destination hosts make pieces of two sizes, and direct sends take
 *   1.118x the bound; meshcast keeps equal stripes (more flows than pieces), within 1.05x,
 *   and its plan delivers every byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "exec_harness.h"
#include "plan/plan_internal.h"

static const char *const topo_text =
    "hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=2us\n"
    "link intra bandwidth=450GB/s latency=3us\nnic count=8 in=400Gbit/s out=400Gbit/s "
    "latency=10us\n";

typedef struct {
    mc_mesh_t *sm, *dm;
    mc_spec_t *ss, *ds;
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
} case_t;

static case_t make_case(const char *shape_text, const char *src_mesh, const char *src_devices,
                        const char *src_spec, const char *dst_mesh, const char *dst_devices,
                        const char *dst_spec)
{
    case_t c = {0};
    int64_t shape[3];
    int ndim = sscanf(shape_text, "%lld,%lld,%lld", (long long *)&shape[0], (long long *)&shape[1],
                      (long long *)&shape[2]);
    assert_int_equal(mc_mesh_parse(src_mesh, src_devices, 0, &c.sm), MC_OK);
    assert_int_equal(mc_mesh_parse(dst_mesh, dst_devices, 0, &c.dm), MC_OK);
    assert_int_equal(mc_spec_parse(src_spec, c.sm, ndim, &c.ss), MC_OK);
    assert_int_equal(mc_spec_parse(dst_spec, c.dm, ndim, &c.ds), MC_OK);
    assert_int_equal(mc_layout_create(ndim, shape, MC_DTYPE_F32, c.sm, c.ss, &c.src), MC_OK);
    assert_int_equal(mc_layout_create(ndim, shape, MC_DTYPE_F32, c.dm, c.ds, &c.dst), MC_OK);
    assert_int_equal(mc_topology_parse(topo_text, "equal.topo", &c.topo), MC_OK);
    return c;
}

static void free_case(case_t *c)
{
    mc_topology_destroy(c->topo);
    mc_layout_destroy(c->src);
    mc_layout_destroy(c->dst);
    mc_spec_destroy(c->ss);
    mc_spec_destroy(c->ds);
    mc_mesh_destroy(c->sm);
    mc_mesh_destroy(c->dm);
}

static mc_plan_t *make_plan(const case_t *c, mc_strategy_t strategy, int64_t chunk)
{
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY, .strategy = strategy};
    if (chunk > 0) {
        params.field_mask |= MC_PLAN_PARAM_CHUNK_BYTES;
        params.chunk_bytes = chunk;
    }
    mc_plan_t *plan = NULL;
    if (mc_plan_create(c->src, c->dst, c->topo, &params, &plan))
        fail_msg("plan: %s", mc_last_error());
    return plan;
}

/* plan's flows cut at size into a copy of plan (the caller frees its flows and edges). */
static mc_plan_t cut(const mc_plan_t *plan, double size, int64_t max_edges, int *built)
{
    mc_plan_t alt = *plan;
    alt.flows = NULL;
    alt.edges = NULL;
    alt.nflows = alt.flows_cap = alt.nedges = alt.edges_cap = 0;
    assert_int_equal(mc_plan_stripes_equal(plan, size, max_edges, &alt, built), MC_OK);
    return alt;
}

/* plan's flows and edges replaced by alt's, chunked again (alt gets plan's to free). */
static void adopt(mc_plan_t *plan, mc_plan_t *alt)
{
    mc_flow_t *f = plan->flows;
    mc_edge_t *e = plan->edges;
    plan->flows = alt->flows;
    plan->edges = alt->edges;
    plan->nflows = alt->nflows;
    plan->nedges = alt->nedges;
    plan->flows_cap = alt->flows_cap;
    plan->edges_cap = alt->edges_cap;
    alt->flows = f;
    alt->edges = e;
    assert_int_equal(mc_plan_set_chunks(plan), MC_OK);
}

static void run_exact(const mc_plan_t *plan, const case_t *c, int nranks, const char *what)
{
    char err[1024];
    int64_t wrong = eh_run_pattern(plan, c->src, c->dst, nranks, 11, err, sizeof err);
    if (wrong < 0)
        fail_msg("%s: %s", what, err);
    if (wrong)
        fail_msg("%s: %lld wrong elements", what, (long long)wrong);
}

static void test_hand(void **state)
{
    (void)state;
    case_t c = make_case("12,4", "1x2", "0-1", "S1R", "1x3", "2-4", "S1R");
    mc_plan_t *plan = make_plan(&c, MC_STRATEGY_SEND_RECV, 0);
    assert_int_equal(plan->nflows, 4);
    assert_true(mc_stripes_equal_size(plan, 0.10) == 32);
    assert_true(mc_stripes_equal_size(plan, 0.5) == 64);
    int built = 0;
    mc_plan_t alt = cut(plan, 32, 100, &built);
    assert_int_equal(built, 1);
    assert_int_equal(alt.nflows, 6);
    assert_int_equal(alt.nedges, 6);
    /* rows of each stripe, and its edge: the flow's of its piece */
    const int64_t lo[] = {0, 2, 4, 6, 8, 10}, hi[] = {2, 4, 6, 8, 10, 12};
    char seen[6] = {0};
    for (int64_t i = 0; i < alt.nflows; i++) {
        const mc_flow_t *f = &alt.flows[i];
        int r = 0;
        while (r < 6 && lo[r] != f->box.lo[0])
            r++;
        assert_true(r < 6 && !seen[r]);
        seen[r] = 1;
        assert_int_equal(f->box.hi[0], hi[r]);
        assert_int_equal(f->box.lo[1], 0);
        assert_int_equal(f->box.hi[1], 4);
        assert_int_equal(f->bytes, (hi[r] - lo[r]) * 4 * 4);
        assert_int_equal(f->nedges, 1);
        const mc_flow_t *g = NULL; /* the send_recv flow of the same piece */
        for (int64_t j = 0; j < plan->nflows && !g; j++)
            if (plan->flows[j].piece == f->piece)
                g = &plan->flows[j];
        assert_non_null(g);
        assert_true(g->box.lo[0] <= f->box.lo[0] && f->box.hi[0] <= g->box.hi[0]);
        assert_int_equal(alt.edges[f->edge0].from, plan->edges[g->edge0].from);
        assert_int_equal(alt.edges[f->edge0].to, plan->edges[g->edge0].to);
    }
    free(alt.flows);
    free(alt.edges);
    /* nothing changes at 64 bytes; 6 edges are too many for 5 */
    alt = cut(plan, 64, 100, &built);
    assert_int_equal(built, 0);
    assert_int_equal(alt.nflows, 0);
    free(alt.flows);
    free(alt.edges);
    alt = cut(plan, 32, 5, &built);
    assert_int_equal(built, 0);
    free(alt.flows);
    free(alt.edges);
    /* a row each, executed */
    alt = cut(plan, 16, 100, &built);
    assert_int_equal(built, 1);
    assert_int_equal(alt.nflows, 12);
    adopt(plan, &alt);
    free(alt.flows);
    free(alt.edges);
    run_exact(plan, &c, 2, "hand case, a row per stripe");
    mc_plan_destroy(plan);
    free_case(&c);
}

static void test_trees(void **state)
{
    (void)state;
    case_t c = make_case("96,64", "2x8", "0-15", "S0R", "3x8", "16-39", "RR");
    mc_plan_t *plan = make_plan(&c, MC_STRATEGY_MESHCAST, 0);
    int64_t edges = plan->nedges;
    int built = 0;
    mc_plan_t alt = cut(plan, mc_stripes_equal_size(plan, 0.10) / 4, 1 << 16, &built);
    assert_int_equal(built, 1);
    assert_true(alt.nedges > edges);
    adopt(plan, &alt);
    free(alt.flows);
    free(alt.edges);
    run_exact(plan, &c, 4, "trees over hosts in stripes");
    mc_plan_destroy(plan);
    free_case(&c);
}

static void test_g0106(void **state)
{
    (void)state;
    case_t c = make_case("72,64,1152", "9x8", "0-71", "S0RS1", "9x8", "0-71", "RS1S0");
    mc_plan_t *direct = make_plan(&c, MC_STRATEGY_SEND_RECV, 4096);
    mc_plan_t *plan = make_plan(&c, MC_STRATEGY_MESHCAST, 4096);
    mc_plan_stats_t d, m;
    assert_int_equal(mc_plan_query(direct, &d), MC_OK);
    assert_int_equal(mc_plan_query(plan, &m), MC_OK);
    if (d.estimate_s < 1.10 * d.lower_bound_s)
        fail_msg("direct sends %.3f x the bound: not the case it was",
                 d.estimate_s / d.lower_bound_s);
    if (plan->nflows <= plan->pieces->npieces || m.estimate_s > 1.05 * m.lower_bound_s)
        fail_msg("meshcast %.3f x the bound with %lld flows for %lld pieces: no equal stripes",
                 m.estimate_s / m.lower_bound_s, (long long)plan->nflows,
                 (long long)plan->pieces->npieces);
    run_exact(plan, &c, 4, "g0106, smaller");
    mc_plan_destroy(direct);
    mc_plan_destroy(plan);
    free_case(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_trees),
        cmocka_unit_test(test_g0106),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
