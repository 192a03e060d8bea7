/* NIC affinity (docs/topology.md, "NIC affinity"): the nic-affinity line parses, is refused
 * with one clear reason when wrong, writes back, answers the queries, survives the planner's
 * compact view; and the cost model gives each NIC its own port (hand-computed makespans on
 * 2 hosts x 2 devices x 2 NICs) while the lower bound stays at or below the estimate. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"

/* 2 hosts x 2 devices, 2 NICs of 1 GB/s each way; intra-host links far faster. */
#define BASE                                                                                       \
    "hosts 2\ndevices_per_host 2\nlink copy bandwidth=1TB/s latency=0\n"                           \
    "link intra bandwidth=1TB/s latency=0\nnic count=2 in=1GB/s out=1GB/s latency=%s\n%s"

static mc_topology_t *topo(const char *latency, const char *affinity)
{
    char text[512];
    snprintf(text, sizeof text, BASE, latency, affinity);
    mc_topology_t *t = NULL;
    if (mc_topology_parse(text, "t", &t) != MC_OK)
        fail_msg("parse: %s", mc_last_error());
    return t;
}

static const char *refusal(const char *affinity)
{
    char text[512];
    snprintf(text, sizeof text, BASE, "0", affinity);
    mc_topology_t *t = NULL;
    assert_int_not_equal(mc_topology_parse(text, "t", &t), MC_OK);
    assert_null(t);
    return mc_last_error();
}

static void test_parse_and_query(void **state)
{
    (void)state;
    mc_topology_t *t = topo("0", "nic-affinity map=1,0 rails\n");
    int nic = -1, rails = -1;
    assert_int_equal(mc_topology_nic_of(t, 0, &nic), MC_OK);
    assert_int_equal(nic, 1);
    assert_int_equal(mc_topology_nic_of(t, 3, &nic), MC_OK); /* host 1, local device 1 */
    assert_int_equal(nic, 0);
    assert_int_equal(mc_topology_nic_rails(t, &rails), MC_OK);
    assert_int_equal(rails, 1);
    assert_int_equal(mc_topology_nic_of(t, 4, &nic), MC_ERR_INVALID);
    mc_topology_destroy(t);

    t = topo("0", "");
    assert_int_equal(mc_topology_nic_of(t, 0, &nic), MC_ERR_NOT_FOUND);
    assert_int_equal(mc_topology_nic_rails(t, &rails), MC_OK);
    assert_int_equal(rails, 0);
    mc_topology_destroy(t);
}

static void test_refusals(void **state)
{
    (void)state;
    assert_non_null(strstr(refusal("nic-affinity map=0\n"), "map has 1 entries"));
    assert_non_null(strstr(refusal("nic-affinity map=0,0,1\n"), "map has 3 entries"));
    assert_non_null(strstr(refusal("nic-affinity map=0,2\n"), "not below nic count=2"));
    assert_non_null(strstr(refusal("nic-affinity map=0,x\n"), "entry 1 'x'"));
    assert_non_null(strstr(refusal("nic-affinity map=0,-1\n"), "not a NIC index"));
    assert_non_null(strstr(refusal("nic-affinity map=0,,1\n"), "not a NIC index"));
    assert_non_null(strstr(refusal("nic-affinity map=0,1 spine\n"), "unexpected 'spine'"));
    assert_non_null(strstr(refusal("nic-affinity map=0,1 rails rails\n"), "unexpected 'rails'"));
    assert_non_null(strstr(refusal("nic-affinity 0,1\n"), "expected map="));
    assert_non_null(strstr(refusal("nic-affinity\n"), "expected map="));
    assert_non_null(strstr(refusal("nic-affinity map=0,1\nnic-affinity map=0,1\n"),
                           "duplicate 'nic-affinity'"));
    /* the line number of the map, even when the check comes after the whole text */
    assert_non_null(strstr(refusal("nic-affinity map=0,3\n"), "t:6:"));
}

static char *written(const mc_topology_t *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(mc_topology_write(t, f), MC_OK);
    fclose(f);
    return buf;
}

static void test_round_trip_and_profiles(void **state)
{
    (void)state;
    const char *lines[] = {"nic-affinity map=1,0 rails\n", "nic-affinity map=0,0\n", ""};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        mc_topology_t *t = topo("0", lines[i]), *back = NULL;
        char *text = written(t);
        assert_true(!*lines[i] || strstr(text, lines[i]));
        assert_int_equal(mc_topology_parse(text, "back", &back), MC_OK);
        char *again = written(back);
        assert_string_equal(text, again);
        free(text);
        free(again);
        mc_topology_destroy(back);
        mc_topology_destroy(t);
    }
    /* DGX -rails: one NIC per GPU, rails; p3.8xlarge: the one NIC for all four; the plain
     * DGX profiles pool their NICs (no map) */
    for (int i = 0; i < 2; i++) {
        mc_topology_t *t = NULL;
        int nic = -1;
        assert_int_equal(mc_topology_load(i ? "dgx-h100" : "dgx-a100", &t), MC_OK);
        assert_int_equal(mc_topology_nic_of(t, 3, &nic), MC_ERR_NOT_FOUND);
        mc_topology_destroy(t);
    }
    const struct {
        const char *name;
        int device, nic, rails;
    } cases[] = {
        {"dgx-a100-rails", 13, 5, 1}, {"dgx-h100-rails", 7, 7, 1}, {"p3.8xlarge", 6, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mc_topology_t *t = NULL, *c = NULL;
        int nic = -1, rails = -1;
        assert_int_equal(mc_topology_load(cases[i].name, &t), MC_OK);
        assert_int_equal(mc_topology_nic_of(t, cases[i].device, &nic), MC_OK);
        assert_int_equal(nic, cases[i].nic);
        assert_int_equal(mc_topology_nic_rails(t, &rails), MC_OK);
        assert_int_equal(rails, cases[i].rails);
        assert_int_equal(mc_topology_copy(t, &c), MC_OK);
        assert_int_equal(mc_topology_nic_of(c, cases[i].device, &nic), MC_OK);
        assert_int_equal(nic, cases[i].nic);
        mc_topology_destroy(c);
        mc_topology_destroy(t);
    }
}

static mc_layout_t *layout(int64_t bytes, int n, const int64_t *ids, const char *spec)
{
    int64_t mshape[1] = {n}, shape[1] = {bytes / 4};
    mc_mesh_t *m = NULL;
    mc_spec_t *s = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_create(1, mshape, ids, NULL, &m), MC_OK);
    assert_int_equal(mc_spec_parse(spec, m, 1, &s), MC_OK);
    assert_int_equal(mc_layout_create(1, shape, MC_DTYPE_F32, m, s, &l), MC_OK);
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
    return l;
}

/* estimate and bound of a send_recv plan of bytes from src ids to dst ids (S0 both sides). */
static mc_plan_stats_t run(const mc_topology_t *t, int64_t bytes, int n, const int64_t *src,
                           const int64_t *dst, mc_strategy_t strategy)
{
    mc_layout_t *a = layout(bytes, n, src, "S0"), *b = layout(bytes, n, dst, "S0");
    mc_plan_params_t p = {.field_mask = MC_PLAN_PARAM_STRATEGY, .strategy = strategy};
    mc_plan_t *plan = NULL;
    if (mc_plan_create(a, b, t, &p, &plan) != MC_OK)
        fail_msg("plan: %s", mc_last_error());
    mc_plan_stats_t st;
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
    return st;
}

static void near(double got, double want)
{
    if (got < want * (1 - 1e-9) || got > want * (1 + 1e-9))
        fail_msg("got %.12g s, want %.12g s", got, want);
}

static void test_cost_model_hand_cases(void **state)
{
    (void)state;
    const int64_t S = 8 << 20;
    const int64_t one_src[1] = {0}, one_dst[1] = {2}, two_src[2] = {0, 1}, two_dst[2] = {2, 3};
    mc_topology_t *pooled = topo("0", ""), *split = topo("0", "nic-affinity map=0,1\n"),
                  *shared = topo("0", "nic-affinity map=0,0\n");
    /* one device sends everything: pooled it has both NICs (2 GB/s), split only its own */
    near(run(pooled, S, 1, one_src, one_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 2e9);
    near(run(split, S, 1, one_src, one_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 1e9);
    /* two devices in parallel: on distinct NICs they get both, on one NIC they share it */
    near(run(pooled, S, 2, two_src, two_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 2e9);
    near(run(split, S, 2, two_src, two_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 2e9);
    near(run(shared, S, 2, two_src, two_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 1e9);
    mc_topology_destroy(pooled);
    mc_topology_destroy(split);
    mc_topology_destroy(shared);

    /* rails: device 0 (NIC 0) to device 3 (NIC 1) crosses the spine, one more latency */
    const int64_t cross_dst[1] = {3};
    mc_topology_t *flat = topo("10us", "nic-affinity map=0,1\n"),
                  *rails = topo("10us", "nic-affinity map=0,1 rails\n");
    near(run(flat, S, 1, one_src, cross_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 1e9 + 10e-6);
    near(run(rails, S, 1, one_src, cross_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 1e9 + 20e-6);
    near(run(rails, S, 1, one_src, one_dst, MC_STRATEGY_SEND_RECV).estimate_s, S / 1e9 + 10e-6);
    mc_topology_destroy(flat);
    mc_topology_destroy(rails);
}

/* Splitting a host's NICs only removes schedules, so the pooled bound still holds, and the
 * bound counts only the NICs of the devices in the meshes: on every strategy and a few
 * layouts, pooled bound <= bound <= estimate. */
static void test_bound_stays_below(void **state)
{
    (void)state;
    const char *maps[] = {"nic-affinity map=0,1\n", "nic-affinity map=0,0\n",
                          "nic-affinity map=1,0 rails\n"};
    const int64_t ids[4][2] = {{0, 1}, {2, 3}, {1, 2}, {0, 3}};
    for (size_t m = 0; m < sizeof maps / sizeof *maps; m++) {
        mc_topology_t *t = topo("5us", maps[m]), *pooled = topo("5us", "");
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int s = 0; s < MC_STRATEGY_COUNT; s++) {
                    if (a == b)
                        continue;
                    mc_plan_stats_t st = run(t, 1 << 20, 2, ids[a], ids[b], (mc_strategy_t)s);
                    mc_plan_stats_t po = run(pooled, 1 << 20, 2, ids[a], ids[b], (mc_strategy_t)s);
                    if (st.lower_bound_s > st.estimate_s * (1 + 1e-9))
                        fail_msg("map %zu src %d dst %d strategy %d: bound %g > estimate %g", m, a,
                                 b, s, st.lower_bound_s, st.estimate_s);
                    assert_true(st.lower_bound_s >= po.lower_bound_s * (1 - 1e-12));
                }
        mc_topology_destroy(t);
        mc_topology_destroy(pooled);
    }
}

/* Hand case: 8 MiB from device 0 to device 2, each host's only device in the meshes. Pooled,
 * the bound is both NICs' rate (2 GB/s); with a port per NIC, device 0 reaches its own NIC
 * only, so 1 GB/s; with both devices of each host in the meshes (S0 over 0,1 -> 2,3) both
 * NICs are reachable again. No latency: the bound is the bytes over the rate. */
static void test_bound_counts_reachable_nics(void **state)
{
    (void)state;
    const int64_t S = 8 << 20, one_src[1] = {0}, one_dst[1] = {2}, two_src[2] = {0, 1},
                  two_dst[2] = {2, 3};
    mc_topology_t *pooled = topo("0", ""), *split = topo("0", "nic-affinity map=0,1\n"),
                  *shared = topo("0", "nic-affinity map=0,0\n");
    near(run(pooled, S, 1, one_src, one_dst, MC_STRATEGY_SEND_RECV).lower_bound_s, S / 2e9);
    near(run(split, S, 1, one_src, one_dst, MC_STRATEGY_SEND_RECV).lower_bound_s, S / 1e9);
    near(run(split, S, 2, two_src, two_dst, MC_STRATEGY_SEND_RECV).lower_bound_s, S / 2e9);
    /* both devices on NIC 0: one NIC's rate, which the plan reaches */
    mc_plan_stats_t st = run(shared, S, 2, two_src, two_dst, MC_STRATEGY_MESHCAST);
    near(st.lower_bound_s, S / 1e9);
    near(st.estimate_s, S / 1e9);
    mc_topology_destroy(pooled);
    mc_topology_destroy(split);
    mc_topology_destroy(shared);
}

/* The planner on a rail-optimized cluster (NIC latency 10 us, ideal intra links): a crossing
 * between rails goes PXN-style through the sending host's device on the receiver's rail
 * (10 us and the bytes) rather than through the spine (20 us); a holder on the receiver's
 * rail sends itself. Hand-computed against the spine's cost; the plans are valid. */
static void test_planner_uses_rails(void **state)
{
    (void)state;
    mc_topology_t *rails = topo("10us", "nic-affinity map=0,1 rails\n");
    const int64_t S = 4096;
    /* device 0 holds it all; device 1 needs the first half, device 3 the second */
    const int64_t src[1] = {0}, dst[2] = {1, 3};
    mc_layout_t *a = layout(S, 1, src, "S0"), *b = layout(S, 2, dst, "S0");
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    if (mc_plan_create(a, b, rails, NULL, &plan) != MC_OK)
        fail_msg("plan: %s", mc_last_error());
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    assert_true(st.valid);
    /* through the spine: 20 us + 2 KiB at 1 GB/s = 22.048 us; relayed: 12.05 us */
    if (st.estimate_s > 15e-6)
        fail_msg("estimate %g s: the crossing did not take device 1's rail", st.estimate_s);
    mc_plan_destroy(plan);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
    /* both devices of host 0 hold it: device 1 sends to device 3 on its own rail */
    const int64_t two[2] = {0, 1}, far[1] = {3};
    a = layout(S, 2, two, "R");
    b = layout(S, 1, far, "S0");
    assert_int_equal(mc_plan_create(a, b, rails, NULL, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    assert_true(st.valid);
    near(st.estimate_s, 10e-6 + S / 1e9);
    mc_plan_destroy(plan);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
    mc_topology_destroy(rails);
}

/* Discovery: each GPU's NIC is the one under its deepest PCIe ancestor (an hwloc XML
 * fixture of 3 GPUs and 2 NICs on two PCIe switches stands in for the hardware). */
static void test_discover_nearest_nic(void **state)
{
    (void)state;
    const char *src = getenv("MESHCAST_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/unit/fixtures/pcie-2switch.xml", src ? src : ".");
    setenv("HWLOC_XMLFILE", path, 1);
    mc_topology_t *t = NULL;
    mc_status_t s = mc_topology_discover(&t);
    unsetenv("HWLOC_XMLFILE");
    if (s == MC_ERR_UNSUPPORTED)
        skip(); /* built without hwloc */
    if (s != MC_OK)
        fail_msg("discover: %s", mc_last_error());
    assert_int_equal(mc_topology_devices_per_host(t), 3);
    assert_int_equal(mc_topology_nics_per_host(t), 2);
    const int want[3] = {0, 0, 1};
    for (int d = 0; d < 3; d++) {
        int nic = -1;
        assert_int_equal(mc_topology_nic_of(t, d, &nic), MC_OK);
        assert_int_equal(nic, want[d]);
    }
    char *text = written(t);
    assert_non_null(strstr(text, "nic-affinity map=0,0,1\n"));
    free(text);
    mc_topology_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_query),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_round_trip_and_profiles),
        cmocka_unit_test(test_cost_model_hand_cases),
        cmocka_unit_test(test_bound_stays_below),
        cmocka_unit_test(test_bound_counts_reachable_nics),
        cmocka_unit_test(test_planner_uses_rails),
        cmocka_unit_test(test_discover_nearest_nic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
