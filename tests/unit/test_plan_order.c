/* Matching orders of a plan's flows (lib/plan/order_matchings.c) and rounds by bytes
 * (lib/plan/order_bytes.c):
 * - hand-worked: 3 hosts, flows 0->1 x2, 1->2 x2, 2->0 x2, 0->2, 1->0, 2->1 and one flow
 *   inside host 0: every host sends and receives 3 NIC flows, and maximum matchings need
 *   exactly 3 rounds (two rotations one way, one the other);
 * - random host multigraphs (fixed seeds): the order is a permutation of the flows, each
 *   with its edges, and the rounds r satisfy D <= r <= 2D - 1 (D the most NIC flows of one
 *   host, sent or received: every round is a matching, and a maximal one);
 * - rounds by bytes, hand-worked: 3 hosts, one flow of 300 bytes 0->1, three of 100 1->2,
 *   200 and 100 2->0, and one inside host 0: the order is the flow inside, the first flow of
 *   each pair, then 1->2's second (a third of its pair's bytes before it), then 1->2's third
 *   and 2->0's second (two thirds), senders ascending;
 * - a meshcast plan reordered all three ways still delivers every destination byte (4
 *   thread ranks, element by element);
 * - mc_plan_permute_flows (in place, along the permutation's cycles) on random permutations
 *   of flows with 0-4 edges each (fixed seeds): flow i is the old flow index[i] with its own
 *   edges, and the edges are contiguous in the new order. */
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
    "hosts 6\ndevices_per_host 2\nlink copy bandwidth=1600GB/s latency=2us\n"
    "link intra bandwidth=450GB/s latency=3us\nnic count=1 in=400Gbit/s out=400Gbit/s "
    "latency=10us\n";

/* A plan of one-edge flows from device from[i] to to[i], piece i each (only the fields the
 * order reads). */
static mc_plan_t *flows_plan(mc_topology_t *topo, int n, const int64_t *from, const int64_t *to)
{
    mc_plan_t *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    plan->topo = topo;
    plan->flows = calloc((size_t)n + 1, sizeof *plan->flows);
    plan->edges = calloc((size_t)n + 1, sizeof *plan->edges);
    assert_true(plan->flows && plan->edges);
    for (int i = 0; i < n; i++) {
        plan->flows[i] = (mc_flow_t){.piece = i, .bytes = 100 + i, .edge0 = i, .nedges = 1};
        plan->edges[i] = (mc_edge_t){from[i], to[i]};
    }
    plan->nflows = plan->nedges = n;
    return plan;
}

static void flows_plan_free(mc_plan_t *plan)
{
    free(plan->flows);
    free(plan->edges);
    free(plan);
}

/* Every piece once, with its own edge. */
static void check_permutation(const mc_plan_t *plan, const int64_t *from, const int64_t *to)
{
    char *seen = calloc((size_t)plan->nflows + 1, 1);
    assert_non_null(seen);
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *f = &plan->flows[i];
        assert_true(f->piece >= 0 && f->piece < plan->nflows && !seen[f->piece]);
        seen[f->piece] = 1;
        assert_int_equal(f->nedges, 1);
        assert_int_equal(f->bytes, 100 + f->piece);
        assert_int_equal(plan->edges[f->edge0].from, from[f->piece]);
        assert_int_equal(plan->edges[f->edge0].to, to[f->piece]);
    }
    free(seen);
}

static void test_hand(void **state)
{
    (void)state;
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_parse(topo_text, "order.topo", &topo), MC_OK);
    /* device 2h is host h's first device; the last flow stays inside host 0 */
    const int64_t from[] = {0, 0, 2, 2, 4, 4, 0, 2, 4, 0};
    const int64_t to[] = {2, 2, 4, 4, 0, 0, 4, 0, 2, 1};
    int n = (int)(sizeof from / sizeof from[0]);
    mc_plan_t *plan = flows_plan(topo, n, from, to);
    int64_t rounds = 0;
    assert_int_equal(mc_plan_order_matchings(plan, 1, &rounds), MC_OK);
    assert_int_equal(rounds, 3);
    check_permutation(plan, from, to);
    assert_int_equal(mc_plan_order_matchings(plan, 0, &rounds), MC_OK);
    assert_true(rounds >= 3 && rounds <= 5);
    check_permutation(plan, from, to);
    flows_plan_free(plan);
    mc_topology_destroy(topo);
}

static void test_bytes_hand(void **state)
{
    (void)state;
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_parse(topo_text, "order.topo", &topo), MC_OK);
    const int64_t from[] = {0, 2, 2, 2, 4, 4, 0}, to[] = {2, 4, 4, 4, 0, 0, 1};
    const int64_t bytes[] = {300, 100, 100, 100, 200, 100, 50}, want[] = {6, 0, 1, 4, 2, 3, 5};
    mc_plan_t *plan = flows_plan(topo, 7, from, to);
    for (int i = 0; i < 7; i++)
        plan->flows[i].bytes = bytes[i];
    assert_int_equal(mc_plan_order_bytes(plan), MC_OK);
    for (int i = 0; i < 7; i++) {
        const mc_flow_t *f = &plan->flows[i];
        assert_int_equal(f->piece, want[i]);
        assert_int_equal(f->bytes, bytes[want[i]]);
        assert_int_equal(plan->edges[f->edge0].from, from[want[i]]);
        assert_int_equal(plan->edges[f->edge0].to, to[want[i]]);
    }
    flows_plan_free(plan);
    mc_topology_destroy(topo);
}

static void test_random(void **state)
{
    (void)state;
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_parse(topo_text, "order.topo", &topo), MC_OK);
    uint64_t x = 17;
    for (int trial = 0; trial < 200; trial++) {
        int64_t from[64], to[64], out[6] = {0}, in[6] = {0}, most = 0;
        int n = 1 + (int)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 59) * 2;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            from[i] = (int64_t)((x >> 33) % 12);
            to[i] = (int64_t)((x >> 45) % 12);
            int64_t a = from[i] / 2, b = to[i] / 2;
            if (a != b) {
                most = ++out[a] > most ? out[a] : most;
                most = ++in[b] > most ? in[b] : most;
            }
        }
        for (int maximum = 0; maximum < 2; maximum++) {
            mc_plan_t *plan = flows_plan(topo, n, from, to);
            int64_t rounds = -1;
            assert_int_equal(mc_plan_order_matchings(plan, maximum, &rounds), MC_OK);
            if (rounds < most || rounds > (most ? 2 * most - 1 : 0))
                fail_msg("trial %d (maximum %d): %lld rounds for D = %lld", trial, maximum,
                         (long long)rounds, (long long)most);
            check_permutation(plan, from, to);
            flows_plan_free(plan);
        }
        mc_plan_t *plan = flows_plan(topo, n, from, to);
        assert_int_equal(mc_plan_order_bytes(plan), MC_OK);
        check_permutation(plan, from, to);
        flows_plan_free(plan);
    }
    mc_topology_destroy(topo);
}

static void test_execute(void **state)
{
    (void)state;
    mc_mesh_t *sm = NULL, *dm = NULL;
    mc_spec_t *ss = NULL, *ds = NULL;
    mc_layout_t *src = NULL, *dst = NULL;
    mc_topology_t *topo = NULL;
    int64_t shape[3] = {48, 32, 16};
    char err[1024];
    assert_int_equal(mc_mesh_parse("3x2", "0-5", 0, &sm), MC_OK);
    assert_int_equal(mc_mesh_parse("3x2", "6-11", 0, &dm), MC_OK);
    assert_int_equal(mc_spec_parse("S1RS0", sm, 3, &ss), MC_OK);
    assert_int_equal(mc_spec_parse("S0S1R", dm, 3, &ds), MC_OK);
    assert_int_equal(mc_layout_create(3, shape, MC_DTYPE_F32, sm, ss, &src), MC_OK);
    assert_int_equal(mc_layout_create(3, shape, MC_DTYPE_F32, dm, ds, &dst), MC_OK);
    assert_int_equal(mc_topology_parse(topo_text, "order.topo", &topo), MC_OK);
    for (int maximum = 0; maximum < 3; maximum++) { /* 2: rounds by bytes */
        mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                                   .strategy = MC_STRATEGY_MESHCAST};
        mc_plan_t *plan = NULL;
        assert_int_equal(mc_plan_create(src, dst, topo, &params, &plan), MC_OK);
        assert_int_equal(maximum < 2 ? mc_plan_order_matchings(plan, maximum, NULL)
                                     : mc_plan_order_bytes(plan),
                         MC_OK);
        int64_t wrong = eh_run_pattern(plan, src, dst, 4, 5, err, sizeof err);
        if (wrong < 0)
            fail_msg("maximum %d: %s", maximum, err);
        assert_int_equal(wrong, 0);
        mc_plan_destroy(plan);
    }
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    mc_spec_destroy(ss);
    mc_spec_destroy(ds);
    mc_mesh_destroy(sm);
    mc_mesh_destroy(dm);
}

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void test_permute_random(void **state)
{
    (void)state;
    uint64_t x = 5;
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)(next(&x) % 40), nedges = 0;
        mc_plan_t plan = {0};
        plan.flows = calloc((size_t)n + 1, sizeof *plan.flows);
        plan.edges = calloc((size_t)n * 4 + 1, sizeof *plan.edges);
        mc_flow_t *old = calloc((size_t)n + 1, sizeof *old);
        mc_edge_t *old_edges = calloc((size_t)n * 4 + 1, sizeof *old_edges);
        int64_t *index = calloc((size_t)n + 1, sizeof *index);
        assert_true(plan.flows && plan.edges && old && old_edges && index);
        for (int i = 0; i < n; i++) {
            int k = (int)(next(&x) % 5);
            plan.flows[i] =
                (mc_flow_t){.piece = i, .bytes = 7 * i + 1, .edge0 = nedges, .nedges = k};
            for (int j = 0; j < k; j++, nedges++)
                plan.edges[nedges] = (mc_edge_t){i, 100 * i + j};
            index[i] = i;
        }
        for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(next(&x) % (uint64_t)(i + 1));
            int64_t t = index[i];
            index[i] = index[j];
            index[j] = t;
        }
        plan.nflows = plan.flows_cap = n;
        plan.nedges = nedges;
        plan.edges_cap = (int64_t)n * 4 + 1;
        memcpy(old, plan.flows, (size_t)n * sizeof *old);
        memcpy(old_edges, plan.edges, (size_t)nedges * sizeof *old_edges);
        assert_int_equal(mc_plan_permute_flows(&plan, index), MC_OK);
        int64_t e = 0;
        for (int i = 0; i < n; i++) {
            const mc_flow_t *f = &plan.flows[i], *o = &old[index[i]];
            assert_int_equal(f->piece, o->piece);
            assert_int_equal(f->bytes, o->bytes);
            assert_int_equal(f->nedges, o->nedges);
            assert_int_equal(f->edge0, e);
            for (int64_t j = 0; j < f->nedges; j++) {
                assert_int_equal(plan.edges[e + j].from, old_edges[o->edge0 + j].from);
                assert_int_equal(plan.edges[e + j].to, old_edges[o->edge0 + j].to);
            }
            e += f->nedges;
        }
        assert_int_equal(e, nedges);
        free(plan.flows);
        free(plan.edges);
        free(old);
        free(old_edges);
        free(index);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),           cmocka_unit_test(test_bytes_hand),
        cmocka_unit_test(test_random),         cmocka_unit_test(test_execute),
        cmocka_unit_test(test_permute_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
