/* The NIC message cost (`nic ... message=T` in a .topo): parsing and writing, and the
 * simulator's port time per NIC chunk, on hand-worked numbers.
 *
 * Topology T: 3 hosts x 1 device, NIC 1 Gbit/s = 1.25e8 bytes/s (200 us). Case: 4 MiB of
 * i32 on device 0, needed by device 1 (one NIC edge) or by devices 1 and 2.
 * - One edge in 16 chunks of 256 KiB: without a message cost 4 MiB / 1.25e8 + 200 us =
 *   33.75 ms; with T = 100 us both NIC ports hold each chunk T longer: 16 T = 1.6 ms more.
 * - The lower bound does not count messages (a plan's chunk count is its own choice), so it
 *   stays what it was: still a lower bound.
 * - The chunk formula pays T per chunk as it pays the latency: a chain over two NIC hops
 *   gets fewer, larger chunks with T = 1 ms than without. */
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
#define NIC_BW 1.25e8

static const char *const head = "name t\nhosts 3\ndevices_per_host 1\n"
                                "link copy bandwidth=25GB/s latency=2us\n"
                                "link intra bandwidth=10GB/s latency=100us\n";

static mc_topology_t *parse(const char *nic_attrs)
{
    char text[512];
    mc_topology_t *t = NULL;
    snprintf(text, sizeof text, "%snic count=1 in=1Gbit/s out=1Gbit/s latency=200us%s\n", head,
             nic_attrs);
    if (mc_topology_parse(text, "t.topo", &t))
        fail_msg("%s", mc_last_error());
    return t;
}

static mc_layout_t *replicated(const char *mesh_text, const char *devices)
{
    const int64_t shape[1] = {1048576}; /* i32: 4 MiB */
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_parse(mesh_text, devices, 0, &mesh), MC_OK);
    assert_int_equal(mc_spec_parse("R", mesh, 1, &spec), MC_OK);
    assert_int_equal(mc_layout_create(1, shape, MC_DTYPE_I32, mesh, spec, &l), MC_OK);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return l;
}

/* Device 0's tensor to the needers (mesh "1" or "2", devices "1" or "1,2") with strategy
 * name and chunk bytes (0: the formula's). */
static mc_plan_stats_t send(const mc_topology_t *t, const char *mesh, const char *needers,
                            const char *strategy, int64_t chunk)
{
    mc_layout_t *src = replicated("1", "0"), *dst = replicated(mesh, needers);
    mc_plan_params_t p = {MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER |
                              (chunk ? MC_PLAN_PARAM_CHUNK_BYTES : 0),
                          0, 0, chunk, 0};
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    assert_int_equal(mc_strategy_parse(strategy, &p.strategy, &p.sender), MC_OK);
    assert_int_equal(mc_plan_create(src, dst, t, &p, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    return st;
}

static void expect_equal(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-9 * want)
        fail_msg("%s: %.17g s, want %.17g s", what, got, want);
}

static void test_parse_write(void **state)
{
    (void)state;
    mc_topology_t *t = parse(" message=100us"), *u = NULL;
    assert_true(t->nic_msg_s == 100e-6);
    char buf[1024] = "";
    topology_text(t, buf, sizeof buf);
    if (!strstr(buf, "nic count=1 in=1Gbit/s out=1Gbit/s latency=200us message=100us\n"))
        fail_msg("written: %s", buf);
    assert_int_equal(mc_topology_parse(buf, "w.topo", &u), MC_OK);
    assert_true(u->nic_msg_s == 100e-6);
    mc_topology_destroy(u);
    mc_topology_destroy(t);
    t = parse(""); /* absent: none, and not written */
    assert_true(t->nic_msg_s == 0);
    topology_text(t, buf, sizeof buf);
    assert_null(strstr(buf, "message"));
    mc_topology_destroy(t);

    char base[512];
    snprintf(base, sizeof base, "%s", head);
    static const char *const bad[][2] = {
        {"nic count=1 in=1Gbit/s out=1Gbit/s latency=1us message=\n", "expected key=value"},
        {"nic count=1 in=1Gbit/s out=1Gbit/s latency=1us message=-1us\n", "non-negative"},
        {"nic count=1 in=1Gbit/s out=1Gbit/s latency=1us message=1us message=2us\n",
         "duplicate 'message'"},
        {"nic count=1 in=1Gbit/s out=1Gbit/s latency=1us msg=1us\n", "burst, message"},
    };
    expect_bad_topology_lines(base, bad, sizeof bad / sizeof bad[0]);
}

static void test_one_edge(void **state)
{
    (void)state;
    mc_topology_t *plain = parse(""), *t = parse(" message=100us");
    mc_plan_stats_t a = send(plain, "1", "1", "send_recv", 262144);
    mc_plan_stats_t b = send(t, "1", "1", "send_recv", 262144);
    assert_int_equal(a.chunks, 16);
    assert_int_equal(b.chunks, 16);
    expect_equal(a.estimate_s, 4 * MIB / NIC_BW + 200e-6, "no message cost");
    expect_equal(b.estimate_s, 4 * MIB / NIC_BW + 16 * 100e-6 + 200e-6, "16 messages of 100 us");
    expect_equal(b.lower_bound_s, a.lower_bound_s, "the bound");
    assert_true(b.lower_bound_s <= b.estimate_s);
    mc_topology_destroy(plain);
    mc_topology_destroy(t);
}

static void test_chunk_formula(void **state)
{
    (void)state;
    mc_topology_t *plain = parse(""), *t = parse(" message=1ms");
    mc_plan_stats_t a = send(plain, "2", "1,2", "broadcast_first", 0);
    mc_plan_stats_t b = send(t, "2", "1,2", "broadcast_first", 0);
    assert_int_equal(a.messages, 2); /* the chain 0 -> 1 -> 2 */
    if (b.chunks >= a.chunks)
        fail_msg("chunks with a 1 ms message cost: %lld, without: %lld", (long long)b.chunks,
                 (long long)a.chunks);
    assert_true(b.estimate_s > a.estimate_s && b.lower_bound_s <= b.estimate_s);
    mc_topology_destroy(plain);
    mc_topology_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_write),
        cmocka_unit_test(test_one_edge),
        cmocka_unit_test(test_chunk_formula),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
