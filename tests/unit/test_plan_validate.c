/* mc_plan_validate's answers on hand-made plans of one 1-D i32 tensor of 8 elements, held by
 * device 0 and needed whole by devices 4 and 5 (p3.8xlarge: host 0 sends, host 1 needs): one
 * piece, elements 0-7, needers 4 and 5. Each case lists its flows (an element range and its
 * edges); the validator names the device and piece a wrong plan fails for:
 * - whole to 4 and 5, or halves in either order, or 5 forwarding to 4: valid;
 * - the whole piece, then its upper half again to 5: device 5 gets bytes of piece 0 twice;
 * - halves to 4, only the lower half to 5: device 5 gets 4 of the 8 elements;
 * - the whole piece to 4 only: one (piece, needer) pair receives nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "oracle_plan.h"

typedef struct {
    int64_t lo, hi;
    int nedges;
    int64_t edges[2][2];
} flow_t;

typedef struct {
    const char *name;
    int nflows;
    flow_t flows[3];
    const char *error; /* NULL: valid */
} case_t;

static const case_t cases[] = {
    {"whole", 1, {{0, 8, 2, {{0, 4}, {0, 5}}}}, NULL},
    {"halves", 2, {{4, 8, 2, {{0, 5}, {0, 4}}}, {0, 4, 2, {{0, 4}, {0, 5}}}}, NULL},
    {"forward", 1, {{0, 8, 2, {{0, 5}, {5, 4}}}}, NULL},
    {"twice",
     2,
     {{0, 8, 2, {{0, 4}, {0, 5}}}, {4, 8, 1, {{0, 5}}}},
     "device 5 gets bytes of piece 0 twice"},
    {"short",
     2,
     {{0, 4, 2, {{0, 4}, {0, 5}}}, {4, 8, 1, {{0, 4}}}},
     "device 5 gets 4 of the 8 elements of piece 0"},
    {"nothing", 1, {{0, 8, 1, {{0, 4}}}}, "1 (piece, needer) pairs receive nothing"},
};

static void test_validate_messages(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const case_t *k = &cases[c];
        mc_topology_t *topo;
        int64_t one[1] = {1}, src_ids[1] = {0}, dst_ids[2] = {4, 5};
        oracle_plan_t op;
        assert_int_equal(mc_topology_load("p3.8xlarge", &topo), MC_OK);
        oracle_plan_make(&op, topo, 8, 1, one, src_ids, "R", 2, dst_ids, "R");
        mc_plan_t *plan = op.plan;
        assert_int_equal(plan->pieces->npieces, 1);
        for (int f = 0; f < k->nflows && k->flows[f].nedges; f++) {
            mc_box_t box = {0};
            box.lo[0] = k->flows[f].lo;
            box.hi[0] = k->flows[f].hi;
            assert_int_equal(mc_plan_add_flow(plan, 0, &box), MC_OK);
            for (int e = 0; e < k->flows[f].nedges; e++)
                assert_int_equal(
                    mc_plan_add_edge(plan, k->flows[f].edges[e][0], k->flows[f].edges[e][1]),
                    MC_OK);
        }
        assert_int_equal(mc_plan_set_chunks(plan), MC_OK);
        mc_status_t s = mc_plan_validate(plan);
        if (!k->error) {
            if (s != MC_OK)
                fail_msg("%s: %s", k->name, mc_last_error());
        } else if (s != MC_ERR_INVALID || strcmp(mc_last_error(), k->error) != 0) {
            fail_msg("%s: got %d '%s', want '%s'", k->name, s, s ? mc_last_error() : "", k->error);
        }
        oracle_plan_free(&op);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
