/* Plan a cross-mesh resharding with every strategy and print how close each comes to the
 * lower bound. Alpa's n-to-m case 3: 2 GiB of int32 from a 2x4 mesh sharded RS0R (devices
 * 0-7, hosts 0-1) to a 2x4 mesh sharded S0RR (devices 8-15, hosts 2-3) on p3.8xlarge.
 * Self-checking: exits non-zero if a plan is invalid or meshcast is not within 5% of the bound. */
#include <stdio.h>
#include <stdlib.h>
#include "meshcast/meshcast.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        mc_status_t s_ = (call);                                                                   \
        if (s_ != MC_OK) {                                                                         \
            fprintf(stderr, "%s failed: %s\n", #call, mc_last_error());                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static mc_layout_t *make_layout(const char *mesh_shape, int64_t first_device, const char *spec_text)
{
    const int64_t shape[3] = {1024, 1024, 512};
    mc_mesh_t *mesh;
    mc_spec_t *spec;
    mc_layout_t *layout;
    CHECK(mc_mesh_parse(mesh_shape, NULL, first_device, &mesh));
    CHECK(mc_spec_parse(spec_text, mesh, 3, &spec));
    CHECK(mc_layout_create(3, shape, MC_DTYPE_I32, mesh, spec, &layout));
    mc_spec_destroy(spec); /* the layout keeps its own copies */
    mc_mesh_destroy(mesh);
    return layout;
}

int main(void)
{
    mc_layout_t *src = make_layout("2x4", 0, "RS0R");
    /* the same spec as S0RR, in PyTorch DTensor notation */
    mc_layout_t *dst = make_layout("2x4", 8, "[Shard(0), Replicate()]");
    mc_topology_t *topo;
    CHECK(mc_topology_load("p3.8xlarge", &topo));
    CHECK(mc_topology_set_hosts(topo, 4));

    const mc_strategy_t strategies[] = {MC_STRATEGY_SEND_RECV, MC_STRATEGY_LOCAL_ALLGATHER,
                                        MC_STRATEGY_BROADCAST, MC_STRATEGY_MESHCAST};
    int failures = 0;
    printf("%-18s %12s %12s %10s %8s\n", "strategy", "nic_bytes", "estimate_s", "bound_s",
           "est/bnd");
    for (size_t i = 0; i < sizeof strategies / sizeof strategies[0]; i++) {
        mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY, .strategy = strategies[i]};
        mc_plan_t *plan;
        mc_plan_stats_t st;
        CHECK(mc_plan_create(src, dst, topo, &params, &plan));
        CHECK(mc_plan_query(plan, &st));
        double ratio = st.estimate_s / st.lower_bound_s;
        printf("%-18s %12lld %12.4f %10.4f %8.3f\n",
               mc_strategy_name(strategies[i], MC_SENDER_LB_SIZE), (long long)st.nic_bytes,
               st.estimate_s, st.lower_bound_s, ratio);
        failures += !st.valid || mc_plan_validate(plan) != MC_OK || ratio < 1.0 - 1e-9;
        if (strategies[i] == MC_STRATEGY_MESHCAST)
            failures += ratio > 1.05;
        mc_plan_destroy(plan);
    }
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    if (failures)
        fprintf(stderr, "plan_basic: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
