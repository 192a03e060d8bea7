/* Partial (pending reduction) specs: the three notations parse to the same partial axes and
 * op and print back exactly; random specs with partial axes round-trip; the spec API refuses
 * inconsistent partial axes; pieces of a partial source list every addend of a box; plans of
 * a partial source are refused with a clear message by strategies without one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"
#include "layouts/layout_internal.h"
#include "layouts/pieces.h"

static mc_mesh_t *mesh_of(const char *shape)
{
    mc_mesh_t *m = NULL;
    assert_int_equal(mc_mesh_parse(shape, NULL, 0, &m), MC_OK);
    return m;
}

/* text parses on a 2x4 mesh (2-d tensor) and prints as alpa, dtensor and jax. */
static void check(const char *text, const char *alpa, const char *dtensor, const char *jax)
{
    mc_mesh_t *m = mesh_of("2x4");
    mc_spec_t *s = NULL;
    if (mc_spec_parse(text, m, 2, &s))
        fail_msg("spec '%s' failed: %s", text, mc_last_error());
    const char *want[3] = {alpa, dtensor, jax};
    mc_notation_t nots[3] = {MC_NOTATION_ALPA, MC_NOTATION_DTENSOR, MC_NOTATION_JAX};
    for (int i = 0; i < 3; i++) {
        char buf[256];
        if (!want[i]) {
            assert_int_equal(mc_spec_format(s, m, nots[i], buf, sizeof buf), MC_ERR_UNSUPPORTED);
            continue;
        }
        assert_int_equal(mc_spec_format(s, m, nots[i], buf, sizeof buf), MC_OK);
        assert_string_equal(buf, want[i]);
        mc_spec_t *back = NULL;
        assert_int_equal(mc_spec_parse(buf, m, 2, &back), MC_OK);
        for (int a = 0; a < 2; a++)
            assert_int_equal(mc_spec_axis_reduce(back, a), mc_spec_axis_reduce(s, a));
        mc_spec_destroy(back);
    }
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
}

static void test_notations(void **state)
{
    (void)state;
    const char *d_sum = "[Shard(0), Partial('sum')]";
    check("[Shard(0), Partial()]", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("[Shard(0), Partial(sum)]", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("[Shard(0), Partial(\"sum\")]", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("S0RP1", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("P('x', unreduced={'y'})", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("P('x', None, unreduced=('y',))", "S0RP1", d_sum, "P('x', None, unreduced={'y'})");
    check("[Partial(reduce_op='avg'), Shard(1)]", "RS1P0:avg", "[Partial('avg'), Shard(1)]",
          "P(None, 'y', unreduced={'x'}, reduce_op='avg')");
    check("RRP01:max", "RRP01:max", "[Partial('max'), Partial('max')]",
          "P(None, None, unreduced={'x', 'y'}, reduce_op='max')");
    check("P(unreduced={'y', 'x'}, reduce_op=\"min\")", "RRP01:min",
          "[Partial('min'), Partial('min')]",
          "P(None, None, unreduced={'x', 'y'}, reduce_op='min')");
}

static void test_spec_api(void **state)
{
    (void)state;
    mc_mesh_t *m = mesh_of("2x4");
    mc_spec_t *s = NULL;
    assert_int_equal(mc_spec_parse("S0R", m, 2, &s), MC_OK);
    assert_int_equal(mc_spec_reduce(s), MC_REDUCE_NONE);
    assert_int_equal(mc_spec_set_reduce(s, 0, MC_REDUCE_SUM), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "both partial and sharding tensor dim 0"));
    assert_int_equal(mc_spec_set_reduce(s, 2, MC_REDUCE_SUM), MC_ERR_INVALID);
    assert_int_equal(mc_spec_set_reduce(s, 1, MC_REDUCE_COUNT), MC_ERR_INVALID);
    assert_int_equal(mc_spec_set_reduce(s, 1, MC_REDUCE_AVG), MC_OK);
    assert_int_equal(mc_spec_reduce(s), MC_REDUCE_AVG);
    assert_int_equal(mc_spec_axis_reduce(s, 0), MC_REDUCE_NONE);
    assert_int_equal(mc_spec_axis_reduce(s, 1), MC_REDUCE_AVG);
    mc_spec_t *c = NULL;
    assert_int_equal(mc_spec_copy(s, &c), MC_OK);
    assert_int_equal(mc_spec_axis_reduce(c, 1), MC_REDUCE_AVG);
    assert_int_equal(mc_spec_set_reduce(c, 1, MC_REDUCE_NONE), MC_OK);
    assert_int_equal(mc_spec_reduce(c), MC_REDUCE_NONE);
    assert_null(mc_reduce_name(MC_REDUCE_NONE));
    assert_string_equal(mc_reduce_name(MC_REDUCE_MIN), "min");
    mc_spec_destroy(c);
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
}

/* Random specs on 3-axis meshes: free mesh axes become partial at random; every notation
 * that can print the spec parses back to it. */
static void test_random_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 12;
    mc_mesh_t *m = mesh_of("2x3x2");
    for (int iter = 0; iter < 2000; iter++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t r = seed >> 20;
        int naxes[2] = {0, 0}, axes[3], pos = 0, dim_of[3];
        for (int a = 0; a < 3; a++) {
            dim_of[a] = (int)(r % 3) - 1; /* -1: not sharding */
            r /= 3;
        }
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 3; a++)
                if (dim_of[a] == d) {
                    naxes[d]++;
                    axes[pos++] = a;
                }
        mc_spec_t *s = NULL;
        assert_int_equal(mc_spec_create(2, naxes, axes, m, &s), MC_OK);
        mc_reduce_t op = (mc_reduce_t)(1 + r % 4);
        r /= 4;
        for (int a = 0; a < 3; a++, r /= 2)
            if (dim_of[a] < 0 && (r & 1))
                assert_int_equal(mc_spec_set_reduce(s, a, op), MC_OK);
        for (int n = 0; n < 3; n++) {
            char buf[256];
            if (mc_spec_format(s, m, (mc_notation_t)n, buf, sizeof buf))
                continue;
            mc_spec_t *back = NULL;
            if (mc_spec_parse(buf, m, 2, &back))
                fail_msg("'%s' does not parse back: %s", buf, mc_last_error());
            for (int a = 0; a < 3; a++)
                assert_int_equal(mc_spec_axis_reduce(back, a), mc_spec_axis_reduce(s, a));
            for (int d = 0; d < 2; d++) {
                assert_int_equal(back->naxes[d], s->naxes[d]);
                for (int k = 0; k < s->naxes[d]; k++)
                    assert_int_equal(back->axes[d][k], s->axes[d][k]);
            }
            mc_spec_destroy(back);
        }
        mc_spec_destroy(s);
    }
    mc_mesh_destroy(m);
}

static mc_layout_t *layout_of(const char *mesh, const char *devices, const char *spec, int64_t n0,
                              int64_t n1)
{
    mc_mesh_t *m = NULL;
    mc_spec_t *s = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_parse(mesh, devices, 0, &m), MC_OK);
    assert_int_equal(mc_spec_parse(spec, m, 2, &s), MC_OK);
    int64_t shape[2] = {n0, n1};
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, m, s, &l), MC_OK);
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
    return l;
}

/* A row-parallel result on a 2x2 mesh (rows over x, pending sum over y) to replicated on
 * another 2-device mesh: each box has 2 holders per addend-free coordinate, one per addend,
 * and every destination device needs it. Tiles ignore the partial axis. */
static void test_pieces_addends(void **state)
{
    (void)state;
    mc_layout_t *src = layout_of("2x2", "0-3", "S0RP1", 10, 6);
    mc_layout_t *dst = layout_of("2", "2,4", "RR", 10, 6);
    mc_box_t b;
    assert_int_equal(mc_layout_tile(src, 1, &b), MC_OK); /* x = 0, y = 1: rows 0..5 */
    assert_int_equal(b.lo[0], 0);
    assert_int_equal(b.hi[0], 5);
    mc_pieces_t *p = NULL;
    assert_int_equal(mc_pieces_compute(src, dst, &p), MC_OK);
    assert_int_equal(p->naddends, 2);
    assert_int_equal(p->op, MC_REDUCE_SUM);
    assert_int_equal(p->npieces, 2);
    const int64_t holders[2][2] = {{0, 1}, {2, 3}};
    for (int i = 0; i < 2; i++) {
        const mc_piece_t *pc = &p->pieces[i];
        assert_int_equal(pc->box.lo[0], 5 * i);
        assert_int_equal(pc->nholders, 2);
        assert_int_equal(pc->nself, 0); /* device 2 holds one addend, not the sum */
        assert_int_equal(pc->nneeders, 2);
        assert_int_equal(pc->needers[0], 2);
        assert_int_equal(pc->needers[1], 4);
        for (int h = 0; h < 2; h++) {
            assert_int_equal(pc->holders[h], holders[i][h]);
            assert_int_equal(pc->addends[h], h); /* y coordinate */
        }
    }
    mc_pieces_destroy(p);

    /* Not partial: no addend arrays, local copies as before. */
    mc_layout_t *plain = layout_of("2x2", "0-3", "S0R", 10, 6);
    assert_int_equal(mc_pieces_compute(plain, dst, &p), MC_OK);
    assert_int_equal(p->naddends, 1);
    assert_null(p->pieces[0].addends);
    assert_int_equal(p->pieces[1].nself, 1);
    mc_pieces_destroy(p);

    /* A partial destination: only its addend-0 devices (y coordinate 0: devices 0 and 2) need
     * pieces, the others hold the identity; Partial(avg) has none. */
    assert_int_equal(mc_pieces_compute(plain, src, &p), MC_OK);
    for (int64_t i = 0; i < p->npieces; i++)
        for (int j = 0; j < p->pieces[i].nneeders; j++)
            assert_true(p->pieces[i].needers[j] == 0 || p->pieces[i].needers[j] == 2);
    for (int64_t i = 0; i < p->npieces; i++)
        for (int j = 0; j < p->pieces[i].nself; j++)
            assert_true(p->pieces[i].self[j] == 0 || p->pieces[i].self[j] == 2);
    mc_pieces_destroy(p);
    mc_layout_t *avg = layout_of("2x2", "0-3", "S0RP1:avg", 10, 6);
    assert_int_equal(mc_pieces_compute(plain, avg, &p), MC_ERR_UNSUPPORTED);
    assert_non_null(strstr(mc_last_error(), "Partial(avg) destination has no identity"));
    mc_layout_destroy(avg);
    mc_layout_destroy(plain);

    /* A partial source: local_allgather (copies only) refuses with the reason; send_recv
     * plans the naive reduction. */
    mc_topology_t *t = NULL;
    assert_int_equal(mc_topology_load("p3.8xlarge", &t), MC_OK);
    mc_plan_t *plan = NULL;
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = MC_STRATEGY_LOCAL_ALLGATHER};
    assert_int_equal(mc_plan_create(src, dst, t, &params, &plan), MC_ERR_UNSUPPORTED);
    assert_non_null(strstr(mc_last_error(), "Partial (pending sum of 2 addends); strategy "
                                            "local_allgather moves copies only"));
    params.strategy = MC_STRATEGY_SEND_RECV;
    assert_int_equal(mc_plan_create(src, dst, t, &params, &plan), MC_OK);
    mc_plan_stats_t st;
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    assert_true(st.valid && st.lower_bound_s > 0 && st.estimate_s >= st.lower_bound_s);
    /* rows [0,5): gathered at a holder (1 message), sent to both needers (2); rows
     * [5,10): gathered at needer 2, which holds addend 0 (1), sent to needer 4 (1) */
    assert_int_equal(st.messages, 5);
    mc_plan_destroy(plan);
    double sec;
    assert_int_equal(mc_lower_bound(src, dst, t, &sec), MC_OK);
    assert_true(sec == st.lower_bound_s);
    mc_topology_destroy(t);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notations),
        cmocka_unit_test(test_spec_api),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_pieces_addends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
