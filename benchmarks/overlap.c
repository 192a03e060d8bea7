/* Overlap of a reshard with compute, on 2 ranks (one per emulated host: docs/testbed.md).
 * C: the reshard alone (host 0's 4 devices to host 1's, every byte through the NIC). The
 * compute: K tiles of a 256x256 sgemm (OpenBLAS, one thread), K chosen so that they take
 * about 1.5 C. Then the reshard is started, the K tiles run, and the request is waited
 * for: hidden = 1 - wait / C, slowdown = compute time with the reshard in flight / alone,
 * in wall time and in the compute thread's CPU time (which other processes' load on a
 * shared machine does not inflate; in caller mode it includes the mc_request_test calls).
 * The progress mode is the communicator's default (MESHCAST_PROGRESS); with caller, the
 * application calls mc_request_test after every tile, as docs/execution.md says to. Medians
 * of the repeats; every destination is checked after each reshard.
 * Usage (testbed launch --ranks 2 -- overlap [MiB] [repeats]): defaults 16 and 5. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "meshcast/meshcast.h"
#define BENCH_NAME "overlap"
#include "bench_util.h"

#define TILE 256
#define SEED 0x6f7665ULL

void openblas_set_num_threads(int n); /* OpenBLAS's, not in every cblas.h */

typedef struct {
    mc_comm_t *comm;
    mc_layout_t *src, *dst;
    mc_plan_t *plan;
    mc_buffer_t sbuf[4], dbuf[4];
    float *a, *b, *c; /* one sgemm tile */
    int caller;       /* MESHCAST_PROGRESS=caller: test between tiles */
    int64_t wrong;
} bench_t;

static size_t tile_bytes(const mc_layout_t *l, int64_t device)
{
    mc_box_t b;
    if (mc_layout_tile(l, device, &b))
        bench_die("tile");
    return (size_t)((b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1])) * sizeof(float);
}

static void tile(bench_t *bt)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, TILE, TILE, TILE, 1.0f, bt->a, TILE,
                bt->b, TILE, 0.5f, bt->c, TILE);
}

static void barrier(bench_t *bt)
{
    if (mc_comm_allgather(bt->comm, NULL, NULL, 0))
        bench_die("barrier");
}

static void check(bench_t *bt)
{
    for (int i = 0; i < 4; i++) {
        int64_t w = 0;
        if (bt->dbuf[i].ptr && mc_pattern_check(bt->dst, mc_mesh_device(mc_layout_mesh(bt->dst), i),
                                                SEED, bt->dbuf[i].ptr, &w))
            bench_die("check");
        bt->wrong += w;
        if (bt->dbuf[i].ptr) /* the next run must write every byte again */
            memset(bt->dbuf[i].ptr, 0, tile_bytes(bt->dst, 4 + i));
    }
}

/* Buffers of the devices this rank owns (host 0's source tiles, host 1's destination). */
static void buffers(bench_t *bt, const mc_topology_t *topo, int rank)
{
    for (int i = 0; i < 4; i++) {
        if (mc_device_owner(topo, 2, i) == rank) {
            bt->sbuf[i].ptr = malloc(tile_bytes(bt->src, i));
            if (!bt->sbuf[i].ptr || mc_pattern_fill(bt->src, i, SEED, bt->sbuf[i].ptr))
                bench_die("source");
        }
        if (mc_device_owner(topo, 2, 4 + i) == rank &&
            !(bt->dbuf[i].ptr = calloc(tile_bytes(bt->dst, 4 + i), 1)))
            bench_die("destination");
    }
}

static void setup(bench_t *bt, int64_t mib)
{
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_TRANSPORT, .transport = MC_TRANSPORT_UCX};
    if (mc_comm_create(&p, &bt->comm))
        bench_die("comm");
    if (mc_comm_nranks(bt->comm) != 2) {
        fprintf(stderr, "overlap: needs 2 ranks, one per host (testbed launch --ranks 2)\n");
        exit(2);
    }
    const char *mode = mc_setting_text("PROGRESS");
    bt->caller = !mode || strcmp(mode, "thread") != 0;
    int64_t shape[2] = {mib * 256, 1024}; /* f32: mib MiB */
    mc_mesh_t *sm, *dm;
    mc_spec_t *ss, *ds;
    mc_topology_t *topo;
    if (mc_mesh_parse("4x1", NULL, 0, &sm) || mc_mesh_parse("4x1", NULL, 4, &dm) ||
        mc_spec_parse("S0R", sm, 2, &ss) || mc_spec_parse("S0R", dm, 2, &ds) ||
        mc_layout_create(2, shape, MC_DTYPE_F32, sm, ss, &bt->src) ||
        mc_layout_create(2, shape, MC_DTYPE_F32, dm, ds, &bt->dst) ||
        mc_topology_load("cpu-testbed", &topo) || mc_topology_set_hosts(topo, 2) ||
        mc_plan_create(bt->src, bt->dst, topo, NULL, &bt->plan))
        bench_die("plan");
    buffers(bt, topo, mc_comm_rank(bt->comm));
    mc_mesh_destroy(sm);
    mc_mesh_destroy(dm);
    mc_spec_destroy(ss);
    mc_spec_destroy(ds);
    mc_topology_destroy(topo);
    bt->a = malloc(sizeof(float) * TILE * TILE);
    bt->b = malloc(sizeof(float) * TILE * TILE);
    bt->c = calloc(TILE * TILE, sizeof(float));
    if (!bt->a || !bt->b || !bt->c)
        bench_die("tiles");
    for (int i = 0; i < TILE * TILE; i++) {
        bt->a[i] = (float)(i % 7) / 7.0f;
        bt->b[i] = (float)(i % 5) / 5.0f;
    }
}

static void teardown(bench_t *bt)
{
    for (int i = 0; i < 4; i++) {
        free(bt->sbuf[i].ptr);
        free(bt->dbuf[i].ptr);
    }
    free(bt->a);
    free(bt->b);
    free(bt->c);
    mc_plan_destroy(bt->plan);
    mc_layout_destroy(bt->src);
    mc_layout_destroy(bt->dst);
    mc_comm_destroy(bt->comm);
}

/* The reshard alone: seconds. */
static double reshard_alone(bench_t *bt)
{
    barrier(bt);
    double t0 = bench_wall_now();
    if (mc_reshard(bt->comm, bt->plan, bt->sbuf, bt->dbuf, NULL))
        bench_die("reshard");
    double t = bench_wall_now() - t0;
    check(bt);
    return t;
}

/* K tiles alone: wall and CPU seconds of this thread. */
static void compute_alone(bench_t *bt, int k, double *wall, double *cpu)
{
    barrier(bt);
    double t0 = bench_wall_now(), c0 = bench_cpu_now();
    for (int i = 0; i < k; i++)
        tile(bt);
    *wall = bench_wall_now() - t0;
    *cpu = bench_cpu_now() - c0;
}

/* K tiles with the reshard in flight: compute wall and CPU seconds, then the wait. */
static void overlapped(bench_t *bt, int k, double *wall, double *cpu, double *wait)
{
    mc_request_t *req;
    barrier(bt);
    double t0 = bench_wall_now(), c0 = bench_cpu_now();
    if (mc_reshard_start(bt->comm, bt->plan, bt->sbuf, bt->dbuf, NULL, &req))
        bench_die("start");
    for (int i = 0; i < k; i++) {
        tile(bt);
        if (bt->caller && mc_request_test(req) < 0)
            bench_die("test");
    }
    double t1 = bench_wall_now();
    *cpu = bench_cpu_now() - c0;
    if (mc_request_wait(req))
        bench_die("wait");
    *wall = t1 - t0;
    *wait = bench_wall_now() - t1;
    mc_request_free(req);
    check(bt);
}

/* The larger of the two ranks' x. */
static double max_over_ranks(bench_t *bt, double x)
{
    double both[2];
    if (mc_comm_allgather(bt->comm, &x, both, sizeof x))
        bench_die("allgather");
    return fmax(both[0], both[1]);
}

enum { C_S, ALONE_S, SLOW_WALL, SLOW_CPU, WAIT_S, HIDDEN, NCOL };

int main(int argc, char **argv)
{
    int64_t mib = argc > 1 ? atoll(argv[1]) : 16;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (mib < 1 || mib > 1024 || repeats < 1 || repeats > 100) {
        fprintf(stderr, "overlap: MiB in [1, 1024], repeats in [1, 100]\n");
        return 2;
    }
    openblas_set_num_threads(1);
    bench_t bt = {0};
    setup(&bt, mib);
    double *col[NCOL], cpu, wall, tile_s = 0;
    for (int j = 0; j < NCOL; j++)
        if (!(col[j] = calloc((size_t)repeats, sizeof(double))))
            bench_die("memory");
    reshard_alone(&bt); /* warm-up: connections, the program cache */
    double c = max_over_ranks(&bt, reshard_alone(&bt));
    compute_alone(&bt, 64, &wall, &cpu);
    tile_s = max_over_ranks(&bt, wall / 64);
    /* K: about 1.5 C of compute on the slower rank, from one trial run */
    int k = (int)ceil(1.5 * c / tile_s);
    compute_alone(&bt, k, &wall, &cpu);
    k = (int)ceil(k * 1.5 * c / max_over_ranks(&bt, wall));
    /* each repeat measures all three in turn, so a load that drifts hits them alike */
    for (int r = 0; r < repeats; r++) {
        double aw, ac, ow, oc, wait;
        col[C_S][r] = reshard_alone(&bt);
        compute_alone(&bt, k, &aw, &ac);
        overlapped(&bt, k, &ow, &oc, &wait);
        col[ALONE_S][r] = aw;
        col[SLOW_WALL][r] = ow / aw;
        col[SLOW_CPU][r] = oc / ac;
        col[WAIT_S][r] = wait;
        col[HIDDEN][r] = 1 - wait / col[C_S][r];
    }
    double row[NCOL], rows[2 * NCOL];
    for (int j = 0; j < NCOL; j++)
        row[j] = bench_median(col[j], repeats);
    if (mc_comm_allgather(bt.comm, row, rows, sizeof row))
        bench_die("allgather");
    int64_t wrong[2];
    if (mc_comm_allgather(bt.comm, &bt.wrong, wrong, sizeof bt.wrong))
        bench_die("allgather");
    if (mc_comm_rank(bt.comm) == 0) {
        printf("# overlap: %lld MiB host 0 -> host 1, progress %s, %d repeats, K = %d tiles of "
               "%dx%d sgemm (%.3f ms each)\n",
               (long long)mib, bt.caller ? "caller (mc_request_test between tiles)" : "thread",
               repeats, k, TILE, TILE, 1e3 * tile_s);
        printf("%-5s %10s %10s %9s %9s %9s %7s %6s\n", "rank", "reshard_s", "compute_s",
               "slow_wall", "slow_cpu", "wait_s", "hidden", "wrong");
        for (int r = 0; r < 2; r++) {
            const double *v = rows + NCOL * r;
            printf("%-5d %10.4f %10.4f %9.3f %9.3f %9.4f %7.3f %6lld\n", r, v[C_S], v[ALONE_S],
                   v[SLOW_WALL], v[SLOW_CPU], v[WAIT_S], v[HIDDEN], (long long)wrong[r]);
        }
    }
    for (int j = 0; j < NCOL; j++)
        free(col[j]);
    teardown(&bt);
    return wrong[0] || wrong[1];
}
