/* Running a plan in a test and checking what arrived (header-only: only test_*.c files
 * are compiled). Host tiles of a layout filled with the test pattern or a poison byte; a
 * plan run on one in-process rank (start, then polled with mc_request_test) or on 2..8
 * ranks as threads over an in-process world (mc_reshard on each). Any buffer kind works
 * with eh_execute: the GPU tests bring their own CUDA tiles. */
#ifndef MC_TEST_EXEC_HARNESS_H
#define MC_TEST_EXEC_HARNESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/meshcast.h"

#define EH_MAX_RANKS 8

/* A layout's tiles in host memory, one buffer per mesh position. */
typedef struct {
    const mc_layout_t *layout;
    int64_t n;
    mc_buffer_t *bufs;
} eh_tiles_t;

static inline void eh_fail(const char *what)
{
    fprintf(stderr, "exec_harness: %s: %s\n", what, mc_last_error());
    abort();
}

/* Bytes of device dev's tile of l. */
static inline size_t eh_tile_bytes(const mc_layout_t *l, int64_t dev)
{
    mc_box_t b;
    if (mc_layout_tile(l, dev, &b))
        eh_fail("tile");
    size_t bytes = mc_dtype_size(mc_layout_dtype(l));
    for (int d = 0; d < mc_layout_ndim(l); d++)
        bytes *= (size_t)(b.hi[d] - b.lo[d]);
    return bytes;
}

/* fill: the test pattern of seed (a source); else 0xA5 bytes (a destination), so a byte
 * the plan forgets to write is caught. */
static inline void eh_tiles_make(eh_tiles_t *t, const mc_layout_t *l, int fill, uint64_t seed)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    t->layout = l;
    t->n = mc_mesh_size(m);
    if (!(t->bufs = calloc((size_t)t->n, sizeof *t->bufs)))
        abort();
    for (int64_t i = 0; i < t->n; i++) {
        size_t bytes = eh_tile_bytes(l, mc_mesh_device(m, i));
        if (!(t->bufs[i].ptr = malloc(bytes ? bytes : 1)))
            abort();
        t->bufs[i].memory = MC_MEMORY_HOST;
        if (fill) {
            if (mc_pattern_fill(l, mc_mesh_device(m, i), seed, t->bufs[i].ptr))
                eh_fail("pattern fill");
        } else {
            memset(t->bufs[i].ptr, 0xA5, bytes);
        }
    }
}

/* Elements of every tile that differ from the pattern of seed. */
static inline int64_t eh_tiles_wrong(const eh_tiles_t *t, uint64_t seed)
{
    int64_t total = 0;
    const mc_mesh_t *m = mc_layout_mesh(t->layout);
    for (int64_t i = 0; i < t->n; i++) {
        int64_t w = 0;
        if (mc_pattern_check(t->layout, mc_mesh_device(m, i), seed, t->bufs[i].ptr, &w))
            eh_fail("pattern check");
        total += w;
    }
    return total;
}

static inline void eh_tiles_free(eh_tiles_t *t)
{
    for (int64_t i = 0; i < t->n; i++)
        free(t->bufs[i].ptr);
    free(t->bufs);
}

typedef struct {
    mc_world_t *world;
    int rank;
    const mc_plan_t *plan;
    const mc_buffer_t *src, *dst;
    int64_t chunk;
    double timeout_s;
    mc_status_t status;
    char error[512];
} eh_rank_t;

static inline void *eh_rank_main(void *arg)
{
    eh_rank_t *a = arg;
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_WORLD | MC_COMM_PARAM_TIMEOUT,
                          .world = a->world,
                          .world_rank = a->rank,
                          .timeout_s = a->timeout_s};
    mc_comm_t *comm = NULL;
    mc_reshard_params_t rp = {.field_mask = a->chunk ? MC_RESHARD_PARAM_CHUNK_BYTES : 0,
                              .chunk_bytes = a->chunk};
    a->status = mc_comm_create(&p, &comm);
    if (!a->status)
        a->status = mc_reshard(comm, a->plan, a->src, a->dst, &rp);
    if (a->status)
        snprintf(a->error, sizeof a->error, "%s", mc_last_error());
    mc_comm_destroy(comm);
    return NULL;
}

/* Runs plan on nranks ranks (chunk 0: the default chunk size); on failure err holds the
 * first failing rank's message. */
static inline mc_status_t eh_execute(const mc_plan_t *plan, int nranks, const mc_buffer_t *src,
                                     const mc_buffer_t *dst, int64_t chunk, double timeout_s,
                                     char *err, size_t err_len)
{
    mc_status_t s = MC_OK;
    if (nranks == 1) {
        mc_comm_t *comm = NULL;
        mc_reshard_params_t rp = {.field_mask = chunk ? MC_RESHARD_PARAM_CHUNK_BYTES : 0,
                                  .chunk_bytes = chunk};
        mc_request_t *req = NULL;
        if ((s = mc_comm_create(NULL, &comm)) == MC_OK &&
            (s = mc_reshard_start(comm, plan, src, dst, &rp, &req)) == MC_OK) {
            while ((s = mc_request_test(req)) == MC_INPROGRESS)
                ;
            mc_request_free(req);
        }
        if (s)
            snprintf(err, err_len, "%s", mc_last_error());
        mc_comm_destroy(comm);
        return s;
    }
    if (nranks > EH_MAX_RANKS) {
        snprintf(err, err_len, "%d ranks: the harness runs at most %d", nranks, EH_MAX_RANKS);
        return MC_ERR_INVALID;
    }
    mc_world_t *world = NULL;
    eh_rank_t args[EH_MAX_RANKS];
    pthread_t th[EH_MAX_RANKS];
    if ((s = mc_world_create(nranks, &world)))
        return s;
    for (int r = 0; r < nranks; r++) {
        args[r] = (eh_rank_t){world, r, plan, src, dst, chunk, timeout_s, MC_OK, ""};
        pthread_create(&th[r], NULL, eh_rank_main, &args[r]);
    }
    for (int r = 0; r < nranks; r++) {
        pthread_join(th[r], NULL);
        if (args[r].status && !s) {
            s = args[r].status;
            snprintf(err, err_len, "rank %d: %s", r, args[r].error);
        }
    }
    mc_world_destroy(world);
    return s;
}

/* Runs plan on nranks ranks from pattern tiles of src (seed) into fresh tiles of dst: how many
 * destination elements differ from the pattern, or -1 (err says why) if it failed. */
static inline int64_t eh_run_pattern(const mc_plan_t *plan, const mc_layout_t *src,
                                     const mc_layout_t *dst, int nranks, uint64_t seed, char *err,
                                     size_t err_len)
{
    eh_tiles_t in, out;
    eh_tiles_make(&in, src, 1, seed);
    eh_tiles_make(&out, dst, 0, seed);
    int64_t wrong = eh_execute(plan, nranks, in.bufs, out.bufs, 0, 20, err, err_len)
                        ? -1
                        : eh_tiles_wrong(&out, seed);
    eh_tiles_free(&in);
    eh_tiles_free(&out);
    return wrong;
}

#endif
