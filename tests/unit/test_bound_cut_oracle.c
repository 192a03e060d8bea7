/* The device-set term with each port's latency (bound_ports.c) against exhaustive optimal
 * schedules (slab_oracle.h): host 0's devices 1 and 2 need one slab each, which device 0
 * alone holds there (and host 1 holds too), so both slabs leave device 0's out-port (α_intra
 * before they arrive) or enter the NIC (α_nic): paths(2 slabs; B_intra, α_intra; B_in,
 * α_nic), where the fluid form charged the smaller latency once and each needer's in-port
 * terms see one slab. The layout: the 2 x 2 mesh {0, 4, 5, 6} holds the tensor replicated
 * (R), the mesh {1, 2} needs it as S0 (a reshard inside hosts whose data other hosts hold
 * too, g0088 of seed 46 of the scale benchmark in small). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"

/* Whether the term gives the bound, above the fluid device-set form, the in-port terms (one
 * needer, both) and the own-host term; it must never exceed the bound. */
static int cut_decides(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double slab = (double)plan->pieces->pieces[0].bytes, b = intra.bandwidth, a = intra.latency;
    double cut = -1;
    assert_int_equal(mc_bound_device_cut(plan->pieces, topo, b, a, b_in, nic.latency, 0, &cut),
                     MC_OK);
    /* the term by its definition: device 0 is the one set that holds anything in host 0 */
    assert_true(fabs(cut - mc_bound_paths(2 * slab, b, a, b_in, nic.latency)) <= 1e-9 * cut);
    assert_true(cut <= bound * (1 + 1e-12));
    double fluid = 2 * slab / (b + b_in) + fmin(a, nic.latency);
    double ports = fmax(mc_bound_paths(slab, b, a, b_in, nic.latency),
                        mc_bound_paths(2 * slab, 2 * b, a, b_in, nic.latency));
    double own = fmin(nic.latency, 2 * slab / b + a);
    return cut >= bound * (1 - 1e-12) && cut > fmax(fluid, fmax(ports, own)) * (1 + 1e-9);
}

static void test_cut_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 4, 5, 6}, {1, 2}, 2, cut_decides, "R", "S0", 0, 0};
    so_check(&c, 150, 10,
             "the device-set term with latencies (above its fluid form, the in-port and "
             "own-host terms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cut_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
