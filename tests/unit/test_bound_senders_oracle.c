/* The senders term (bound_senders.c) against exhaustive optimal schedules (slab_oracle.h),
 * its out-port view first:
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

/* An instance's slab size, rates and latencies, and the senders term there for devices 0-3
 * needing slabs[d] slabs, early[d] those that hold what a mate needs. */
typedef struct {
    double slab, b, a, a_min, b_in, a_nic, senders;
} senders_t;

static senders_t senders_of(const mc_plan_t *plan, const double *slabs, const char *early)
{
    const mc_topology_t *topo = plan->topo;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    senders_t r = {.slab = (double)plan->pieces->pieces[0].bytes,
                   .b = intra.bandwidth,
                   .a = intra.latency,
                   .a_min = fmin(intra.latency, nic.latency),
                   .b_in = fmin(mc_topology_nic_in(topo), mc_topology_nic_out(topo)),
                   .a_nic = nic.latency,
                   .senders = -1};
    double need[SO_NDEV] = {0};
    for (int d = 0; d < 4; d++)
        need[d] = slabs[d] * r.slab;
    assert_int_equal(
        mc_bound_senders(topo, need, early, r.b, r.a, r.a_min, r.b_in, r.a_nic, &r.senders), MC_OK);
    return r;
}

/* Whether the senders term (six slab copies: the out-ports of 0 and 1 from α_intra, of 2 and
 * 3 from α_intra + α_min, the NIC from α_nic) gives the bound, above the in-port terms it
 * tightens (one device, both neediest, all four); it must never exceed the bound. */
static int senders_decide(const mc_plan_t *plan, double bound)
{
    senders_t r = senders_of(plan, (double[]){1, 1, 2, 2}, (char[SO_NDEV]){1, 1});
    double ports = fmax(mc_bound_paths(2 * r.slab, r.b, r.a, r.b_in, r.a_nic),
                        fmax(mc_bound_paths(4 * r.slab, 2 * r.b, r.a, r.b_in, r.a_nic),
                             mc_bound_paths(6 * r.slab, 4 * r.b, r.a, r.b_in, r.a_nic)));
    assert_true(r.senders <= bound * (1 + 1e-12));
    return r.senders >= bound * (1 - 1e-12) && r.senders > ports * (1 + 1e-9);
}

static void test_senders_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 4, 5}, {0, 1, 2, 3}, 4, senders_decide, "S1", "R", 0, 0};
    so_check(&c, 80, 5, "the senders term (above the in-port terms)");
}

/* Whether the in-port view of devices 1-3, which need both slabs (six slab copies into their
 * three in-ports, which only device 0's out-port can feed before α_min, or the NIC), gives the
 * bound, above the view over all four devices (`four` slab copies into the in-ports of 0-3,
 * the out-port view's count too: 0's port from α_intra, 1-3's a hop later) and the in-port
 * terms; the term is the larger view, and it must never exceed the bound. */
static int three_needers_decide(const mc_plan_t *plan, double bound, const double *slabs,
                                double four)
{
    senders_t r = senders_of(plan, slabs, (char[SO_NDEV]){1});
    double three_rate[3] = {r.b, 2 * r.b, r.b_in}, four_rate[3] = {r.b, 3 * r.b, r.b_in},
           start[3] = {r.a, r.a + r.a_min, r.a_nic};
    double three_view = so_staggered(6 * r.slab, three_rate, start, 3),
           four_view = so_staggered(four * r.slab, four_rate, start, 3);
    assert_true(fabs(r.senders - fmax(three_view, four_view)) <= 1e-9 * r.senders);
    double ports = fmax(mc_bound_paths(2 * r.slab, r.b, r.a, r.b_in, r.a_nic),
                        mc_bound_paths(6 * r.slab, 3 * r.b, r.a, r.b_in, r.a_nic));
    assert_true(r.senders <= bound * (1 + 1e-12));
    return r.senders >= bound * (1 - 1e-12) && three_view > fmax(four_view, ports) * (1 + 1e-9);
}

/* The in-port view: host 0's slice of slab 0 lies on device 0 alone, slab 1 only on host 1
 * (devices 4 and 6), and devices 1, 2 and 3 need both; device 0 needs nothing, so the
 * out-port view counts the same six copies. */
static int in_view_decides(const mc_plan_t *plan, double bound)
{
    return three_needers_decide(plan, bound, (double[]){0, 2, 2, 2}, 6);
}

static void test_in_view_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 4, 5, 6}, {1, 2, 3}, 3, in_view_decides, "S1", "R", 0, 0};
    so_check(&c, 80, 5, "the senders term's in-port view (above the out-port view and in-ports)");
}

/* The in-port view over the neediest needers: the same layout, but device 0 needs slab 1
 * too (one slab, over the NIC or from 1-3, which got it). The three that need both slabs
 * cannot use device 0's in-port; seven copies over all four in-ports is the weaker view
 * wherever 0's port could bring more than a slab. */
static int neediest_decide(const mc_plan_t *plan, double bound)
{
    return three_needers_decide(plan, bound, (double[]){1, 2, 2, 2}, 7);
}

static void test_neediest_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 4, 5, 6}, {0, 1, 2, 3}, 4, neediest_decide, "S1", "R", 0, 0};
    so_check(&c, 24, 3, "the in-port view over the neediest (above all four and in-ports)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_senders_below_optimum),
                                       cmocka_unit_test(test_in_view_below_optimum),
                                       cmocka_unit_test(test_neediest_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
