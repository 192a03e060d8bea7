/* GPU pack/unpack throughput against a device-to-device cudaMemcpy of the same bytes.
 * Boxes: the inner half of every dim of a 2-d and a 3-d tile (strided: rows of the box are
 * runs), for 2- and 4-byte elements; pack gathers the box into contiguous memory and unpack
 * scatters it back (lib/gpu's kernel, the same one the engine uses), each timed with CUDA
 * events over repeats after a warm-up and compared with cudaMemcpyAsync of the box's bytes.
 * The results (device name, GB/s, ratio to memcpy) go to stdout and, with --out DIR, to
 * DIR/<device name>.txt. Exits 77 when no GPU is visible.
 * usage: gpu_pack [MiB per box, default 256] [--repeats N] [--out DIR] */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tests/gpu/gpu_common.h"
#include "exec/strided.h"
#include "gpu/gpu.h"

typedef struct {
    const char *name;
    int ndim;
    int64_t shape[3];
    size_t elem;
} shape_t;

/* ms per repeat of op: 0 pack, 1 unpack, 2 memcpy. */
static float time_op(int op, const mc_strided_t *box, void *flat, void *flat2, int repeats,
                     cudaStream_t st)
{
    cudaEvent_t a, b;
    GPU_CHECK(cudaEventCreate(&a));
    GPU_CHECK(cudaEventCreate(&b));
    mc_strided_t f = {.base = flat, .ndim = 1, .run_bytes = box->bytes, .bytes = box->bytes};
    f.count[0] = box->bytes;
    f.stride[0] = 1;
    for (int i = -1; i < repeats; i++) {
        if (i == 0)
            GPU_CHECK(cudaEventRecord(a, st));
        mc_status_t s = MC_OK;
        if (op == 0)
            s = mc_gpu_copy(&f, 0, box, 0, box->bytes, st);
        else if (op == 1)
            s = mc_gpu_copy(box, 0, &f, 0, box->bytes, st);
        else
            GPU_CHECK(
                cudaMemcpyAsync(flat2, flat, (size_t)box->bytes, cudaMemcpyDeviceToDevice, st));
        if (s) {
            fprintf(stderr, "gpu_pack: %s\n", mc_last_error());
            exit(1);
        }
    }
    GPU_CHECK(cudaEventRecord(b, st));
    GPU_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    GPU_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / (float)repeats;
}

int main(int argc, char **argv)
{
    int64_t mib = 256;
    int repeats = 20;
    const char *out_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_dir = argv[++i];
        else
            mib = atoll(argv[i]);
    }
    if (mib < 1 || repeats < 1) {
        fprintf(stderr, "usage: gpu_pack [MiB] [--repeats N] [--out DIR]\n");
        return 2;
    }
    gpu_require("gpu_pack");
    GPU_CHECK(cudaSetDevice(0));
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t st;
    GPU_CHECK(cudaStreamCreate(&st));
    char report[8192];
    int len = snprintf(report, sizeof report,
                       "# gpu_pack: %s, box of %lld MiB (inner half of each dim of the tile), "
                       "%d repeats\n# case            pack GB/s  unpack GB/s  memcpy GB/s  "
                       "pack/memcpy  unpack/memcpy\n",
                       prop.name, (long long)mib, repeats);
    /* tiles twice the box per dim; the box holds ~mib MiB */
    const shape_t shapes[] = {{"2d-f32", 2, {0, 0, 0}, 4},
                              {"2d-bf16", 2, {0, 0, 0}, 2},
                              {"3d-f32", 3, {0, 0, 0}, 4},
                              {"3d-bf16", 3, {0, 0, 0}, 2}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        shape_t sh = shapes[k];
        int64_t elems = mib * 1048576 / (int64_t)sh.elem;
        mc_box_t tile = {{0}, {0}}, box = {{0}, {0}};
        int64_t inner = sh.ndim == 2 ? 8192 : 1024, rest = elems / inner;
        for (int d = 0; d < sh.ndim; d++) {
            int64_t ext = d == sh.ndim - 1 ? inner
                          : sh.ndim == 2   ? rest
                                           : (d == 0 ? 64 : rest / 64);
            tile.hi[d] = 2 * ext;
            box.lo[d] = ext / 2;
            box.hi[d] = ext / 2 + ext;
        }
        int64_t tile_bytes = (int64_t)sh.elem;
        for (int d = 0; d < sh.ndim; d++)
            tile_bytes *= tile.hi[d];
        void *tile_mem, *flat, *flat2;
        GPU_CHECK(cudaMalloc(&tile_mem, (size_t)tile_bytes));
        mc_strided_t s;
        mc_strided_init(&s, tile_mem, &tile, &box, sh.ndim, sh.elem);
        GPU_CHECK(cudaMalloc(&flat, (size_t)s.bytes));
        GPU_CHECK(cudaMalloc(&flat2, (size_t)s.bytes));
        GPU_CHECK(cudaMemset(tile_mem, 1, (size_t)tile_bytes));
        GPU_CHECK(cudaMemset(flat, 2, (size_t)s.bytes));
        double gb = (double)s.bytes / 1e9;
        float pack = time_op(0, &s, flat, flat2, repeats, st);
        float unpack = time_op(1, &s, flat, flat2, repeats, st);
        float copy = time_op(2, &s, flat, flat2, repeats, st);
        len += snprintf(report + len, sizeof report - (size_t)len,
                        "%-16s %9.1f  %11.1f  %11.1f  %11.2f  %13.2f\n", sh.name, gb / pack * 1e3,
                        gb / unpack * 1e3, gb / copy * 1e3, copy / pack, copy / unpack);
        cudaFree(tile_mem);
        cudaFree(flat);
        cudaFree(flat2);
    }
    cudaStreamDestroy(st);
    fputs(report, stdout);
    if (out_dir) {
        char path[1024], name[256];
        snprintf(name, sizeof name, "%s", prop.name);
        for (char *c = name; *c; c++)
            if (*c == ' ' || *c == '/')
                *c = '_';
        snprintf(path, sizeof path, "%s/%s.txt", out_dir, name);
        FILE *f = fopen(path, "w");
        if (!f || fputs(report, f) < 0 || fclose(f)) {
            fprintf(stderr, "gpu_pack: cannot write %s\n", path);
            return 1;
        }
        printf("written to %s\n", path);
    }
    return 0;
}
