/* Plan and execute a resharding in one process, then check every destination element.
 * A [256, 512] f32 tensor moves from a 2x4 mesh sharded S0R (devices 0-7, rows split over
 * the mesh's first axis) to a 4x2 mesh sharded RS0 (devices 8-15, columns split over its
 * first axis) on p3.8xlarge (4 devices per host, so 4 hosts). The default communicator is
 * one in-process rank owning every device; its worker pool does the copies.
 * Exits non-zero, printing mc_last_error(), if anything fails or any element is wrong. */
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

#define SEED 42 /* the test pattern's seed: fill and check must agree */

static mc_layout_t *make_layout(const char *mesh_shape, int64_t first_device, const char *spec)
{
    const int64_t shape[2] = {256, 512};
    mc_mesh_t *mesh;
    mc_spec_t *sp;
    mc_layout_t *layout;
    CHECK(mc_mesh_parse(mesh_shape, NULL, first_device, &mesh));
    CHECK(mc_spec_parse(spec, mesh, 2, &sp));
    CHECK(mc_layout_create(2, shape, MC_DTYPE_F32, mesh, sp, &layout));
    mc_spec_destroy(sp); /* the layout keeps its own copies */
    mc_mesh_destroy(mesh);
    return layout;
}

/* One dense tile per device of the layout's mesh, in mesh (row-major) order: the box
 * mc_layout_tile gives, row-major. Sources get the test pattern, destinations zeros. */
static mc_buffer_t *make_tiles(const mc_layout_t *l, int fill)
{
    const mc_mesh_t *mesh = mc_layout_mesh(l);
    int64_t n = mc_mesh_size(mesh);
    mc_buffer_t *tiles = calloc((size_t)n, sizeof *tiles);
    if (!tiles)
        exit(1);
    for (int64_t i = 0; i < n; i++) {
        int64_t dev = mc_mesh_device(mesh, i);
        mc_box_t box;
        CHECK(mc_layout_tile(l, dev, &box));
        size_t bytes = mc_dtype_size(mc_layout_dtype(l));
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= (size_t)(box.hi[d] - box.lo[d]);
        tiles[i].ptr = calloc(bytes ? bytes : 1, 1);
        tiles[i].memory = MC_MEMORY_HOST;
        if (!tiles[i].ptr)
            exit(1);
        if (fill)
            CHECK(mc_pattern_fill(l, dev, SEED, tiles[i].ptr));
    }
    return tiles;
}

/* Counts destination elements that differ from the source pattern. */
static int64_t count_wrong(const mc_layout_t *l, const mc_buffer_t *tiles)
{
    const mc_mesh_t *mesh = mc_layout_mesh(l);
    int64_t wrong = 0;
    for (int64_t i = 0; i < mc_mesh_size(mesh); i++) {
        int64_t w;
        CHECK(mc_pattern_check(l, mc_mesh_device(mesh, i), SEED, tiles[i].ptr, &w));
        wrong += w;
    }
    return wrong;
}

static void free_tiles(const mc_layout_t *l, mc_buffer_t *tiles)
{
    for (int64_t i = 0; i < mc_mesh_size(mc_layout_mesh(l)); i++)
        free(tiles[i].ptr);
    free(tiles);
}

int main(void)
{
    /* 1. Layouts and cluster. */
    mc_layout_t *src = make_layout("2x4", 0, "S0R");
    mc_layout_t *dst = make_layout("4x2", 8, "RS0");
    mc_topology_t *topo;
    CHECK(mc_topology_load("p3.8xlarge", &topo));
    CHECK(mc_topology_set_hosts(topo, 4));

    /* 2. Plan with the meshcast strategy (the default) and print its statistics. */
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY, .strategy = MC_STRATEGY_MESHCAST};
    mc_plan_t *plan;
    mc_plan_stats_t st;
    CHECK(mc_plan_create(src, dst, topo, &pp, &plan));
    CHECK(mc_plan_query(plan, &st));
    printf("plan: %lld pieces, %lld flows, %lld messages; nic %lld B, intra-host %lld B, "
           "peak staging %lld B\n",
           (long long)st.pieces, (long long)st.flows, (long long)st.messages,
           (long long)st.nic_bytes, (long long)st.intra_host_bytes,
           (long long)st.peak_staging_bytes);
    printf("estimate %.3g s, lower bound %.3g s (estimate/bound %.3f)\n", st.estimate_s,
           st.lower_bound_s, st.estimate_s / st.lower_bound_s);

    /* 3. A communicator: NULL params = one in-process rank owning every device. */
    mc_comm_t *comm;
    CHECK(mc_comm_create(NULL, &comm));
    printf("communicator: transport %s, rank %d of %d\n", mc_comm_transport_name(comm),
           mc_comm_rank(comm), mc_comm_nranks(comm));

    /* 4. Tiles: src[i] / dst[i] belong to the mesh's device at row-major index i. */
    mc_buffer_t *in = make_tiles(src, 1), *out = make_tiles(dst, 0);

    /* 5. Non-blocking: start, poll (other work could go here), then wait and free. */
    mc_request_t *req;
    CHECK(mc_reshard_start(comm, plan, in, out, NULL, &req));
    mc_status_t s;
    long polls = 0;
    while ((s = mc_request_test(req)) == MC_INPROGRESS)
        polls++;
    CHECK(s);
    CHECK(mc_request_wait(req)); /* already complete: returns MC_OK at once */
    mc_request_free(req);
    int64_t wrong = count_wrong(dst, out);
    printf("one reshard: %lld polls, %lld wrong elements\n", (long long)polls, (long long)wrong);

    /* 6. Two reshards in flight on one communicator: the same move into a second set of
     * destination tiles, and the way back (dst layout -> src layout) into fresh source-
     * shaped tiles, reading the tiles step 5 filled. Buffers stay untouched until done. */
    mc_plan_t *back;
    CHECK(mc_plan_create(dst, src, topo, &pp, &back));
    mc_buffer_t *out2 = make_tiles(dst, 0), *in2 = make_tiles(src, 0);
    mc_request_t *r1, *r2;
    CHECK(mc_reshard_start(comm, plan, in, out2, NULL, &r1));
    CHECK(mc_reshard_start(comm, back, out, in2, NULL, &r2));
    CHECK(mc_request_wait(r2)); /* any order */
    CHECK(mc_request_wait(r1));
    mc_request_free(r1);
    mc_request_free(r2);
    int64_t wrong2 = count_wrong(dst, out2) + count_wrong(src, in2);
    printf("two in flight: %lld wrong elements\n", (long long)wrong2);

    /* 7. Clean up: requests before the communicator, the communicator before buffers. */
    mc_comm_destroy(comm);
    free_tiles(src, in);
    free_tiles(src, in2);
    free_tiles(dst, out);
    free_tiles(dst, out2);
    mc_plan_destroy(plan);
    mc_plan_destroy(back);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    if (wrong || wrong2) {
        fprintf(stderr, "reshard_basic: %lld elements wrong\n", (long long)(wrong + wrong2));
        return 1;
    }
    return 0;
}
