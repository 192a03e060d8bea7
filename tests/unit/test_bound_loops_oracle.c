/* The NIC-loop term (bound_loops.c) against exhaustive optimal schedules (slab_oracle.h),
 * relays through any device of the meshes included: each host gathers a slab that only its
 * own devices hold onto one device. The 2 x 2 mesh {0, 1, 4, 5} holds the slabs as S0
 * (devices 0 and 1 slab 0, 4 and 5 slab 1), the mesh {2, 6} needs them as S0 (device 2 slab
 * 0, device 6 slab 1). A slab reaches its needer from a host mate, or leaves the host to a
 * device of the other one and comes back over the NIC: every looped byte enters a NIC twice,
 * which the host-port terms (a device's port plus its host's NIC) do not count, so where the
 * NICs are fast the loop term gives the bound, and the looping plans meet it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"

/* Whether the loop term, computed on its own, is the bound and above the per-device term. */
static int loops_decide(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double slab = (double)plan->pieces->pieces[0].bytes;
    double r[SO_NDEV] = {0};
    r[2] = r[6] = slab; /* each needer's slab: held and needed in its host only */
    double loops = -1;
    assert_int_equal(
        mc_bound_loops(topo, r, r, intra.bandwidth, intra.latency, 2 * b_in, nic.latency, &loops),
        MC_OK);
    assert_true(loops <= bound * (1 + 1e-12));
    double device = mc_bound_paths(slab, intra.bandwidth, intra.latency, b_in, nic.latency);
    return loops >= bound * (1 - 1e-12) && loops > device * (1 + 1e-9);
}

static void test_loops_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 4, 5}, {2, 6}, 2, loops_decide, "S0", "S0", 0, 1};
    so_check(&c, 100, 20, "the loop term (above the per-device term)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_loops_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
