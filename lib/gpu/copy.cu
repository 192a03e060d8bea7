// Strided N-d box copy on the GPU: pack, unpack and box-to-box copy are one kernel, since a
// contiguous side is just a box of one merged dim. Each thread moves one word of the widest
// size (1-16 bytes) that divides every run, stride, base and the range, so a word never
// straddles two runs; box_index.h maps the word's byte offset to an address on each side.
#include <cuda_runtime.h>
#include <stdint.h>
#include "gpu/cuda_error.h"
#include "gpu/gpu.h"

namespace
{

template <typename W>
__global__ void copy_words(mc_strided_t dst, int64_t doff, mc_strided_t src, int64_t soff,
                           int64_t nwords)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += step) {
        int64_t b = i * (int64_t)sizeof(W);
        *(W *)(dst.base + mc_box_offset(&dst, doff + b)) =
            *(const W *)(src.base + mc_box_offset(&src, soff + b));
    }
}

// The largest power of two <= 16 dividing v (v == 0 divides by anything).
int64_t align_of(int64_t v)
{
    int64_t a = 16;
    while (a > 1 && v % a)
        a /= 2;
    return a;
}

int64_t min3(int64_t a, int64_t b, int64_t c)
{
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

int64_t word_size(const mc_strided_t *d, int64_t doff, const mc_strided_t *s, int64_t soff,
                  int64_t len)
{
    int64_t w = min3(align_of(doff), align_of(soff), align_of(len));
    const mc_strided_t *sides[2] = {d, s};
    for (const mc_strided_t *x : sides) {
        int64_t a = align_of((int64_t)(uintptr_t)x->base);
        for (int i = 0; i < x->ndim; i++) {
            int64_t c = align_of(i == x->ndim - 1 ? x->count[i] : x->stride[i]);
            a = c < a ? c : a;
        }
        w = a < w ? a : w;
    }
    return w;
}

template <typename W>
cudaError_t launch(const mc_strided_t *d, int64_t doff, const mc_strided_t *s, int64_t soff,
                   int64_t len, cudaStream_t st)
{
    int64_t n = len / (int64_t)sizeof(W);
    int64_t blocks = (n + 255) / 256;
    blocks = blocks > 65535 ? 65535 : blocks < 1 ? 1 : blocks;
    copy_words<W><<<(unsigned)blocks, 256, 0, st>>>(*d, doff, *s, soff, n);
    return cudaGetLastError();
}

} // namespace

extern "C" mc_status_t mc_gpu_copy(const mc_strided_t *dst, int64_t doff, const mc_strided_t *src,
                                   int64_t soff, int64_t len, void *stream)
{
    if (len == 0)
        return MC_OK;
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t e;
    if (dst->ndim == 1 && src->ndim == 1) { // both contiguous: the copy engine
        e = cudaMemcpyAsync(dst->base + doff, src->base + soff, (size_t)len, cudaMemcpyDefault, st);
    } else {
        switch (word_size(dst, doff, src, soff, len)) {
        case 16:
            e = launch<uint4>(dst, doff, src, soff, len, st);
            break;
        case 8:
            e = launch<uint64_t>(dst, doff, src, soff, len, st);
            break;
        case 4:
            e = launch<uint32_t>(dst, doff, src, soff, len, st);
            break;
        case 2:
            e = launch<uint16_t>(dst, doff, src, soff, len, st);
            break;
        default:
            e = launch<uint8_t>(dst, doff, src, soff, len, st);
        }
    }
    return mc_cuda_status(e, "strided copy");
}

extern "C" int mc_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); // no driver or no device: clear the sticky-free error
        return 0;
    }
    return n;
}
