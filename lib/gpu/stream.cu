// A reshard's CUDA stream and events: ordered after the caller's streams, completion tested
// with cudaEventQuery (no device-wide synchronisation anywhere), device memory for staging.
#include <cuda_runtime.h>
#include "gpu/cuda_error.h"
#include "gpu/gpu.h"
extern "C" {
#include "util/util.h" // C linkage: a C header without guards
}

extern "C" mc_status_t mc_gpu_pointer_device(const void *ptr, int *gpu)
{
    cudaPointerAttributes a;
    mc_status_t s = mc_cuda_status(cudaPointerGetAttributes(&a, ptr), "cudaPointerGetAttributes");
    if (s)
        return s;
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return mc_error(MC_ERR_INVALID, "cuda: %p is not device memory", ptr);
    *gpu = a.device;
    return MC_OK;
}

extern "C" mc_status_t mc_gpu_use(int gpu, const int *peers, int n)
{
    mc_status_t s = mc_cuda_status(cudaSetDevice(gpu), "cudaSetDevice");
    for (int i = 0; i < n && !s; i++) {
        if (peers[i] == gpu)
            continue;
        int can = 0;
        if ((s = mc_cuda_status(cudaDeviceCanAccessPeer(&can, gpu, peers[i]),
                                "cudaDeviceCanAccessPeer")))
            break;
        if (!can)
            return mc_error(MC_ERR_UNSUPPORTED,
                            "cuda: GPU %d cannot access GPU %d (no peer access)", gpu, peers[i]);
        cudaError_t e = cudaDeviceEnablePeerAccess(peers[i], 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
            e = cudaGetLastError(); // already on: fine (and clears the error)
        s = mc_cuda_status(e, "cudaDeviceEnablePeerAccess");
    }
    return s;
}

// Records an event on the caller's stream `after` (on that stream's own GPU, as CUDA
// requires) and makes st wait for it; the current GPU is left as it was.
static mc_status_t wait_for(cudaStream_t st, cudaStream_t after)
{
    int here = 0, there = 0;
    mc_status_t s = mc_cuda_status(cudaGetDevice(&here), "cudaGetDevice");
    if (!s && after)
        s = mc_cuda_status(cudaStreamGetDevice(after, &there), "cudaStreamGetDevice");
    if (!s && after && there != here)
        s = mc_cuda_status(cudaSetDevice(there), "cudaSetDevice");
    cudaEvent_t ev = nullptr;
    if (!s)
        s = mc_cuda_status(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
                           "cudaEventCreate");
    if (!s)
        s = mc_cuda_status(cudaEventRecord(ev, after), "cudaEventRecord");
    if (!s)
        s = mc_cuda_status(cudaStreamWaitEvent(st, ev, 0), "cudaStreamWaitEvent");
    if (ev)
        cudaEventDestroy(ev); // released once the wait no longer needs it
    if (after && there != here)
        cudaSetDevice(here);
    return s;
}

extern "C" mc_status_t mc_gpu_stream_begin(void *const *after, int n, void **stream)
{
    cudaStream_t st;
    mc_status_t s =
        mc_cuda_status(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
    if (s)
        return s;
    for (int i = 0; i < n && !s; i++)
        s = wait_for(st, (cudaStream_t)after[i]);
    if (s) {
        cudaStreamDestroy(st);
        return s;
    }
    *stream = st;
    return MC_OK;
}

extern "C" mc_status_t mc_gpu_stream_end(void *stream, void *const *then, int n, void **event)
{
    cudaEvent_t ev;
    mc_status_t s =
        mc_cuda_status(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    if (s)
        return s;
    s = mc_cuda_status(cudaEventRecord(ev, (cudaStream_t)stream), "cudaEventRecord");
    for (int i = 0; i < n && !s; i++)
        s = mc_cuda_status(cudaStreamWaitEvent((cudaStream_t)then[i], ev, 0),
                           "cudaStreamWaitEvent");
    if (s) {
        cudaEventDestroy(ev);
        return s;
    }
    *event = ev;
    return MC_OK;
}

extern "C" mc_status_t mc_gpu_event_test(void *event)
{
    cudaError_t e = cudaEventQuery((cudaEvent_t)event);
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return MC_INPROGRESS;
    }
    return mc_cuda_status(e, "reshard on the GPU");
}

extern "C" mc_status_t mc_gpu_event_wait(void *event)
{
    return mc_cuda_status(cudaEventSynchronize((cudaEvent_t)event), "reshard on the GPU");
}

extern "C" mc_status_t mc_gpu_stream_wait(void *stream)
{
    return mc_cuda_status(cudaStreamSynchronize((cudaStream_t)stream), "reshard on the GPU");
}

extern "C" void mc_gpu_stream_free(void *stream, void *event)
{
    if (event)
        cudaEventDestroy((cudaEvent_t)event);
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" mc_status_t mc_gpu_alloc(size_t bytes, void *stream, void **out)
{
    return mc_cuda_status(cudaMallocAsync(out, bytes ? bytes : 1, (cudaStream_t)stream),
                          "cudaMallocAsync");
}

extern "C" void mc_gpu_free(void *ptr, void *stream)
{
    if (ptr)
        cudaFreeAsync(ptr, (cudaStream_t)stream);
}

extern "C" mc_status_t mc_gpu_memcpy(void *dst, const void *src, size_t n)
{
    return mc_cuda_status(cudaMemcpy(dst, src, n, cudaMemcpyDefault), "cudaMemcpy");
}
