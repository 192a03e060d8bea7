/* Where a request's bytes live: host memory, or CUDA device memory moved by lib/gpu's
 * kernels on the request's own stream. The engine (request.c) calls these for every copy,
 * pack, unpack, combine and buffer, so it reads the same for both. In a build without CUDA,
 * CUDA buffers fail at the start with MC_ERR_UNSUPPORTED. */
#ifndef MC_CUDA_EXEC_H
#define MC_CUDA_EXEC_H

#include "exec/program.h"
#include "exec/strided.h"
#include "meshcast/reshard.h"
#include "transport/transport.h"

typedef struct {
    int on;             /* every buffer is CUDA memory */
    int sync;           /* wait for each step (ranks exchange bytes between steps) */
    int gpu;            /* the GPU the stream belongs to (made current for each step, which
                           may run on the progress thread) */
    void *stream;       /* the request's stream (cudaStream_t) */
    void *done;         /* event recorded after the last step (mc_cuda_exec_end) */
    void **dst_streams; /* the caller's streams of destination tiles, each once */
    int ndst_streams;
} mc_cuda_exec_t;

/* Looks at the buffers p uses on this rank: all host (x->on = 0), or all CUDA (x->on = 1:
 * the GPU of the first becomes current, with peer access to the others, and x->stream is
 * ordered after every buffer's stream). Mixing the two, or CUDA buffers in a build without
 * CUDA or over a transport that cannot carry them (kind), fails. sync: see above. */
mc_status_t mc_cuda_exec_begin(mc_cuda_exec_t *x, const mc_program_t *p, const mc_buffer_t *src,
                               const mc_buffer_t *dst, int ranks, mc_transport_kind_t kind);
/* Records x->done and orders the destination streams after it. */
mc_status_t mc_cuda_exec_end(mc_cuda_exec_t *x);
/* MC_OK once x->done's work is done, MC_INPROGRESS before (wait: blocks until then). */
mc_status_t mc_cuda_exec_test(mc_cuda_exec_t *x, int wait);
/* Frees the stream and event (after queueing the release of its memory). */
void mc_cuda_exec_free(mc_cuda_exec_t *x);

/* With sync: waits until the stream got through the caller's work and the allocations, so
 * the transport may read and write the buffers. */
mc_status_t mc_cuda_exec_ready(mc_cuda_exec_t *x);

/* Memory for staging and bounce buffers where the bytes live, and its release (NULL is
 * accepted). */
mc_status_t mc_cuda_exec_alloc(mc_cuda_exec_t *x, size_t bytes, void **out);
void mc_cuda_exec_release(mc_cuda_exec_t *x, void *ptr);

/* strided.h's and combine.h's operations, on the host or queued on the stream (then, with
 * x->sync, waited for). Host operations cannot fail. */
mc_status_t mc_cuda_exec_copy(mc_cuda_exec_t *x, const mc_strided_t *dst, const mc_strided_t *src,
                              int64_t off, int64_t len);
mc_status_t mc_cuda_exec_pack(mc_cuda_exec_t *x, const mc_strided_t *s, int64_t off, int64_t len,
                              void *out);
mc_status_t mc_cuda_exec_unpack(mc_cuda_exec_t *x, const mc_strided_t *s, int64_t off, int64_t len,
                                const void *in);
mc_status_t mc_cuda_exec_combine(mc_cuda_exec_t *x, mc_dtype_t dtype, mc_reduce_t op, int n,
                                 const mc_strided_t *in, const mc_strided_t *out, int64_t off,
                                 int64_t len);

#endif
