/* Helpers of the GPU tests and benchmark (header-only): skip when no GPU is visible, and
 * the GPU a logical device's tile goes to (MESHCAST_GPUS). */
#ifndef MC_TEST_GPU_COMMON_H
#define MC_TEST_GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "meshcast/meshcast.h"

/* Exits 77 (CTest: skipped) with a line saying why when no GPU can be used; returns the
 * number of GPUs that logical devices map to otherwise. */
static inline int gpu_require(const char *test)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("%s: skipped: no GPU visible (%s)\n", test,
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(77);
    }
    double want = 0;
    if (mc_setting_number("GPUS", &want)) {
        fprintf(stderr, "%s: %s\n", test, mc_last_error());
        exit(2);
    }
    return want >= 1 && want < n ? (int)want : n;
}

#define GPU_CHECK(call)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
