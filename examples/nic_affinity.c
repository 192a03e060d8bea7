/* NIC affinity: the same reshard on a host whose 2 NICs are pooled and on one where each of
 * its 2 devices owns a NIC (.topo line "nic-affinity map=0,1"). One device sending 64 MiB to
 * the other host gets both NICs when pooled but only its own with the map; two devices
 * sending half each get both NICs either way. Self-checking: exits non-zero otherwise. */
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

static const char *cluster = "hosts 2\n"
                             "devices_per_host 2\n"
                             "link copy  bandwidth=750GB/s latency=2us\n"
                             "link intra bandwidth=300GB/s latency=3us\n"
                             "nic count=2 in=200Gbit/s out=200Gbit/s latency=10us\n";

/* Estimate of moving a 64 MiB f32 vector from the devices first..first+n-1 (host 0) to
 * devices 2..2+n-1 (host 1), sharded over each mesh, with direct sends. */
static double estimate(const mc_topology_t *topo, int64_t n)
{
    const int64_t shape[1] = {16 << 20};
    mc_layout_t *layout[2];
    for (int side = 0; side < 2; side++) {
        char mesh_text[8];
        mc_mesh_t *mesh;
        mc_spec_t *spec;
        snprintf(mesh_text, sizeof mesh_text, "%lld", (long long)n);
        CHECK(mc_mesh_parse(mesh_text, NULL, 2 * side, &mesh));
        CHECK(mc_spec_parse("S0", mesh, 1, &spec));
        CHECK(mc_layout_create(1, shape, MC_DTYPE_F32, mesh, spec, &layout[side]));
        mc_spec_destroy(spec);
        mc_mesh_destroy(mesh);
    }
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = MC_STRATEGY_SEND_RECV};
    mc_plan_t *plan;
    mc_plan_stats_t stats;
    CHECK(mc_plan_create(layout[0], layout[1], topo, &params, &plan));
    CHECK(mc_plan_query(plan, &stats));
    mc_plan_destroy(plan);
    mc_layout_destroy(layout[0]);
    mc_layout_destroy(layout[1]);
    return stats.estimate_s;
}

int main(void)
{
    char text[512];
    mc_topology_t *pooled, *split;
    CHECK(mc_topology_parse(cluster, "pooled", &pooled));
    snprintf(text, sizeof text, "%snic-affinity map=0,1\n", cluster);
    CHECK(mc_topology_parse(text, "split", &split));
    int nic;
    CHECK(mc_topology_nic_of(split, 3, &nic)); /* host 1's second device */
    printf("device 3 sends and receives through NIC %d of host 1\n", nic);

    double one_pooled = estimate(pooled, 1), one_split = estimate(split, 1);
    double two_pooled = estimate(pooled, 2), two_split = estimate(split, 2);
    printf("%-28s %10s %10s\n", "64 MiB host 0 -> host 1", "pooled", "per-NIC");
    printf("%-28s %8.1fus %8.1fus\n", "one sending device", one_pooled * 1e6, one_split * 1e6);
    printf("%-28s %8.1fus %8.1fus\n", "two sending devices", two_pooled * 1e6, two_split * 1e6);
    mc_topology_destroy(pooled);
    mc_topology_destroy(split);
    /* one device alone: half the NIC rate with the map; two: the same as pooled */
    int ok = one_split > 1.9 * one_pooled && two_split < 1.01 * two_pooled;
    return ok ? 0 : 1;
}
