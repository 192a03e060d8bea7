// CUDA runtime errors as meshcast errors (for lib/gpu's .cu files).
#ifndef MC_CUDA_ERROR_H
#define MC_CUDA_ERROR_H

#include <cuda_runtime.h>
#include "meshcast/status.h"

// MC_OK for cudaSuccess; else clears CUDA's last error and sets meshcast's, "cuda: <what>:
// <CUDA's message>": MC_ERR_NOMEM when device memory ran out, MC_ERR_UNSUPPORTED when no
// usable GPU or driver is there, MC_ERR_IO for other device errors.
mc_status_t mc_cuda_status(cudaError_t e, const char *what);

#endif
