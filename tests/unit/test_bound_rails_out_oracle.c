/* The rails-out term (bound_rails_out.c) against exhaustive optimal schedules (slab_oracle.h)
 * on a rail-optimized pair of hosts: two NICs each, devices 0 and 2 of a host on rail 0, 1 and
 * 3 on rail 1. The 2 x 2 source mesh {0, 1, 2, 3} holds slab 0 on devices 0 and 1 and slab 1 on
 * 2 and 3 (S0), all on host 0; devices 5 and 7 of host 1, both on rail 1, need one slab each
 * (S0). Host 0 alone holds both slabs and they are needed only on rail 1, so what its rail-0
 * NIC carries lands on a device that passes it on (or crosses the spine). Every device that
 * needs a slab has a holder on its rail, so the ingress rails term is 0 here; the test
 * requires the rails-out term to give the bound in some instances, above the host NIC term;
 * devices 2 and 3 (slab 0) and 0 and 1 (slab 1), and 7 (slab 0) and 5 (slab 1), may relay. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"
#include "topology/topology_internal.h"

static int rails_out_decides(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double rate = mc_topology_nic_out(topo) / 2, both = 0;
    for (int64_t i = 0; i < plan->pieces->npieces; i++)
        both += (double)plan->pieces->pieces[i].bytes;
    /* host 0's rail-1 port passes at once, its rail-0 port δ late */
    double r[2] = {rate, rate}, late[2] = {0, fmin(intra.latency, nic.latency)};
    double term = nic.latency + so_staggered(both, r, late, 2);
    double host_nic =
        nic.latency + both / fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    return term >= bound * (1 - 1e-12) && term > host_nic * (1 + 1e-9);
}

static void test_rails_out_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 2, 3}, {5, 7}, 2, rails_out_decides, "S0", "S0", 1, 1};
    so_check(&c, 400, 10, "the rails-out term (above the host NIC term)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rails_out_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
