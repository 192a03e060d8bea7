/* The per-device host-port term (bound_host_ports.c) against exhaustive optimal schedules
 * (slab_oracle.h): a host's three needers need 2, 2 and 1 slabs, which its own devices and
 * the other host both hold, so that the term over the two neediest devices is above the term
 * over each device and over all three when 2·B_intra > B_in. The layout: the 2 x 2 mesh
 * {0, 3, 4, 5} holds the two slabs as S1 (devices 0 and 4 slab 0, 3 and 5 slab 1), the mesh
 * {1, 2, 3} needs them as R (device 3 lacks slab 0 only). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"

/* Whether the term over the two neediest devices (1 and 2: both slabs) gives the bound,
 * above the terms over one device and over all three. */
static int two_devices_decide(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double slab = (double)plan->pieces->pieces[0].bytes;
    double two = mc_bound_paths(4 * slab, 2 * intra.bandwidth, intra.latency, b_in, nic.latency);
    double one = mc_bound_paths(2 * slab, intra.bandwidth, intra.latency, b_in, nic.latency);
    double three = mc_bound_paths(5 * slab, 3 * intra.bandwidth, intra.latency, b_in, nic.latency);
    return two >= bound * (1 - 1e-12) && two > fmax(one, three) * (1 + 1e-9);
}

static void test_host_ports_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 3, 4, 5}, {1, 2, 3}, 3, two_devices_decide, "S1", "R", 0, 0};
    so_check(&c, 150, 10,
             "the term over the two neediest devices (above the one- and three-device terms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_host_ports_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
