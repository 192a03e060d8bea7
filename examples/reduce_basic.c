/* An all-reduce as a reshard: a [1024, 256] bf16 tensor pending a sum over 8 devices
 * ([Partial()]: each device holds one addend) becomes [Replicate()] on the same devices, on
 * p3.8xlarge with 2 hosts of 4 devices. meshcast plans it with host-local pre-combining:
 * each host first combines its addends of a stripe on one of its devices, so one partial per
 * stripe crosses the NIC. The plan's flows are printed: "combine 0{a0+a1+a2+a3+4{a4+...}}"
 * is the combine tree, the order every device combines in. Executed in one process, then
 * checked bit for bit against the addends combined in that order (mc_pattern_check_reduced;
 * bf16 partials are rounded when they cross the NIC). Exits non-zero if anything fails. */
#include <stdio.h>
#include <stdlib.h>
#include "meshcast/meshcast.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        mc_status_t s_ = (call);                                                                   \
        if (s_ != MC_OK) {                                                                         \
            fprintf(stderr, "%s failed (%s): %s\n", #call, mc_status_string(s_), mc_last_error()); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define SEED 7

static mc_layout_t *make_layout(const char *spec)
{
    const int64_t shape[2] = {1024, 256};
    mc_mesh_t *mesh;
    mc_spec_t *sp;
    mc_layout_t *layout;
    CHECK(mc_mesh_parse("8", NULL, 0, &mesh));
    CHECK(mc_spec_parse(spec, mesh, 2, &sp));
    CHECK(mc_layout_create(2, shape, MC_DTYPE_BF16, mesh, sp, &layout));
    mc_spec_destroy(sp);
    mc_mesh_destroy(mesh);
    return layout;
}

/* Dense tiles, one per device; sources get their addend of the test pattern. */
static mc_buffer_t *make_tiles(const mc_layout_t *l, int fill)
{
    const mc_mesh_t *mesh = mc_layout_mesh(l);
    mc_buffer_t *tiles = calloc((size_t)mc_mesh_size(mesh), sizeof *tiles);
    if (!tiles)
        exit(1);
    for (int64_t i = 0; i < mc_mesh_size(mesh); i++) {
        mc_box_t box;
        CHECK(mc_layout_tile(l, mc_mesh_device(mesh, i), &box));
        size_t bytes = mc_dtype_size(mc_layout_dtype(l));
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= (size_t)(box.hi[d] - box.lo[d]);
        tiles[i] = (mc_buffer_t){.ptr = calloc(bytes ? bytes : 1, 1), .memory = MC_MEMORY_HOST};
        if (!tiles[i].ptr)
            exit(1);
        if (fill)
            CHECK(mc_pattern_fill(l, mc_mesh_device(mesh, i), SEED, tiles[i].ptr));
    }
    return tiles;
}

int main(void)
{
    mc_layout_t *src = make_layout("[Partial()]"), *dst = make_layout("[Replicate()]");
    mc_topology_t *topo;
    CHECK(mc_topology_load("p3.8xlarge", &topo));
    CHECK(mc_topology_set_hosts(topo, 2));
    mc_plan_t *plan;
    CHECK(mc_plan_create(src, dst, topo, NULL, &plan)); /* meshcast, the default */
    CHECK(mc_plan_write(plan, MC_FORMAT_TEXT, stdout));

    mc_comm_t *comm;
    CHECK(mc_comm_create(NULL, &comm));
    mc_buffer_t *in = make_tiles(src, 1), *out = make_tiles(dst, 0);
    CHECK(mc_reshard(comm, plan, in, out, NULL));
    int64_t wrong = 0;
    double worst = 0;
    for (int64_t i = 0; i < 8; i++) {
        int64_t w;
        double diff;
        CHECK(mc_pattern_check_reduced(plan, i, SEED, out[i].ptr, &w, &diff));
        wrong += w;
        worst = diff > worst ? diff : worst;
    }
    printf("all-reduce: %lld wrong elements; largest difference from a float64 sum %g\n",
           (long long)wrong, worst);
    for (int64_t i = 0; i < 8; i++) {
        free(in[i].ptr);
        free(out[i].ptr);
    }
    free(in);
    free(out);
    mc_comm_destroy(comm);
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    return wrong != 0;
}
