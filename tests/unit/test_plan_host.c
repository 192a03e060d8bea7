/* The host bandwidth (`host bandwidth=B` in a .topo): parsing and writing, the simulator's
 * per-host booking and the lower bound's host term, on hand-worked numbers.
 *
 * Topology T: 2 hosts x 4 devices, intra 10 GB/s per port (100 us), NIC 1 Gbit/s
 * = 1.25e8 bytes/s (200 us), host bandwidth H = 2 GB/s. The ring case: 64 MiB i32 over
 * devices 0-3 of host 0 (S1 on a 1x4 mesh) moves to devices 1,2,3,0: four 16 MiB intra-host
 * transfers on four distinct ports at once.
 * - Without H each takes 16 MiB / 10 GB/s = 1.68 ms (+ 100 us).
 * - With H the host moves all 64 MiB at 2 GB/s: 33.6 ms (+ 100 us); the estimate must lie
 *   between 64 MiB / H and 2% more plus the latency.
 * - The bound's host term: host 0's devices need 64 MiB in all, through H or the NIC, but
 *   the meshes use host 0 alone, so nothing can come over its NIC (a plan's edges join the
 *   meshes' devices): 64 MiB / H + 100 us = 33.65 ms, the largest term here (31.68 ms with
 *   the NIC, before the bound took only the meshes' hosts).
 *
 * The machine bandwidth (`machine bandwidth=M`: hosts emulated on one machine share its
 * cores): the ring on both hosts at once (64 MiB on each host, 128 MiB in all).
 * - With H = 2 GB/s per host the hosts copy side by side: 64 MiB / H = 33.6 ms.
 * - With M = 2 GB/s instead they take turns on the one machine: 128 MiB / M = 67.1 ms.
 * - With both, M binds: 67.1 ms.
 * - The bound's machine term: each host's devices need 64 MiB, through M or their NIC; both
 *   hosts: 128 MiB / (M + 2 * 1.25e8) + 100 us = 59.75 ms (one host alone, no NIC: 33.65 ms). */
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

static const char *const topo_text = "name t\nhosts 2\ndevices_per_host 4\n"
                                     "link copy bandwidth=25GB/s latency=2us\n"
                                     "link intra bandwidth=10GB/s latency=100us\n"
                                     "nic count=1 in=1Gbit/s out=1Gbit/s latency=200us\n";

static mc_topology_t *parse(const char *host_line)
{
    char text[512];
    mc_topology_t *t = NULL;
    snprintf(text, sizeof text, "%s%s", topo_text, host_line);
    if (mc_topology_parse(text, "t.topo", &t))
        fail_msg("%s", mc_last_error());
    return t;
}

static void test_parse_write(void **state)
{
    (void)state;
    mc_topology_t *t = parse(""), *u = NULL;
    assert_true(mc_topology_host_bandwidth(t) == 0); /* absent: no limit */
    mc_topology_destroy(t);
    t = parse("host bandwidth=2GB/s\n");
    assert_true(mc_topology_host_bandwidth(t) == 2e9);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    assert_non_null(strstr(buf, "host bandwidth=2GB/s\n"));
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(mc_topology_host_bandwidth(u) == 2e9);
    mc_topology_destroy(u);
    mc_topology_destroy(t);
    static const char *const bad[][2] = {
        {"host bandwidth=1GB/s\nhost bandwidth=1GB/s\n", "duplicate 'host'"},
        {"host bw=1GB/s\n", "host: expected bandwidth=B"},
        {"host\n", "host: expected bandwidth=B"},
        {"host bandwidth=0\n", "must be positive"},
        {"host bandwidth=1GB/s x\n", "unexpected 'x'"},
    };
    expect_bad_topology_lines(topo_text, bad, sizeof bad / sizeof bad[0]);
}

static mc_layout_t *ring_layout(const char *mesh_text, const char *devices)
{
    const int64_t shape[1] = {(mesh_text[2] == '8' ? 32 : 16) * 1048576};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_parse(mesh_text, devices, 0, &mesh), MC_OK);
    assert_int_equal(mc_spec_parse("S1", mesh, 1, &spec), MC_OK);
    assert_int_equal(mc_layout_create(1, shape, MC_DTYPE_I32, mesh, spec, &l), MC_OK);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return l;
}

/* Every device of the given hosts (1 or 2) sends its 16 MiB tile to the next device of
 * its host. */
static mc_plan_stats_t ring_on(const mc_topology_t *t, int hosts)
{
    const char *mesh = hosts == 1 ? "1x4" : "1x8";
    mc_layout_t *src = ring_layout(mesh, hosts == 1 ? "0-3" : "0-7");
    mc_layout_t *dst = ring_layout(mesh, hosts == 1 ? "1-3,0" : "1-3,0,5-7,4");
    mc_plan_params_t p = {MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER, 0, 0, 0, 0};
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    assert_int_equal(mc_strategy_parse("send_recv", &p.strategy, &p.sender), MC_OK);
    assert_int_equal(mc_plan_create(src, dst, t, &p, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    assert_int_equal(st.intra_host_bytes, hosts * 64 * 1048576);
    return st;
}

static mc_plan_stats_t ring(const mc_topology_t *t)
{
    return ring_on(t, 1);
}

static void expect_near(double got, double want, const char *what)
{
    if (got < want || got > 1.02 * want + 100e-6)
        fail_msg("%s: estimate %.6g s, want %.6g s (+2%% + 100 us)", what, got, want);
}

static void test_machine(void **state)
{
    (void)state;
    mc_topology_t *t = parse("machine bandwidth=2GB/s\n"), *u = NULL;
    assert_true(t->machine_bw == 2e9 && mc_topology_host_bandwidth(t) == 0);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    assert_non_null(strstr(buf, "machine bandwidth=2GB/s\n"));
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->machine_bw == 2e9);
    mc_topology_destroy(u);

    mc_plan_stats_t pooled = ring_on(t, 2);
    expect_near(pooled.estimate_s, 128 * MIB / 2e9, "machine 2 GB/s, two hosts");
    double bound = 128 * MIB / (2e9 + 2 * 1.25e8) + 100e-6;
    if (fabs(pooled.lower_bound_s - bound) > 1e-12 * bound)
        fail_msg("bound %.17g s, want %.17g s", pooled.lower_bound_s, bound);
    assert_true(pooled.estimate_s >= pooled.lower_bound_s);
    expect_near(ring_on(t, 1).estimate_s, 64 * MIB / 2e9, "machine 2 GB/s, one host");
    mc_topology_destroy(t);

    t = parse("host bandwidth=2GB/s\n");
    expect_near(ring_on(t, 2).estimate_s, 64 * MIB / 2e9, "host 2 GB/s, two hosts");
    mc_topology_destroy(t);
    t = parse("host bandwidth=2GB/s\nmachine bandwidth=2GB/s\n");
    expect_near(ring_on(t, 2).estimate_s, 128 * MIB / 2e9, "host and machine 2 GB/s");
    mc_topology_destroy(t);

    static const char *const bad[][2] = {
        {"machine bandwidth=1GB/s\nmachine bandwidth=1GB/s\n", "duplicate 'machine'"},
        {"machine bw=1GB/s\n", "machine: expected bandwidth=B"},
        {"machine bandwidth=0\n", "must be positive"},
        {"machine bandwidth=1GB/s x\n", "unexpected 'x' after machine"},
    };
    expect_bad_topology_lines(topo_text, bad, sizeof bad / sizeof bad[0]);
}

/* A machine message cost: every intra-host chunk books that much more machine time, so
 * the 1-host ring (all of its chunks intra-host, serialized on the machine) takes
 * chunks * message longer; the bound does not count it (still a lower bound). */
static void test_machine_message(void **state)
{
    (void)state;
    mc_topology_t *t = parse("machine bandwidth=2GB/s message=100us\n"), *u = NULL;
    assert_true(t->machine_msg_s == 100e-6);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    if (!strstr(buf, "machine bandwidth=2GB/s message=100us\n"))
        fail_msg("written: %s", buf);
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->machine_msg_s == 100e-6);
    mc_topology_destroy(u);
    mc_plan_stats_t st = ring_on(t, 1);
    mc_topology_destroy(t);
    t = parse("machine bandwidth=2GB/s\n");
    mc_plan_stats_t plain = ring_on(t, 1);
    mc_topology_destroy(t);
    assert_true(st.chunks > 4);
    expect_near(st.estimate_s, 64 * MIB / 2e9 + (double)st.chunks * 100e-6, "message 100 us");
    assert_true(st.lower_bound_s == plain.lower_bound_s);

    static const char *const bad[][2] = {
        {"machine bandwidth=1GB/s message=\n", "machine message needs a time"},
        {"machine bandwidth=1GB/s message=-1us\n", "non-negative"},
        {"machine bandwidth=1GB/s message=1us x\n", "unexpected 'x' after machine"},
        {"host bandwidth=1GB/s message=1us\n", "unexpected 'message=1us' after host"},
    };
    expect_bad_topology_lines(topo_text, bad, sizeof bad / sizeof bad[0]);
}

/* A reshard's fixed cost is added once to the estimate and to the bound, whatever the hops. */
static void test_reshard_latency(void **state)
{
    (void)state;
    mc_topology_t *t = parse("reshard latency=400us\n"), *u = NULL;
    assert_true(t->reshard_s == 400e-6);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    if (!strstr(buf, "reshard latency=400us\n"))
        fail_msg("written: %s", buf);
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->reshard_s == 400e-6);
    mc_topology_destroy(u);
    mc_plan_stats_t st = ring_on(t, 2);
    mc_topology_destroy(t);
    t = parse("");
    mc_plan_stats_t plain = ring_on(t, 2);
    mc_topology_destroy(t);
    expect_near(st.estimate_s, plain.estimate_s + 400e-6, "estimate + 400 us");
    expect_near(st.lower_bound_s, plain.lower_bound_s + 400e-6, "bound + 400 us");

    static const char *const bad[][2] = {
        {"reshard lat=1us\n", "reshard: expected latency=T"},
        {"reshard latency=-1us\n", "non-negative"},
        {"reshard latency=1us x\n", "unexpected 'x' after reshard"},
        {"reshard latency=1us\nreshard latency=2us\n", "duplicate 'reshard'"},
    };
    expect_bad_topology_lines(topo_text, bad, sizeof bad / sizeof bad[0]);
}

static void test_ring(void **state)
{
    (void)state;
    mc_topology_t *t = parse("");
    mc_plan_stats_t free_host = ring(t);
    mc_topology_destroy(t);
    double port = 16 * MIB / 10e9;
    assert_true(free_host.estimate_s >= port && free_host.estimate_s <= 1.02 * port + 100e-6);

    t = parse("host bandwidth=2GB/s\n");
    mc_plan_stats_t shared = ring(t);
    mc_topology_destroy(t);
    double host = 64 * MIB / 2e9;
    if (shared.estimate_s < host || shared.estimate_s > 1.02 * host + 100e-6)
        fail_msg("estimate %.6g s, want %.6g s (+2%% + 100 us)", shared.estimate_s, host);
    double want = 64 * MIB / 2e9 + 100e-6;
    if (fabs(shared.lower_bound_s - want) > 1e-12 * want)
        fail_msg("bound %.17g s, want %.17g s", shared.lower_bound_s, want);
    assert_true(shared.estimate_s >= shared.lower_bound_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_write),     cmocka_unit_test(test_ring),
        cmocka_unit_test(test_machine),         cmocka_unit_test(test_machine_message),
        cmocka_unit_test(test_reshard_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
