/* Consumer of an installed meshcast: parses a spec, builds two layouts, loads a built-in
 * topology and plans between them. Exits 0 and prints "consumer ok" when all checks pass. */
#include <stdio.h>
#include <string.h>
#include <meshcast/meshcast.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "consumer: check failed at line %d: %s (%s)\n", __LINE__, #cond,       \
                    mc_last_error());                                                              \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    int rc = 1;
    mc_mesh_t *src_mesh = NULL, *dst_mesh = NULL;
    mc_spec_t *src_spec = NULL, *dst_spec = NULL;
    mc_layout_t *src = NULL, *dst = NULL;
    mc_topology_t *topo = NULL;
    mc_plan_t *plan = NULL;
    const int64_t shape[2] = {64, 32};
    char text[64];

    CHECK(strcmp(MESHCAST_VERSION_STRING, "") != 0);
    CHECK(mc_mesh_parse("2x2", NULL, 0, &src_mesh) == MC_OK);
    CHECK(mc_mesh_parse("2x2", NULL, 4, &dst_mesh) == MC_OK);
    CHECK(mc_spec_parse("S0R", src_mesh, 2, &src_spec) == MC_OK);
    CHECK(mc_spec_parse("[Replicate(), Shard(1)]", dst_mesh, 2, &dst_spec) == MC_OK);
    CHECK(mc_spec_format(dst_spec, dst_mesh, MC_NOTATION_ALPA, text, sizeof text) == MC_OK);
    CHECK(strcmp(text, "RS1") == 0);
    mc_spec_t *bad = NULL;
    CHECK(mc_spec_parse("S9R", src_mesh, 2, &bad) != MC_OK && bad == NULL);
    CHECK(strlen(mc_last_error()) > 0);

    CHECK(mc_layout_create(2, shape, MC_DTYPE_F32, src_mesh, src_spec, &src) == MC_OK);
    CHECK(mc_layout_create(2, shape, MC_DTYPE_F32, dst_mesh, dst_spec, &dst) == MC_OK);
    CHECK(mc_layout_bytes(src) == 64 * 32 * 4);
    mc_box_t box;
    CHECK(mc_layout_tile(src, 2, &box) == MC_OK);
    CHECK(box.lo[0] == 32 && box.hi[0] == 64 && box.lo[1] == 0 && box.hi[1] == 32);

    CHECK(mc_topology_load("p3.8xlarge", &topo) == MC_OK);
    CHECK(mc_topology_set_hosts(topo, 2) == MC_OK);
    CHECK(mc_topology_devices(topo) == 8);
    CHECK(mc_plan_create(src, dst, topo, NULL, &plan) == MC_OK);
    mc_plan_stats_t stats;
    CHECK(mc_plan_query(plan, &stats) == MC_OK);
    CHECK(stats.valid == 1 && stats.lower_bound_s > 0 && stats.estimate_s >= stats.lower_bound_s);
    printf("consumer ok: meshcast %s, %s -> %s, estimate %.3g s, bound %.3g s\n",
           MESHCAST_VERSION_STRING, "S0R", text, stats.estimate_s, stats.lower_bound_s);
    rc = 0;
out:
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    mc_spec_destroy(src_spec);
    mc_spec_destroy(dst_spec);
    mc_mesh_destroy(src_mesh);
    mc_mesh_destroy(dst_mesh);
    return rc;
}
