/* Every strategy byte-exact with CUDA buffers: seeded random cases (random_case.h), source
 * tiles filled with the test pattern and copied to the GPU, the plan run with one
 * in-process rank (every op on the request's stream) and with 2-8 ranks as threads (the
 * chunk engine: kernels pack and unpack, the world copies between GPUs), the destination
 * copied back and checked element by element. Logical device d's tiles live on GPU
 * d % MESHCAST_GPUS (CTest runs it with every GPU and with MESHCAST_GPUS=1). Every buffer
 * names the test's stream, and the destination is read back on that stream right after the
 * request completes, so the end event's ordering is exercised. Exits 77 when no GPU is
 * visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../unit/exec_harness.h"
#include "../unit/random_case.h"
#include "gpu_common.h"

#define NCASES 150

static const char *const strategies[] = {"send_recv",          "local_allgather",
                                         "broadcast_first",    "broadcast_lb_size",
                                         "broadcast_lb_order", "meshcast"};
#define NSTRAT 6

static int ngpus, failures;
static cudaStream_t stream;

typedef struct {
    const mc_layout_t *layout;
    int64_t n;
    mc_buffer_t *bufs;
    size_t *bytes;
} tiles_t;

static void tiles_make(tiles_t *t, const mc_layout_t *l, int fill, uint64_t seed)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    t->layout = l;
    t->n = mc_mesh_size(m);
    t->bufs = calloc((size_t)t->n, sizeof *t->bufs);
    t->bytes = calloc((size_t)t->n, sizeof *t->bytes);
    size_t es = mc_dtype_size(mc_layout_dtype(l));
    for (int64_t i = 0; i < t->n; i++) {
        mc_box_t b;
        int64_t dev = mc_mesh_device(m, i);
        mc_layout_tile(l, dev, &b);
        size_t bytes = es;
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= (size_t)(b.hi[d] - b.lo[d]);
        t->bytes[i] = bytes;
        unsigned char *host = malloc(bytes ? bytes : 1);
        if (fill)
            mc_pattern_fill(l, dev, seed, host);
        else
            memset(host, 0xA5, bytes);
        GPU_CHECK(cudaSetDevice((int)(dev % ngpus)));
        GPU_CHECK(cudaMalloc(&t->bufs[i].ptr, bytes ? bytes : 1));
        GPU_CHECK(cudaMemcpy(t->bufs[i].ptr, host, bytes, cudaMemcpyHostToDevice));
        t->bufs[i].memory = MC_MEMORY_CUDA;
        t->bufs[i].stream = stream;
        free(host);
    }
    GPU_CHECK(cudaSetDevice(0));
}

static int64_t tiles_wrong(const tiles_t *t, uint64_t seed)
{
    int64_t total = 0;
    const mc_mesh_t *m = mc_layout_mesh(t->layout);
    for (int64_t i = 0; i < t->n; i++) {
        unsigned char *host = malloc(t->bytes[i] ? t->bytes[i] : 1);
        /* on the caller's stream: ordered after the reshard by its end event */
        GPU_CHECK(
            cudaMemcpyAsync(host, t->bufs[i].ptr, t->bytes[i], cudaMemcpyDeviceToHost, stream));
        GPU_CHECK(cudaStreamSynchronize(stream));
        int64_t w = 0;
        mc_pattern_check(t->layout, mc_mesh_device(m, i), seed, host, &w);
        total += w;
        free(host);
    }
    return total;
}

static void tiles_free(tiles_t *t)
{
    for (int64_t i = 0; i < t->n; i++)
        cudaFree(t->bufs[i].ptr);
    free(t->bufs);
    free(t->bytes);
}

static void run_case(uint64_t seed, int64_t *nruns)
{
    rc_case_t c;
    char err[1024];
    if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err)) {
        fprintf(stderr, "seed %llu: generator: %s\n", (unsigned long long)seed, err);
        failures++;
        return;
    }
    rc_rng_t rng = {seed ^ 0x5eed};
    tiles_t src;
    tiles_make(&src, c.src, 1, seed);
    for (int k = 0; k < NSTRAT; k++) {
        mc_plan_params_t params = {0};
        params.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER;
        mc_strategy_parse(strategies[k], &params.strategy, &params.sender);
        mc_plan_t *plan = NULL;
        if (mc_plan_create(c.src, c.dst, c.topo, &params, &plan)) {
            fprintf(stderr, "seed %llu, %s: plan: %s\n", (unsigned long long)seed, strategies[k],
                    mc_last_error());
            failures++;
            continue;
        }
        int nranks = (int)(seed % 3 == 0 ? 1 : rc_range(&rng, 1, 8));
        int64_t chunk = rc_range(&rng, 0, 2) == 0 ? rc_range(&rng, 1, 64) : 0;
        tiles_t dst;
        tiles_make(&dst, c.dst, 0, seed);
        mc_status_t s = eh_execute(plan, nranks, src.bufs, dst.bufs, chunk, 60, err, sizeof err);
        (*nruns)++;
        int64_t wrong = s ? 0 : tiles_wrong(&dst, seed);
        if (s || wrong) {
            fprintf(stderr, "seed %llu, %s, %d ranks, chunk %lld: %s%lld wrong\n  case: %s\n",
                    (unsigned long long)seed, strategies[k], nranks, (long long)chunk, s ? err : "",
                    (long long)wrong, c.desc);
            failures++;
        }
        tiles_free(&dst);
        mc_plan_destroy(plan);
    }
    tiles_free(&src);
    rc_case_free(&c);
}

int main(void)
{
    ngpus = gpu_require("test_gpu_reshard");
    GPU_CHECK(cudaSetDevice(0));
    GPU_CHECK(cudaStreamCreate(&stream));
    int64_t nruns = 0;
    rc_rng_t r = {0x6a7u};
    for (int i = 0; i < NCASES && failures < 10; i++)
        run_case(rc_next(&r), &nruns);
    GPU_CHECK(cudaStreamDestroy(stream));
    printf("test_gpu_reshard: %lld runs on %d GPU(s), %d failures\n", (long long)nruns, ngpus,
           failures);
    return failures ? 1 : 0;
}
