/* The CUDA side of execution (lib/gpu, compiled only when nvcc is found): kernels over
 * strided boxes in device memory, and the runtime calls the engine needs. Streams and
 * events are cudaStream_t / cudaEvent_t passed as void *, so C files need no CUDA header.
 * Errors set the last error naming the CUDA call (cuda_error.h). */
#ifndef MC_GPU_H
#define MC_GPU_H

#include <stdint.h>
#include "exec/box_index.h"
#include "meshcast/layout.h"
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most addends one combine kernel folds (they travel as its parameters). */
#define MC_GPU_MAX_ADDENDS 16

/* Bytes [soff, soff+len) of src's box to bytes [doff, doff+len) of dst's box, on stream
 * (queued, not waited for). Pack is a copy to a contiguous dst, unpack one from a
 * contiguous src. Both boxes on the current GPU or reachable from it by peer access. */
mc_status_t mc_gpu_copy(const mc_strided_t *dst, int64_t doff, const mc_strided_t *src,
                        int64_t soff, int64_t len, void *stream);

/* mc_combine_boxes on the GPU, same results bit for bit (combine.h); n <=
 * MC_GPU_MAX_ADDENDS. Queued on stream. */
mc_status_t mc_gpu_combine(mc_dtype_t dtype, mc_reduce_t op, int n, const mc_strided_t *in,
                           const mc_strided_t *out, int64_t off, int64_t len, void *stream);

/* Visible GPUs; 0 when none (or no driver). */
int mc_gpu_count(void);

/* The GPU that owns device memory at ptr (MC_ERR_INVALID when ptr is not device memory). */
mc_status_t mc_gpu_pointer_device(const void *ptr, int *gpu);
/* Makes gpu current and lets it reach every GPU in peers[0..n) (peer access). */
mc_status_t mc_gpu_use(int gpu, const int *peers, int n);

/* A reshard's own stream on the current GPU, ordered after the work queued so far on each
 * of the caller's streams (an event recorded on each, waited for by this stream). */
mc_status_t mc_gpu_stream_begin(void *const *after, int n, void **stream);
/* Records the end of stream's work so far in *event and makes each of the streams in
 * then[0..n) wait for it (the destination is safe to use on them). */
mc_status_t mc_gpu_stream_end(void *stream, void *const *then, int n, void **event);
/* MC_OK once event's work is done, MC_INPROGRESS before; never blocks. */
mc_status_t mc_gpu_event_test(void *event);
/* Blocks until event's work (or, for mc_gpu_stream_wait, stream's) is done. */
mc_status_t mc_gpu_event_wait(void *event);
mc_status_t mc_gpu_stream_wait(void *stream);
/* Either may be NULL. */
void mc_gpu_stream_free(void *stream, void *event);

/* Device memory on the current GPU, ordered on stream (cudaMallocAsync: neither call
 * synchronises the device), and its release (NULL is accepted). */
mc_status_t mc_gpu_alloc(size_t bytes, void *stream, void **out);
void mc_gpu_free(void *ptr, void *stream);
/* Blocking copy of n bytes between any two addresses (device or host). */
mc_status_t mc_gpu_memcpy(void *dst, const void *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
