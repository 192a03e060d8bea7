/* The bound on the meshes' hosts only (bound.c: a host's NIC is fed by the NICs of the other
 * hosts that have a device of either mesh, since a plan's edges join those devices, and one
 * host alone has no NIC traffic) against exhaustive optimal schedules (slab_oracle.h): an
 * all-to-all inside host 0 of a 2-host cluster, which host 1 takes no part in. The 2 x 2 mesh
 * {0, 1, 2, 3} holds the two slabs as S1 (devices 0 and 2 slab 0, 1 and 3 slab 1) and the
 * same devices need both (R), so each device takes the slab it lacks from a host mate. Over
 * the whole cluster the bound let a device's copy come partly over the NIC, from host 0 to a
 * device of host 1 and back, which no valid plan can do (host 1's devices are in neither
 * mesh); on the meshes' one host the bound is the in-ports' (seed 14's g0245 and g0101 of the
 * scale benchmark in small). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slab_oracle.h"

/* Whether the bound on the meshes' host (so_run_instance's) is above the one over both hosts
 * of the cluster (mc_bound_compute on the whole topology), which it tightens. */
static int hosts_decide(const mc_plan_t *plan, double bound)
{
    double cluster = -1;
    assert_int_equal(mc_bound_compute(plan->pieces, plan->topo, &cluster), MC_OK);
    assert_true(cluster <= bound * (1 + 1e-12));
    return bound > cluster * (1 + 1e-9);
}

static void test_hosts_below_optimum(void **state)
{
    (void)state;
    so_case_t c = {{0, 1, 2, 3}, {0, 1, 2, 3}, 4, hosts_decide, "S1", "R", 0, 0};
    so_check(&c, 80, 20, "the meshes' hosts (above the bound over the cluster)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hosts_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
