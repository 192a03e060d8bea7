// CUDA runtime errors as meshcast errors.
#include "gpu/cuda_error.h"
extern "C" {
#include "util/util.h" // C linkage: a C header without guards
}

mc_status_t mc_cuda_status(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return MC_OK;
    (void)cudaGetLastError();
    mc_status_t s = MC_ERR_IO;
    if (e == cudaErrorMemoryAllocation)
        s = MC_ERR_NOMEM;
    else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        s = MC_ERR_UNSUPPORTED;
    return mc_error(s, "cuda: %s: %s", what, cudaGetErrorString(e));
}
