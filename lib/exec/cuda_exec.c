/* Host or CUDA memory for a request (cuda_exec.h). */
#include "exec/cuda_exec.h"
#include <stdlib.h>
#include "exec/combine.h"
#include "util/util.h"
#if MESHCAST_HAVE_CUDA
#include "gpu/gpu.h"
#endif

/* Calls f on each buffer the program uses on this rank (its used tiles); stops at the first
 * error. */
static mc_status_t each_buffer(const mc_program_t *p, const mc_buffer_t *src,
                               const mc_buffer_t *dst,
                               mc_status_t (*f)(const mc_buffer_t *, int is_dst, void *), void *arg)
{
    for (int side = 0; side < 2; side++) {
        const mc_buffer_t *buf = side ? dst : src;
        const unsigned char *used = side ? p->dst_used : p->src_used;
        int64_t n = side ? p->dst_mesh_size : p->src_mesh_size;
        for (int64_t i = 0; buf && i < n; i++) {
            mc_status_t s = used[i] && buf[i].ptr ? f(&buf[i], side, arg) : MC_OK;
            if (s)
                return s;
        }
    }
    return MC_OK;
}

typedef struct {
    int host, cuda;
} kinds_t;

static mc_status_t count_kind(const mc_buffer_t *b, int is_dst, void *arg)
{
    (void)is_dst;
    kinds_t *k = arg;
    if (b->memory == MC_MEMORY_CUDA)
        k->cuda++;
    else if (b->memory == MC_MEMORY_HOST)
        k->host++;
    else
        return mc_error(MC_ERR_INVALID, "reshard: unknown memory kind %d", (int)b->memory);
    return MC_OK;
}

#if MESHCAST_HAVE_CUDA
/* The distinct GPUs and caller streams of the buffers (streams of destinations apart). */
typedef struct {
    int gpus[64], ngpus;
    void **streams; /* every buffer's stream, each once */
    int nstreams;
    void **dst_streams;
    int ndst;
} found_t;

static void add_once(void **list, int *n, void *v)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == v)
            return;
    list[(*n)++] = v;
}

static mc_status_t find_gpus(const mc_buffer_t *b, int is_dst, void *arg)
{
    found_t *f = arg;
    int gpu;
    mc_status_t s = mc_gpu_pointer_device(b->ptr, &gpu);
    if (s)
        return s;
    int seen = 0;
    for (int i = 0; i < f->ngpus; i++)
        seen |= f->gpus[i] == gpu;
    if (!seen && f->ngpus < 64)
        f->gpus[f->ngpus++] = gpu;
    add_once(f->streams, &f->nstreams, b->stream);
    if (is_dst)
        add_once(f->dst_streams, &f->ndst, b->stream);
    return MC_OK;
}
#endif

#if MESHCAST_HAVE_CUDA
/* Steps, allocations and releases run on x's GPU whichever thread calls them. */
static mc_status_t on_gpu(const mc_cuda_exec_t *x)
{
    return mc_gpu_use(x->gpu, NULL, 0);
}
#endif

mc_status_t mc_cuda_exec_begin(mc_cuda_exec_t *x, const mc_program_t *p, const mc_buffer_t *src,
                               const mc_buffer_t *dst, int ranks, mc_transport_kind_t kind)
{
    kinds_t k = {0, 0};
    mc_status_t s = each_buffer(p, src, dst, count_kind, &k);
    if (s || !k.cuda)
        return s;
    if (k.host)
        return mc_error(MC_ERR_UNSUPPORTED,
                        "reshard: host and CUDA buffers mixed in one reshard (use one kind)");
#if MESHCAST_HAVE_CUDA
    if (ranks > 1 && kind != MC_TRANSPORT_LOCAL)
        return mc_error(MC_ERR_UNSUPPORTED,
                        "reshard: CUDA buffers need the local transport (one process) here");
    /* at most two entries per op side: a generous bound for the distinct streams */
    int64_t cap = 2 * p->nops + p->ninputs + 1;
    found_t f = {.ngpus = 0};
    f.streams = mc_calloc((size_t)cap, sizeof *f.streams);
    x->dst_streams = mc_calloc((size_t)cap, sizeof *x->dst_streams);
    f.dst_streams = x->dst_streams;
    if (!f.streams || !x->dst_streams) {
        free(f.streams);
        return MC_ERR_NOMEM;
    }
    s = each_buffer(p, src, dst, find_gpus, &f);
    if (!s)
        s = mc_gpu_use(f.gpus[0], f.gpus, f.ngpus);
    if (!s)
        s = mc_gpu_stream_begin(f.streams, f.nstreams, &x->stream);
    free(f.streams);
    x->ndst_streams = f.ndst;
    if (s)
        return mc_error_context(s, "reshard with CUDA buffers");
    x->on = 1;
    x->sync = ranks > 1;
    x->gpu = f.gpus[0];
    return MC_OK;
#else
    (void)x, (void)ranks, (void)kind;
    return mc_error(MC_ERR_UNSUPPORTED,
                    "reshard: CUDA buffers, but this build has no CUDA (nvcc was not found)");
#endif
}

mc_status_t mc_cuda_exec_end(mc_cuda_exec_t *x)
{
#if MESHCAST_HAVE_CUDA
    if (x->on && !x->done)
        return mc_gpu_stream_end(x->stream, x->dst_streams, x->ndst_streams, &x->done);
#else
    (void)x;
#endif
    return MC_OK;
}

mc_status_t mc_cuda_exec_test(mc_cuda_exec_t *x, int wait)
{
#if MESHCAST_HAVE_CUDA
    if (x->on && x->done)
        return wait ? mc_gpu_event_wait(x->done) : mc_gpu_event_test(x->done);
#else
    (void)x, (void)wait;
#endif
    return MC_OK;
}

void mc_cuda_exec_free(mc_cuda_exec_t *x)
{
#if MESHCAST_HAVE_CUDA
    if (x->on)
        mc_gpu_stream_free(x->stream, x->done);
#endif
    free(x->dst_streams);
    x->dst_streams = NULL;
    x->on = 0;
}

mc_status_t mc_cuda_exec_ready(mc_cuda_exec_t *x)
{
#if MESHCAST_HAVE_CUDA
    if (x->on && x->sync)
        return mc_gpu_stream_wait(x->stream);
#else
    (void)x;
#endif
    return MC_OK;
}

mc_status_t mc_cuda_exec_alloc(mc_cuda_exec_t *x, size_t bytes, void **out)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        mc_status_t s = on_gpu(x);
        return s ? s : mc_gpu_alloc(bytes, x->stream, out);
    }
#endif
    (void)x;
    if (!(*out = malloc(bytes ? bytes : 1)))
        return mc_error(MC_ERR_NOMEM, "out of memory for %zu bytes", bytes);
    return MC_OK;
}

void mc_cuda_exec_release(mc_cuda_exec_t *x, void *ptr)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        if (ptr) {
            (void)on_gpu(x); /* on failure the free below reports nothing either */
            mc_gpu_free(ptr, x->stream);
        }
        return;
    }
#endif
    (void)x;
    free(ptr);
}

#if MESHCAST_HAVE_CUDA
static mc_status_t step_done(mc_cuda_exec_t *x, mc_status_t s)
{
    return !s && x->sync ? mc_gpu_stream_wait(x->stream) : s;
}

/* A contiguous buffer of len bytes as a box. */
static mc_strided_t flat(void *p, int64_t len)
{
    mc_strided_t f = {.base = p, .ndim = 1, .run_bytes = len, .bytes = len};
    f.count[0] = len;
    f.stride[0] = 1;
    return f;
}
#endif

mc_status_t mc_cuda_exec_copy(mc_cuda_exec_t *x, const mc_strided_t *dst, const mc_strided_t *src,
                              int64_t off, int64_t len)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        mc_status_t s = on_gpu(x);
        return step_done(x, s ? s : mc_gpu_copy(dst, off, src, off, len, x->stream));
    }
#endif
    (void)x;
    mc_strided_copy(dst, src, off, len);
    return MC_OK;
}

mc_status_t mc_cuda_exec_pack(mc_cuda_exec_t *x, const mc_strided_t *s, int64_t off, int64_t len,
                              void *out)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        mc_strided_t f = flat(out, len);
        mc_status_t st = on_gpu(x);
        return step_done(x, st ? st : mc_gpu_copy(&f, 0, s, off, len, x->stream));
    }
#endif
    (void)x;
    mc_strided_pack(s, off, len, out);
    return MC_OK;
}

mc_status_t mc_cuda_exec_unpack(mc_cuda_exec_t *x, const mc_strided_t *s, int64_t off, int64_t len,
                                const void *in)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        mc_strided_t f = flat((void *)in, len);
        mc_status_t st = on_gpu(x);
        return step_done(x, st ? st : mc_gpu_copy(s, off, &f, 0, len, x->stream));
    }
#endif
    (void)x;
    mc_strided_unpack(s, off, len, in);
    return MC_OK;
}

mc_status_t mc_cuda_exec_combine(mc_cuda_exec_t *x, mc_dtype_t dtype, mc_reduce_t op, int n,
                                 const mc_strided_t *in, const mc_strided_t *out, int64_t off,
                                 int64_t len)
{
#if MESHCAST_HAVE_CUDA
    if (x->on) {
        mc_status_t s = on_gpu(x);
        return step_done(x, s ? s : mc_gpu_combine(dtype, op, n, in, out, off, len, x->stream));
    }
#endif
    (void)x;
    mc_combine_boxes(dtype, op, n, in, out, off, len);
    return MC_OK;
}
