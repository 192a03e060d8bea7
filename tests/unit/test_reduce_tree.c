/* Host-local pre-combining by hand: 2 hosts x 2 devices (0, 1 | 2, 3), each holding one
 * addend of a [Partial()] f16 tensor that all four need ([Replicate()]). One flow, edges
 * worked out by hand: gather 3 -> 2, 1 -> 0, 2 => 0 (device 2 combines a2 + a3 on host 1
 * and its partial crosses the NIC once), then the result 0 -> 1, 0 => 2, 2 -> 3.
 * Checked: the combine tree (order a0, a1, then 2's partial), the byte counts (2 S through
 * NICs, 4 S inside hosts), the simulator's estimate (4 hops of S, one chunk each, done at
 * 4 S/B), the validator (an edge out of the combiner before its inputs, an addend twice,
 * and a pre-combined avg are refused), and the bits on 1, 2 and 4 ranks: with a2 = 1024 and
 * a3 = 0.5 the host partial rounds to 1024 in f16, so element 0 is 0.5 + 0 + 1024 = 1024.5
 * -> 1024 where the flat order would give 1025; mc_pattern_check_reduced follows the tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"
#include "exec/combine.h"
#include "plan/plan_internal.h"
#include "exec_harness.h"

static const char *const topo_text = "name hand\nhosts 2\ndevices_per_host 2\n"
                                     "link copy bandwidth=10GB/s latency=0us\n"
                                     "link intra bandwidth=1GB/s latency=0us\n"
                                     "nic count=1 in=1GB/s out=1GB/s latency=0us\n";

typedef struct {
    mc_topology_t *topo;
    mc_mesh_t *mesh;
    mc_layout_t *src, *dst;
    mc_plan_t *plan;
} hand_t;

/* The hand plan over n elements of dtype, op; edges as given (ngather gather edges). */
static mc_status_t hand_plan(hand_t *h, int64_t n, mc_dtype_t dtype, const char *src_spec,
                             const int64_t (*edges)[2], int nedges, int ngather)
{
    int64_t shape[1] = {4}, ids[4] = {0, 1, 2, 3}, tshape[1] = {n};
    mc_spec_t *ss = NULL, *ds = NULL;
    memset(h, 0, sizeof *h);
    assert_int_equal(mc_topology_parse(topo_text, "hand", &h->topo), MC_OK);
    assert_int_equal(mc_mesh_create(1, shape, ids, NULL, &h->mesh), MC_OK);
    assert_int_equal(mc_spec_parse(src_spec, h->mesh, 1, &ss), MC_OK);
    assert_int_equal(mc_spec_parse("[Replicate()]", h->mesh, 1, &ds), MC_OK);
    assert_int_equal(mc_layout_create(1, tshape, dtype, h->mesh, ss, &h->src), MC_OK);
    assert_int_equal(mc_layout_create(1, tshape, dtype, h->mesh, ds, &h->dst), MC_OK);
    mc_spec_destroy(ss);
    mc_spec_destroy(ds);
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = MC_STRATEGY_SEND_RECV};
    assert_int_equal(mc_plan_create(h->src, h->dst, h->topo, &params, &h->plan), MC_OK);
    mc_plan_t *p = h->plan;
    assert_int_equal(p->pieces->npieces, 1);
    p->nflows = p->nedges = 0;
    assert_int_equal(mc_plan_add_flow(p, 0, &p->pieces->pieces[0].box), MC_OK);
    for (int j = 0; j < nedges; j++)
        assert_int_equal(
            (j < ngather ? mc_plan_add_gather : mc_plan_add_edge)(p, edges[j][0], edges[j][1]),
            MC_OK);
    assert_int_equal(mc_plan_set_chunks(p), MC_OK);
    p->flows[0].chunk_bytes = p->flows[0].bytes; /* one chunk: hops add up by hand */
    p->stats = (mc_plan_stats_t){0};
    assert_int_equal(mc_plan_count(p), MC_OK);
    return mc_plan_validate(p);
}

static void hand_free(hand_t *h)
{
    mc_plan_destroy(h->plan);
    mc_layout_destroy(h->src);
    mc_layout_destroy(h->dst);
    mc_mesh_destroy(h->mesh);
    mc_topology_destroy(h->topo);
}

static const int64_t tree_edges[6][2] = {{3, 2}, {1, 0}, {2, 0}, {0, 1}, {0, 2}, {2, 3}};

static void test_tree_and_counts(void **state)
{
    (void)state;
    hand_t h;
    const int64_t n = 500000, S = 2 * n; /* f16: S = 1 MB, 1 ms per hop at 1 GB/s */
    assert_int_equal(hand_plan(&h, n, MC_DTYPE_F16, "[Partial()]", tree_edges, 6, 3), MC_OK);
    mc_reduce_tree_t t;
    assert_int_equal(mc_reduce_tree(h.plan, 0, &t), MC_OK);
    assert_int_equal(mc_flow_reducer(h.plan, &h.plan->flows[0]), 0);
    assert_int_equal(t.ncomb, 2);
    /* combiner 0: device 2 on host 1, a2 (own) + a3, sent on by gather edge 2 */
    assert_int_equal(t.comb[0].device, 2);
    assert_int_equal(t.comb[0].out_edge, 2);
    assert_int_equal(t.comb[0].nin, 2);
    assert_int_equal(t.in[t.comb[0].in0], 2);
    assert_int_equal(t.in[t.comb[0].in0 + 1], 3);
    /* the reducer: a0 (own), a1, then combiner 0's partial (least addend 2) */
    assert_int_equal(t.comb[1].device, 0);
    assert_int_equal(t.comb[1].out_edge, -1);
    assert_int_equal(t.comb[1].nin, 3);
    assert_int_equal(t.in[t.comb[1].in0], 0);
    assert_int_equal(t.in[t.comb[1].in0 + 1], 1);
    assert_int_equal(t.in[t.comb[1].in0 + 2], -1);
    mc_reduce_tree_free(&t);
    assert_int_equal(h.plan->stats.nic_bytes, 2 * S);        /* 2 => 0, 0 => 2 */
    assert_int_equal(h.plan->stats.intra_host_bytes, 4 * S); /* 3->2, 1->0, 0->1, 2->3 */
    /* 3->2 and 1->0 in [0, 1 ms]; 2 => 0 in [1, 2]; 0->1 and 0 => 2 in [2, 3]; 2->3 [3, 4] */
    double est = 0;
    assert_int_equal(mc_plan_simulate(h.plan, &est), MC_OK);
    assert_true(est > 4e-3 * (1 - 1e-9) && est < 4e-3 * (1 + 1e-9));
    hand_free(&h);
}

static void test_validator(void **state)
{
    (void)state;
    hand_t h;
    /* the combiner sends before it has its input */
    const int64_t early[6][2] = {{2, 0}, {3, 2}, {1, 0}, {0, 1}, {0, 2}, {2, 3}};
    assert_int_equal(hand_plan(&h, 8, MC_DTYPE_F32, "[Partial()]", early, 6, 3), MC_ERR_INVALID);
    hand_free(&h);
    /* a3 twice: straight to the reducer and through combiner 2 */
    const int64_t twice[7][2] = {{3, 2}, {3, 0}, {1, 0}, {2, 0}, {0, 1}, {0, 2}, {0, 3}};
    assert_int_equal(hand_plan(&h, 8, MC_DTYPE_F32, "[Partial()]", twice, 7, 4), MC_ERR_INVALID);
    hand_free(&h);
    /* avg divides once: never pre-combined */
    assert_int_equal(hand_plan(&h, 8, MC_DTYPE_F32, "[Partial('avg')]", tree_edges, 6, 3),
                     MC_ERR_INVALID);
    hand_free(&h);
}

static uint16_t f16(float x)
{
    return mc_f32_to_f16(x);
}

static void test_bits(void **state)
{
    (void)state;
    hand_t h;
    assert_int_equal(hand_plan(&h, 2, MC_DTYPE_F16, "[Partial()]", tree_edges, 6, 3), MC_OK);
    const float addends[4][2] = {{0.5f, 1}, {0, 2}, {1024, 3}, {0.5f, 4}};
    for (int nranks = 1; nranks <= 4; nranks *= 2) {
        uint16_t src[4][2], dst[4][2];
        mc_buffer_t sb[4], db[4];
        for (int d = 0; d < 4; d++) {
            for (int i = 0; i < 2; i++)
                src[d][i] = f16(addends[d][i]);
            memset(dst[d], 0xA5, sizeof dst[d]);
            sb[d] = (mc_buffer_t){.ptr = src[d], .memory = MC_MEMORY_HOST};
            db[d] = (mc_buffer_t){.ptr = dst[d], .memory = MC_MEMORY_HOST};
        }
        char err[512];
        assert_int_equal(eh_execute(h.plan, nranks, sb, db, 0, 20, err, sizeof err), MC_OK);
        for (int d = 0; d < 4; d++) {
            /* 0.5 + 0 + f16(1024 + 0.5) = 1024.5 -> 1024 (the flat order: 1025); 1+2+(3+4) */
            assert_int_equal(dst[d][0], f16(1024));
            assert_int_equal(dst[d][1], f16(10));
        }
    }
    /* the verifier follows the tree: pattern addends, every device exact */
    eh_tiles_t st, dt;
    eh_tiles_make(&st, h.src, 1, 7);
    eh_tiles_make(&dt, h.dst, 0, 7);
    char err[512];
    assert_int_equal(eh_execute(h.plan, 4, st.bufs, dt.bufs, 0, 20, err, sizeof err), MC_OK);
    for (int d = 0; d < 4; d++) {
        int64_t wrong = -1;
        double diff = -1;
        assert_int_equal(mc_pattern_check_reduced(h.plan, d, 7, dt.bufs[d].ptr, &wrong, &diff),
                         MC_OK);
        assert_int_equal(wrong, 0);
        assert_true(diff >= 0);
    }
    eh_tiles_free(&st);
    eh_tiles_free(&dt);
    hand_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_counts),
        cmocka_unit_test(test_validator),
        cmocka_unit_test(test_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
