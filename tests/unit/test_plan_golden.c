/* Golden plan-quality cases: for hand-worked reshardings, every strategy's NIC bytes,
 * intra-host bytes and message count, and its estimate within 2% of the hand-computed
 * bottleneck. The random planner tests prove plans correct; these prove them good, so a
 * regression in a sender choice (which holder sends, which host relays) fails here.
 *
 * All cases: 256x256x256 f32 = 64 MiB on p3.8xlarge (4 devices per host, one NIC of
 * 10 Gbit/s = B = 1.25e9 bytes/s each way, 25 us latency, NVLink 100 GB/s, so inside a host
 * meshcast fans out as a star: 100 GB/s / B = 80 >= 4 needers). M = 2^20 bytes.
 * Hosts: devices 0-3 are host 0, 4-7 host 1, 8-11 host 2, 12-15 host 3.
 *
 * A plan's estimate is at least its busiest NIC's bytes / B; the strategies here pipeline
 * in chunks, so they finish within 2% of that (checked: T <= estimate <= 1.02 T). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "plan/plan_internal.h"

#define M ((int64_t)1 << 20)
#define NIC_BW 1.25e9

typedef struct {
    const char *strategy;
    int64_t nic_bytes, intra_bytes, messages;
    double bottleneck_bytes; /* the busiest NIC direction's bytes */
} golden_t;

typedef struct {
    const char *src_mesh, *src_spec, *src_devices, *dst_mesh, *dst_spec, *dst_devices;
    int64_t hosts;
} case_t;

static mc_layout_t *make_layout(const char *mesh_text, const char *devices, const char *spec_text)
{
    const int64_t shape[3] = {256, 256, 256};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    mc_layout_t *layout = NULL;
    if (mc_mesh_parse(mesh_text, devices, 0, &mesh) || mc_spec_parse(spec_text, mesh, 3, &spec) ||
        mc_layout_create(3, shape, MC_DTYPE_F32, mesh, spec, &layout))
        fail_msg("%s %s %s: %s", mesh_text, devices, spec_text, mc_last_error());
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return layout;
}

static void check(const case_t *c, const golden_t *g, int n)
{
    mc_layout_t *src = make_layout(c->src_mesh, c->src_devices, c->src_spec);
    mc_layout_t *dst = make_layout(c->dst_mesh, c->dst_devices, c->dst_spec);
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_load("p3.8xlarge", &topo), MC_OK);
    assert_int_equal(mc_topology_set_hosts(topo, c->hosts), MC_OK);
    for (int i = 0; i < n; i++) {
        mc_plan_params_t p = {MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER, 0, 0, 0, 0};
        mc_plan_t *plan = NULL;
        mc_plan_stats_t st;
        assert_int_equal(mc_strategy_parse(g[i].strategy, &p.strategy, &p.sender), MC_OK);
        if (mc_plan_create(src, dst, topo, &p, &plan))
            fail_msg("%s: %s", g[i].strategy, mc_last_error());
        assert_int_equal(mc_plan_query(plan, &st), MC_OK);
        mc_plan_destroy(plan);
        double t = g[i].bottleneck_bytes / NIC_BW;
        if (!st.valid || st.nic_bytes != g[i].nic_bytes ||
            st.intra_host_bytes != g[i].intra_bytes || st.messages != g[i].messages ||
            st.estimate_s < t || st.estimate_s > 1.02 * t)
            fail_msg("%s %s -> %s %s: %s: nic %lld (want %lld), intra %lld (want %lld), "
                     "messages %lld (want %lld), estimate %.6g s (want %.6g..%.6g)",
                     c->src_spec, c->src_devices, c->dst_spec, c->dst_devices, g[i].strategy,
                     (long long)st.nic_bytes, (long long)g[i].nic_bytes,
                     (long long)st.intra_host_bytes, (long long)g[i].intra_bytes,
                     (long long)st.messages, (long long)g[i].messages, st.estimate_s, t, 1.02 * t);
    }
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
}

/* The case: --src-mesh 2x4 --src-spec S1RR --src-devices 0-7
 *                   --dst-mesh 2x4 --dst-spec RS0R --dst-devices 4-11   (3 hosts)
 * Source: dim 0 in quarters k = 0..3 over the mesh's devices in a host, replicated over its
 * 2 hosts: quarter k is held by devices k (host 0) and 4+k (host 1).
 * Destination: dim 1 in halves over the mesh's 2 hosts: host 1 (devices 4-7) needs half 0,
 * host 2 (devices 8-11) needs half 1, each of its 4 devices all of it.
 * Pieces: (k, h) = quarter k x half h, 8 MiB, held by {k, 4+k}; (k,0) is needed by host 1's
 * devices other than 4+k (which keeps its part by a local copy): 3 needers, and host 1
 * holds it; (k,1) by all 4 devices of host 2, which holds nothing.
 * The bound: host 2 must receive 32 M over its NIC.
 *
 * send_recv: (k,0) from the holder on the needer's own host (4+k): 4 x 3 intra messages
 *   = 96 M; (k,1): 4 x 4 NIC messages = 128 M, all into host 2: 128 M / B.
 *   Regression: a least-loaded holder for every needer (not the local one first) sends
 *   half of the (k,0) copies from host 0 over the NIC: 192 M of NIC bytes (+50%).
 * local_allgather: (k,0) as send_recv (96 M intra, 12 messages); (k,1) to host 2 in 4
 *   stripes of 2 M, one per needer over the NIC (8 M per piece, 32 M in all), each needer
 *   forwarding its stripe to the 3 others (4 x 4 x 3 x 2 M = 96 M); 12 + 4 x (4 + 12) = 76
 *   messages; host 2 receives 32 M: 32 M / B.
 * broadcast_first: a chain from holders[0] = device k (host 0) for every piece: (k,0) k =>
 *   3 needers of host 1 (1 NIC + 2 intra), (k,1) k => 4 needers of host 2 (1 NIC + 3
 *   intra): NIC 8 x 8 M = 64 M, intra 4 x (2 + 3) x 8 M = 160 M, 28 messages; all 64 M
 *   leave host 0: 64 M / B.
 * broadcast_lb_size: pieces in order (0,0), (0,1), (1,0), ...; the sender host is the holder
 *   host with the fewest NIC bytes sent (ties: the first holder, device k): (k,0) goes from
 *   host 0 (tie at 8k M each), (k,1) from host 1 (host 0 is 8 M ahead): same messages and
 *   bytes as first, but each host sends 32 M: 32 M / B.
 * broadcast_lb_order: rounds of host-disjoint broadcasts. A round holds at most two, and
 *   two only as a (k,0) kept inside host 1 (from 4+k: touches host 1 only) plus a (j,1)
 *   from host 0 (hosts 0 and 2); a (k,0) sent from host 0 would touch hosts 0 and 1 and
 *   leave no free holder host for a (j,1). So: NIC 4 x 8 M = 32 M, intra 4 x 3 x 8 M +
 *   4 x 3 x 8 M = 192 M, 28 messages; 32 M into host 2: 32 M / B.
 * meshcast: stripes of each piece, at least one per holder (2) and, tried as well, one
 *   per needer of the widest needing host (4), which wins here. (k,0): 2 stripes from 4+k
 *   to a needer, which fans out to the other 2: 2 x 3 = 6 messages, 24 M intra per piece;
 *   (k,1): 4 stripes of 2 M, each crossing into host 2 once, from the holder host with the
 *   least NIC egress (hosts 0 and 1 alternate), then a star to the other 3 needers: 4 x 4
 *   = 16 messages, 8 M NIC and 24 M intra per piece. Totals: NIC 32 M, intra 192 M,
 *   4 x (6 + 16) = 88 messages; 32 M into host 2: 32 M / B, 1.002 of it simulated. Last,
 *   local_allgather spread (local_allgather's stripes, each (k,1) stripe from the holder
 *   whose NIC is free first, so hosts 0 and 1 alternate stripe by stripe) keeps host 2's
 *   NIC busy from the start and is strictly faster (1.000): local_allgather's bytes and 76
 *   messages. */
static void test_s1rr_to_rs0r_overlapping(void **state)
{
    (void)state;
    const case_t c = {"2x4", "S1RR", "0-7", "2x4", "RS0R", "4-11", 3};
    const golden_t g[] = {
        {"send_recv", 128 * M, 96 * M, 28, 128.0 * M},
        {"local_allgather", 32 * M, 192 * M, 76, 32.0 * M},
        {"broadcast_first", 64 * M, 160 * M, 28, 64.0 * M},
        {"broadcast_lb_size", 64 * M, 160 * M, 28, 32.0 * M},
        {"broadcast_lb_order", 32 * M, 192 * M, 28, 32.0 * M},
        {"meshcast", 32 * M, 192 * M, 76, 32.0 * M},
    };
    check(&c, g, sizeof g / sizeof g[0]);
}

/* Alpa's case 5 shape: --src-mesh 2x4 --src-spec S1RR --src-devices 0-7
 *                      --dst-mesh 2x4 --dst-spec S0RR --dst-devices 8-15   (4 hosts)
 * Pieces: quarter k of dim 0 (16 M), held by {k, 4+k}; quarters 0, 1 are needed by all 4
 * devices of host 2, quarters 2, 3 by host 3. No destination host holds anything; each
 * needs 32 M (bound 32 M / B), and hosts 0 and 1 must share the sending to reach it.
 *
 * send_recv: every needer straight from a holder, the least-loaded one (alternating
 *   k, 4+k): 16 NIC messages of 16 M = 256 M; host 2 receives 128 M: 128 M / B.
 * local_allgather: each piece in 4 stripes of 4 M over the NIC, each from the least-loaded
 *   holder (alternating hosts 0 and 1), each forwarded to the 3 other needers: NIC 64 M,
 *   intra 4 x 4 x 3 x 4 M = 192 M, 4 x 16 = 64 messages; 32 M per host: 32 M / B.
 * broadcast_first: chains from device k (host 0): 1 NIC + 3 intra messages per piece: NIC
 *   64 M, intra 192 M, 16 messages; host 0 sends all 64 M: 64 M / B.
 * broadcast_lb_size, broadcast_lb_order: the same chains, senders alternating between
 *   hosts 0 and 1 by NIC egress (lb_order: a round is one piece to host 2 and one to host
 *   3 from different source hosts): each sends 32 M: 32 M / B.
 * meshcast: 2 stripes per piece, one from each holder host (the least NIC egress), each a
 *   star into its host: 4 x 2 x (1 + 3) = 32 messages, NIC 64 M, intra 192 M; 32 M out of
 *   hosts 0 and 1 and into hosts 2 and 3: 32 M / B, 1.005 of it simulated. (4 stripes per
 *   piece are tried and are no faster; a policy must be strictly faster to replace the
 *   plan.) Last, local_allgather spread: local_allgather's stripes, each from the holder
 *   whose NIC the model sees free first, strictly faster (1.000): local_allgather's bytes
 *   and 64 messages.
 *   Regression: a sender that ignores NIC egress (always host 0) sends 64 M from host 0,
 *   and meshcast falls back to another strategy's plan with other message counts. */
static void test_s1rr_to_s0rr_disjoint(void **state)
{
    (void)state;
    const case_t c = {"2x4", "S1RR", "0-7", "2x4", "S0RR", "8-15", 4};
    const golden_t g[] = {
        {"send_recv", 256 * M, 0, 16, 128.0 * M},
        {"local_allgather", 64 * M, 192 * M, 64, 32.0 * M},
        {"broadcast_first", 64 * M, 192 * M, 16, 64.0 * M},
        {"broadcast_lb_size", 64 * M, 192 * M, 16, 32.0 * M},
        {"broadcast_lb_order", 64 * M, 192 * M, 16, 32.0 * M},
        {"meshcast", 64 * M, 192 * M, 64, 32.0 * M},
    };
    check(&c, g, sizeof g / sizeof g[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s1rr_to_rs0r_overlapping),
        cmocka_unit_test(test_s1rr_to_s0rr_disjoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
