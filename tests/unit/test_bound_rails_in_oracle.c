/* The rails-in term (bound_rails_in.c) against exhaustive optimal schedules (slab_oracle.h) on
 * a rail-optimized pair of hosts: two NICs each, devices 0 and 2 of a host on rail 0, 1 and 3
 * on rail 1. The 2 x 2 source mesh {0, 2, 4, 6} holds slab 0 on host 0 and slab 1 on host 1
 * (S0), all on rail 0; devices 1 and 5, on rail 1, need both (R). Each needs the other host's
 * slab from no holder on its rail: through its own NIC from a rail-1 device that got the slab
 * a hop before (δ late) or over the spine, or through its host's rail-0 NIC (the holders' rail:
 * at once) and then a hop over the host's links. The meshes' other devices may relay. The test
 * requires the term to give the bound in some instances, above the rails term and the host NIC
 * term. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"
#include "topology/topology_internal.h"

static int rails_in_decides(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo)), rate = b_in / 2;
    /* the needer's own port passes in [δ, T − α_nic] ∪ [0, T − 2 α_nic] (the spine is one NIC
     * latency), its host's rail-0 port in [0, T − α_nic − α_intra]: ramps, the window that
     * closes as a negative one, written again from the derivation */
    double delta = fmin(intra.latency, nic.latency), a = nic.latency;
    double r[4] = {rate, rate, -rate, rate};
    double start[4] = {a + delta, 2 * a, 2 * a + delta, a + intra.latency};
    double term = 0, slab_most = 0;
    for (int64_t i = 0; i < plan->pieces->npieces; i++) {
        double bytes = (double)plan->pieces->pieces[i].bytes;
        slab_most = fmax(slab_most, bytes);
        term = fmax(term, so_staggered(bytes, r, start, 4));
    }
    double rails = nic.latency + delta + slab_most / (2 * b_in);
    double host_nic = nic.latency + slab_most / b_in;
    return term >= bound * (1 - 1e-9) && term > rails * (1 + 1e-9) && term > host_nic * (1 + 1e-9);
}

static void test_rails_in_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 2, 4, 6}, {1, 5}, 2, rails_in_decides, "S0", "R", 1, 1};
    so_check(&c, 120, 10, "the rails-in term (above the rails and host NIC terms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rails_in_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
