/* The rails term (bound_rails.c) against exhaustive optimal schedules (slab_oracle.h) on a
 * rail-optimized pair of hosts: two NICs each, devices 0 and 2 of a host on rail 0, 1 and 3
 * on rail 1. The 2 x 2 source mesh {0, 2, 4, 6} holds slab 0 on host 0 and slab 1 on host 1
 * (S0), all on rail 0; devices 1 and 5, on rail 1, need both (R). Each needs the other host's
 * slab from no holder on its rail: over the spine, or a hop over a host's links first (the
 * sending host's device 5 or 1 of rail 1) or after (the receiving host's needer). Here the
 * rails-in term (bound_rails_in.c), which looks at each port's windows, is above this one
 * wherever this one is above the host NIC term, so the test checks that the code's term is the
 * formula written again and requires it above the host NIC term in some instances; the bound,
 * at least the term, is never above the optimum (so_check). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"
#include "topology/topology_internal.h"

static int rails_decide(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double slab = (double)plan->pieces->pieces[0].bytes;
    double rails = nic.latency + fmin(intra.latency, nic.latency) + slab / (2 * b_in);
    double host_nic = nic.latency + slab / b_in, bin[2] = {b_in, b_in}, term = 0;
    assert_int_equal(mc_bound_rails(plan->pieces, topo, bin, &term), MC_OK);
    assert_true(fabs(term - rails) <= 1e-9 * rails && term <= bound * (1 + 1e-12));
    return rails > host_nic * (1 + 1e-9);
}

static void test_rails_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 2, 4, 6}, {1, 5}, 2, rails_decide, "S0", "R", 1, 0};
    so_check(&c, 400, 10, "the rails term above the host NIC term");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rails_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
