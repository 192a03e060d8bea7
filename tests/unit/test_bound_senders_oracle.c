/* The senders term (bound_senders.c) against exhaustive optimal schedules (slab_oracle.h):
 * an all-gather inside host 0 whose two slabs lie on one device each there (and on host 1
 * too): devices 0 and 1 need one slab each, 2 and 3 both, so six slab copies leave the
 * out-ports of 0 and 1 from the start, those of 2 and 3 a hop later (they hold nothing), or
 * enter the NIC. The layout: the 2 x 2 mesh {0, 1, 4, 5} holds the two slabs as S1 (devices
 * 0 and 4 slab 0, 1 and 5 slab 1), the mesh {0, 1, 2, 3} needs them as R (g0113 of seed 7 of
 * the scale benchmark in small). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"

/* Whether the senders term (six slab copies: the out-ports of 0 and 1 from α_intra, of 2 and
 * 3 from α_intra + α_min, the NIC from α_nic) gives the bound, above the in-port terms it
 * tightens (one device, both neediest, all four); it must never exceed the bound. */
static int senders_decide(const mc_plan_t *plan, double bound)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo));
    double slab = (double)plan->pieces->pieces[0].bytes, b = intra.bandwidth, a = intra.latency;
    double need[SO_NDEV] = {slab, slab, 2 * slab, 2 * slab};
    char early[SO_NDEV] = {1, 1};
    double senders = -1;
    assert_int_equal(mc_bound_senders(topo, need, early, b, a, fmin(a, nic.latency), b_in,
                                      nic.latency, &senders),
                     MC_OK);
    double ports = fmax(mc_bound_paths(2 * slab, b, a, b_in, nic.latency),
                        fmax(mc_bound_paths(4 * slab, 2 * b, a, b_in, nic.latency),
                             mc_bound_paths(6 * slab, 4 * b, a, b_in, nic.latency)));
    assert_true(senders <= bound * (1 + 1e-12));
    return senders >= bound * (1 - 1e-12) && senders > ports * (1 + 1e-9);
}

static void test_senders_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 4, 5}, {0, 1, 2, 3}, 4, senders_decide};
    so_check(&c, 80, 5, "the senders term (above the in-port terms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_senders_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
