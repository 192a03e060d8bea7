/* In-process execution bandwidth against plain memcpy of the same bytes. One rank
 * (mc_comm_create with the local transport: its worker pool of MESHCAST_THREADS threads)
 * executes meshcast plans of large pieces on p3.8xlarge device ids; the bytes moved are
 * every byte the plan writes (nic_bytes + intra_host_bytes + local_bytes of mc_plan_query).
 * Baselines, same bytes, separate buffers: memcpy on one thread, and memcpy cut into equal
 * slices on as many threads as copy in the reshard: the pool's, plus the caller, which
 * runs tasks too while it waits in mc_request_wait. Every buffer is written before timing (no page
 * faults are measured); the three run interleaved, repeat 0 warms up, medians are reported.
 * Destinations are checked element by element against mc_pattern_fill's pattern (outside
 * timing). The strided case (S1R -> RS1) is not a "large pieces" case: it is reported
 * separately and not part of the acceptance ratio.
 * Usage: exec_speed [tensor_MiB] [--repeats N] [--threads N] [--json FILE]
 * (defaults 256, 5, MESHCAST_THREADS) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "meshcast/meshcast.h"
#define BENCH_NAME "exec_speed"
#include "bench_util.h"

#define SEED 0x65786563ULL
#define COLS 4096 /* f32 columns: 16 KiB rows */

typedef struct {
    const char *name, *src_mesh, *src_spec, *dst_mesh, *dst_spec;
    int strided; /* not a large-pieces case */
} case_t;

static const case_t cases[] = {
    {"S1R->S1R", "1x4", "S1R", "1x4", "S1R", 0},     /* 4 contiguous pieces, 1 holder, 1 needer */
    {"S1R->RR", "1x4", "S1R", "1x4", "RR", 0},       /* broadcast-like: every dst needs all */
    {"RR->S1R", "1x4", "RR", "1x4", "S1R", 0},       /* 4 holders per piece */
    {"S01R->S10R", "2x4", "S01R", "2x4", "S10R", 0}, /* 2x4 -> 2x4, 8 pieces permuted */
    {"S1R->RS1", "1x4", "S1R", "1x4", "RS1", 1},     /* strided: 16 KiB rows -> 4 KiB runs */
};
enum { NCASES = sizeof cases / sizeof cases[0] };

typedef struct {
    int64_t bytes, pieces, flows;
    double exec_gbs, memcpy_gbs, memcpy_t_gbs, exec_s;
    int64_t wrong;
} result_t;

/* Allocated and written once, so its pages exist before anything is timed. */
static char *touched(int64_t bytes)
{
    char *p = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!p) {
        fprintf(stderr, "exec_speed: out of memory (%lld bytes)\n", (long long)bytes);
        exit(1);
    }
    memset(p, 0, (size_t)bytes);
    return p;
}

static mc_layout_t *make_layout(int64_t rows, const char *mesh_text, int64_t first,
                                const char *spec_text)
{
    const int64_t shape[2] = {rows, COLS};
    mc_mesh_t *mesh;
    mc_spec_t *spec;
    mc_layout_t *l;
    if (mc_mesh_parse(mesh_text, NULL, first, &mesh) || mc_spec_parse(spec_text, mesh, 2, &spec))
        bench_die("layout");
    if (mc_layout_create(2, shape, MC_DTYPE_F32, mesh, spec, &l))
        bench_die("layout");
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return l;
}

static int64_t tile_bytes(const mc_layout_t *l, int64_t dev)
{
    mc_box_t b;
    if (mc_layout_tile(l, dev, &b))
        bench_die("tile");
    int64_t n = 4;
    for (int d = 0; d < mc_layout_ndim(l); d++)
        n *= b.hi[d] - b.lo[d];
    return n;
}

/* One tile per device of the layout's mesh, written before timing. */
static mc_buffer_t *make_tiles(const mc_layout_t *l, int fill)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    int64_t n = mc_mesh_size(m);
    mc_buffer_t *t = calloc((size_t)n, sizeof *t);
    if (!t)
        exit(1);
    for (int64_t i = 0; i < n; i++) {
        int64_t dev = mc_mesh_device(m, i);
        t[i].ptr = touched(tile_bytes(l, dev));
        t[i].memory = MC_MEMORY_HOST;
        if (fill && mc_pattern_fill(l, dev, SEED, t[i].ptr))
            bench_die("pattern fill");
    }
    return t;
}

static void free_tiles(const mc_layout_t *l, mc_buffer_t *t)
{
    for (int64_t i = 0; i < mc_mesh_size(mc_layout_mesh(l)); i++)
        free(t[i].ptr);
    free(t);
}

typedef struct {
    char *dst;
    const char *src;
    size_t len;
} slice_t;

static void *copy_slice(void *arg)
{
    slice_t *s = arg;
    memcpy(s->dst, s->src, s->len);
    return NULL;
}

/* memcpy of bytes cut into nthreads equal slices, one per thread (the caller is one). */
static void memcpy_threads(char *dst, const char *src, int64_t bytes, int nthreads)
{
    slice_t sl[256] = {{0}};
    pthread_t th[256];
    int64_t step = (bytes / nthreads + 63) / 64 * 64;
    for (int i = 0; i < nthreads; i++) {
        int64_t off = i * step < bytes ? i * step : bytes;
        int64_t end = off + step < bytes ? off + step : bytes;
        sl[i] = (slice_t){dst + off, src + off, (size_t)(end - off)};
    }
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, copy_slice, &sl[i]))
            exit(1);
    copy_slice(&sl[0]);
    for (int i = 1; i < nthreads; i++)
        pthread_join(th[i], NULL);
}

static void measure(const case_t *c, int64_t rows, int repeats, int threads, mc_comm_t *comm,
                    result_t *res)
{
    int src_n = strcmp(c->src_mesh, "2x4") ? 4 : 8, dst_n = strcmp(c->dst_mesh, "2x4") ? 4 : 8;
    mc_layout_t *src = make_layout(rows, c->src_mesh, 0, c->src_spec);
    mc_layout_t *dst = make_layout(rows, c->dst_mesh, src_n, c->dst_spec);
    mc_topology_t *topo;
    mc_plan_t *plan;
    mc_plan_stats_t st;
    if (mc_topology_load("p3.8xlarge", &topo) ||
        mc_topology_set_hosts(topo, (src_n + dst_n + 3) / 4))
        bench_die("topology");
    if (mc_plan_create(src, dst, topo, NULL, &plan) || mc_plan_query(plan, &st))
        bench_die("plan");
    int64_t bytes = st.nic_bytes + st.intra_host_bytes + st.local_bytes, needed = 0;
    for (int64_t i = 0; i < dst_n; i++)
        needed += tile_bytes(dst, mc_mesh_device(mc_layout_mesh(dst), i));
    if (bytes != needed) /* the destinations are new devices: every tile byte is received */
        fprintf(stderr, "exec_speed: %s: the plan writes %lld bytes, destinations hold %lld\n",
                c->name, (long long)bytes, (long long)needed);

    mc_buffer_t *s = make_tiles(src, 1), *d = make_tiles(dst, 0);
    char *a = touched(bytes), *b = touched(bytes);
    memset(a, 0x5a, (size_t)bytes);

    /* Correctness first, untimed: zeroed destinations, one run, every element checked. */
    if (mc_reshard(comm, plan, s, d, NULL))
        bench_die("reshard");
    res->wrong = 0;
    for (int64_t i = 0; i < dst_n; i++) {
        int64_t w;
        if (mc_pattern_check(dst, mc_mesh_device(mc_layout_mesh(dst), i), SEED, d[i].ptr, &w))
            bench_die("pattern check");
        res->wrong += w;
    }

    double *t = calloc((size_t)(3 * (repeats + 1)), sizeof *t);
    if (!t)
        exit(1);
    for (int r = 0; r <= repeats; r++) { /* repeat 0 warms up */
        double t0 = bench_wall_now();
        if (mc_reshard(comm, plan, s, d, NULL))
            bench_die("reshard");
        double t1 = bench_wall_now();
        memcpy(b, a, (size_t)bytes);
        double t2 = bench_wall_now();
        memcpy_threads(b, a, bytes, threads + 1);
        double t3 = bench_wall_now();
        t[r] = t1 - t0;
        t[repeats + 1 + r] = t2 - t1;
        t[2 * (repeats + 1) + r] = t3 - t2;
    }
    res->bytes = bytes;
    res->pieces = st.pieces;
    res->flows = st.flows;
    res->exec_s = bench_median(t + 1, repeats);
    res->exec_gbs = (double)bytes / res->exec_s / 1e9;
    res->memcpy_gbs = (double)bytes / bench_median(t + repeats + 2, repeats) / 1e9;
    res->memcpy_t_gbs = (double)bytes / bench_median(t + 2 * (repeats + 1) + 1, repeats) / 1e9;
    free(t);
    free(a);
    free(b);
    free_tiles(src, s);
    free_tiles(dst, d);
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
}

static int default_threads(void)
{
    double v = 0;
    if (mc_setting_number("THREADS", &v) == MC_OK && v >= 1)
        return v > 256 ? 256 : (int)v;
    long n = sysconf(_SC_NPROCESSORS_ONLN); /* the library's own default */
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int main(int argc, char **argv)
{
    int64_t mib = 256;
    int repeats = 5, threads = default_threads();
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (argv[i][0] != '-')
            mib = atoll(argv[i]);
        else {
            fprintf(stderr, "usage: exec_speed [tensor_MiB] [--repeats N] [--threads N] "
                            "[--json FILE]\n");
            return 2;
        }
    }
    if (repeats < 1)
        repeats = 1;
    if (mib < 1)
        mib = 1;
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "exec_speed: --threads must be in [1, 256]\n");
        return 2;
    }
    int64_t rows = (mib << 20) / (4 * COLS);
    rows -= rows % 8; /* even shards on every mesh here */
    if (rows < 8)
        rows = 8;
    mc_comm_params_t cp = {.field_mask = MC_COMM_PARAM_THREADS, .threads = threads};
    mc_comm_t *comm;
    if (mc_comm_create(&cp, &comm))
        bench_die("communicator");

    result_t res[NCASES];
    printf("# exec_speed: f32 [%lld, %d] (%lld MiB), transport %s, %d rank, %d pool "
           "threads + the waiting caller; median of %d repeats\n",
           (long long)rows, COLS, (long long)(rows * COLS * 4 >> 20), mc_comm_transport_name(comm),
           mc_comm_nranks(comm), threads, repeats);
    char mt[32], et[32];
    snprintf(mt, sizeof mt, "memcpy_%dt", threads + 1);
    snprintf(et, sizeof et, "exec/%dt", threads + 1);
    printf("%-11s %-7s %6s %12s %10s %10s %10s %11s %8s %9s %7s\n", "case", "kind", "pieces",
           "bytes", "time_s", "exec_GB/s", "memcpy_1t", mt, "exec/1t", et, "#wrong");
    int wrong = 0;
    double worst = 1e9;
    for (int k = 0; k < NCASES; k++) {
        measure(&cases[k], rows, repeats, threads, comm, &res[k]);
        const result_t *r = &res[k];
        printf("%-11s %-7s %6lld %12lld %10.5f %10.2f %10.2f %11.2f %8.2f %9.2f %7lld\n",
               cases[k].name, cases[k].strided ? "strided" : "large", (long long)r->pieces,
               (long long)r->bytes, r->exec_s, r->exec_gbs, r->memcpy_gbs, r->memcpy_t_gbs,
               r->exec_gbs / r->memcpy_gbs, r->exec_gbs / r->memcpy_t_gbs, (long long)r->wrong);
        fflush(stdout);
        wrong |= r->wrong != 0;
        if (!cases[k].strided && r->exec_gbs / r->memcpy_gbs < worst)
            worst = r->exec_gbs / r->memcpy_gbs;
    }
    printf("# large pieces: worst exec/memcpy_1t = %.2f (target >= 0.70)\n", worst);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"tensor_bytes\": %lld, \"threads\": %d, \"repeats\": %d, \"results\": [",
                (long long)(rows * COLS * 4), threads, repeats);
        for (int k = 0; k < NCASES; k++) {
            const result_t *r = &res[k];
            fprintf(f,
                    "%s\n  {\"case\": \"%s\", \"strided\": %d, \"pieces\": %lld, \"bytes\": %lld, "
                    "\"time_s\": %.9g, \"exec_gbs\": %.3f, \"memcpy_gbs\": %.3f, "
                    "\"memcpy_threads_gbs\": %.3f, \"wrong\": %lld}",
                    k ? "," : "", cases[k].name, cases[k].strided, (long long)r->pieces,
                    (long long)r->bytes, r->exec_s, r->exec_gbs, r->memcpy_gbs, r->memcpy_t_gbs,
                    (long long)r->wrong);
        }
        fprintf(f, "\n]}\n");
        fclose(f);
    }
    mc_comm_destroy(comm);
    if (wrong)
        fprintf(stderr, "exec_speed: some destination elements are wrong\n");
    return wrong ? 1 : 0;
}
