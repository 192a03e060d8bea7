/* The own-NIC term (bound.c, docs/planning.md "Own NIC") against exhaustive optimal schedules
 * (slab_oracle.h) on a rail-optimized pair of hosts: two NICs each, devices 0 and 2 of a host
 * on NIC 0, 1 and 3 on NIC 1. The 2 x 2 source mesh {0, 1, 2, 3} holds slab 0 on devices 0
 * and 1 and slab 1 on 2 and 3 (S0), so both slabs sit on both rails of host 0; devices 5 (NIC
 * 1) and 6 (NIC 0) of host 1 need both (R). Host 1 lacks both slabs, and a NIC edge enters its
 * receiver's own NIC, so each needer takes the two slabs over its own NIC (one port) or over
 * its mate's NIC and then a hop over the host's links (α_intra more). The test requires the
 * term to give the bound in some instances, above the host NIC and device terms it tightens. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"
#include "topology/topology_internal.h"

static int own_nic_decides(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    /* two hosts: host 1 takes at most what host 0's two NICs send; one port half its NICs */
    double host_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double port = fmin(host_in, mc_topology_nic_in(topo) / 2);
    double need = 2 * (double)plan->pieces->pieces[0].bytes;
    double rate[2] = {port, fmin(port, intra.bandwidth)},
           start[2] = {nic.latency, nic.latency + intra.latency};
    double own = so_staggered(need, rate, start, 2);
    double host_nic = nic.latency + need / host_in;
    double device = mc_bound_paths(need, intra.bandwidth, intra.latency, port, nic.latency);
    assert_true(own <= bound * (1 + 1e-9));
    return own >= bound * (1 - 1e-9) && own > fmax(host_nic, device) * (1 + 1e-9);
}

static void test_own_nic_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 2, 3}, {5, 6}, 2, own_nic_decides, "S0", "R", 1, 0};
    so_check(&c, 200, 10, "the own-NIC term (above the host NIC and device terms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_own_nic_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
