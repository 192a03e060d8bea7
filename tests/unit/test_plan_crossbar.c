/* The crossbar efficiency (`crossbar efficiency=E` in a .topo, lib/plan/crossbar.c):
 * parsing and writing, and the simulator's rule on hand-worked numbers.
 *
 * Topology: 4 hosts x 1 device, NIC 1 Gbit/s = 1.25e8 bytes/s per direction (200 us).
 * A 2048x4096 i32 tensor (32 MiB) moves from devices 0-1 (hosts 0-1) to devices 2-3
 * (hosts 2-3), with send_recv:
 * - crossbar, S1R -> RS1: each source host holds half the rows, each destination host
 *   needs half the columns, so every source host sends 8 MiB to each destination host and
 *   every destination host receives from both source hosts. 16 MiB per NIC:
 *   16 MiB / B + 200 us = 134.418 ms without E; 16 MiB / (E B) + 200 us with E
 *   (E = 0.8: 167.972 ms). The simulator pairs the ports up with no idle time (each source
 *   port sends to whichever destination port is free), so these are exact.
 * - disjoint pairs, S1R -> S1R: host 0 sends 16 MiB to host 2, host 1 to host 3: the same
 *   bytes per NIC, 134.418 ms with or without E.
 * - fan-out, one source host (R on device 0) to 2 hosts (RS1 on devices 2-3): host 0 sends
 *   16 MiB to each of two hosts, but each destination receives from one: 32 MiB / B +
 *   200 us with or without E (the rule needs both ends).
 * The lower bound ignores E (the busiest NIC's bytes / B + 200 us): E only slows transfers
 * down. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plan/plan_internal.h"
#include "topology/topology_internal.h"
#include "bad_topology.h"

#define MIB 1048576.0
#define NIC 1.25e8
#define LAT 200e-6

static const char *const topo_text = "name t\nhosts 4\ndevices_per_host 1\n"
                                     "link copy bandwidth=25GB/s latency=2us\n"
                                     "link intra bandwidth=10GB/s latency=100us\n"
                                     "nic count=1 in=1Gbit/s out=1Gbit/s latency=200us\n";

static mc_topology_t *parse(const char *line)
{
    char text[512];
    mc_topology_t *t = NULL;
    snprintf(text, sizeof text, "%s%s", topo_text, line);
    if (mc_topology_parse(text, "t.topo", &t))
        fail_msg("%s", mc_last_error());
    return t;
}

static mc_layout_t *layout(const char *mesh_text, const char *devices, const char *spec_text)
{
    const int64_t shape[2] = {2048, 4096};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_parse(mesh_text, devices, 0, &mesh), MC_OK);
    assert_int_equal(mc_spec_parse(spec_text, mesh, 2, &spec), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_I32, mesh, spec, &l), MC_OK);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return l;
}

typedef enum { CROSSBAR, DISJOINT, FANOUT } shape_t;

static mc_plan_stats_t plan_on(const mc_topology_t *t, shape_t kind)
{
    mc_layout_t *src = kind == FANOUT ? layout("1x1", "0", "RR") : layout("1x2", "0,1", "S1R");
    mc_layout_t *dst = layout("1x2", "2,3", kind == DISJOINT ? "S1R" : "RS1");
    mc_plan_params_t p = {MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER, 0, 0, 0, 0};
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    assert_int_equal(mc_strategy_parse("send_recv", &p.strategy, &p.sender), MC_OK);
    assert_int_equal(mc_plan_create(src, dst, t, &p, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    assert_int_equal(st.nic_bytes, 32 * 1048576);
    return st;
}

static void expect_exact(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-9 * want)
        fail_msg("%s: %.9g s, want %.9g s", what, got, want);
}

static void test_parse_write(void **state)
{
    (void)state;
    mc_topology_t *t = parse(""), *u = NULL;
    assert_true(t->crossbar_eff == 0); /* absent: off */
    mc_topology_destroy(t);
    t = parse("crossbar efficiency=0.93\n");
    assert_true(t->crossbar_eff == 0.93);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    if (!strstr(buf, "crossbar efficiency=0.93\n"))
        fail_msg("written: %s", buf);
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->crossbar_eff == 0.93);
    mc_topology_destroy(u);
    mc_topology_destroy(t);
    /* a value that needs 17 digits reads back exactly */
    t = parse("crossbar efficiency=0.30000000000000004\n");
    topology_text(t, buf, sizeof buf);
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->crossbar_eff == t->crossbar_eff && t->crossbar_eff != 0.3);
    mc_topology_destroy(u);
    mc_topology_destroy(t);

    static const char *const bad[][2] = {
        {"crossbar efficiency=0\n", "must be in (0, 1]"},
        {"crossbar efficiency=1.01\n", "must be in (0, 1]"},
        {"crossbar efficiency=-0.5\n", "must be in (0, 1]"},
        {"crossbar efficiency=nan\n", "is not a number"},
        {"crossbar efficiency=inf\n", "is not a number"},
        {"crossbar efficiency=0x0.8\n", "is not a number"},
        {"crossbar efficiency=0.9x\n", "is not a number"},
        {"crossbar efficiency=\n", "crossbar: expected efficiency=E"},
        {"crossbar\n", "crossbar: expected efficiency=E"},
        {"crossbar eff=0.9\n", "crossbar: expected efficiency=E"},
        {"crossbar efficiency=0.9 x\n", "unexpected 'x' after crossbar"},
        {"crossbar efficiency=0.9\ncrossbar efficiency=0.8\n", "duplicate 'crossbar'"},
    };
    expect_bad_topology_lines(topo_text, bad, sizeof bad / sizeof bad[0]);
}

static void test_rule(void **state)
{
    (void)state;
    mc_topology_t *plain = parse(""), *one = parse("crossbar efficiency=1\n"),
                  *slow = parse("crossbar efficiency=0.8\n");
    double port = 16 * MIB / NIC;

    mc_plan_stats_t x0 = plan_on(plain, CROSSBAR), x1 = plan_on(one, CROSSBAR),
                    x8 = plan_on(slow, CROSSBAR);
    expect_exact(x0.estimate_s, port + LAT, "crossbar, no line");
    expect_exact(x1.estimate_s, x0.estimate_s, "crossbar, E = 1");
    expect_exact(x8.estimate_s, port / 0.8 + LAT, "crossbar, E = 0.8");
    expect_exact(x0.lower_bound_s, port + LAT, "crossbar bound");
    assert_true(x8.lower_bound_s == x0.lower_bound_s && x1.lower_bound_s == x0.lower_bound_s);

    for (shape_t k = DISJOINT; k <= FANOUT; k++) {
        const char *what = k == DISJOINT ? "disjoint pairs" : "fan-out";
        mc_plan_stats_t a = plan_on(plain, k), b = plan_on(slow, k);
        expect_exact(a.estimate_s, (k == DISJOINT ? port : 2 * port) + LAT, what);
        assert_true(b.estimate_s == a.estimate_s && b.lower_bound_s == a.lower_bound_s);
    }
    mc_topology_destroy(plain);
    mc_topology_destroy(one);
    mc_topology_destroy(slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_write),
        cmocka_unit_test(test_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
