// Combining addends of a pending reduction on the GPU: combine.c's rules (accumulator
// types, order, NaN, rounding via half.h) per element, one thread per element, every
// input and the output a strided box (box_index.h).
#include <cuda_runtime.h>
#include <stdint.h>
#include "exec/half.h"
#include "gpu/cuda_error.h"
#include "gpu/gpu.h"
extern "C" {
#include "util/util.h" // C linkage: a C header without guards
}

namespace
{

struct boxes {
    mc_strided_t in[MC_GPU_MAX_ADDENDS];
    mc_strided_t out;
    int n;
};

// NaN wins; otherwise the later value only replaces a strictly smaller (larger) one.
template <typename A> __device__ A pick(bool max, A acc, A y)
{
    if (acc != acc)
        return acc;
    if (y != y)
        return y;
    return (max ? y > acc : y < acc) ? y : acc;
}

template <typename T> __device__ T load(const mc_strided_t &s, int64_t b)
{
    return *(const T *)(s.base + mc_box_offset(&s, b));
}

template <typename T> __device__ void store(const mc_strided_t &s, int64_t b, T v)
{
    *(T *)(s.base + mc_box_offset(&s, b)) = v;
}

// Floats: A accumulates T's values as read by to_acc, from_acc writes the result.
template <typename T, typename A, A (*to_acc)(T), T (*from_acc)(A)>
__global__ void combine_float(boxes bx, mc_reduce_t op, int64_t e0, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    bool add = op == MC_REDUCE_SUM || op == MC_REDUCE_AVG, max = op == MC_REDUCE_MAX;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t b = (e0 + i) * (int64_t)sizeof(T);
        A acc = to_acc(load<T>(bx.in[0], b));
        for (int j = 1; j < bx.n; j++) {
            A y = to_acc(load<T>(bx.in[j], b));
            acc = add ? acc + y : pick(max, acc, y);
        }
        if (op == MC_REDUCE_AVG)
            acc = acc / (A)bx.n;
        store<T>(bx.out, b, from_acc(acc));
    }
}

// Integers and bool: 64-bit accumulators, the sum wrapping (unsigned), avg truncating.
template <typename T>
__global__ void combine_int(boxes bx, mc_reduce_t op, int64_t e0, int64_t n, bool is_bool)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    bool add = op == MC_REDUCE_SUM || op == MC_REDUCE_AVG, max = op == MC_REDUCE_MAX;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t b = (e0 + i) * (int64_t)sizeof(T);
        int64_t acc = (int64_t)load<T>(bx.in[0], b);
        for (int j = 1; j < bx.n; j++) {
            int64_t y = (int64_t)load<T>(bx.in[j], b);
            if (add)
                acc = (int64_t)((uint64_t)acc + (uint64_t)y);
            else if (max ? y > acc : y < acc)
                acc = y;
        }
        uint64_t v = op == MC_REDUCE_AVG ? (uint64_t)(acc / bx.n) : (uint64_t)acc;
        if (is_bool)
            v = v != 0;
        store<T>(bx.out, b, (T)v);
    }
}

__device__ double f64_in(double v)
{
    return v;
}
__device__ float f32_in(float v)
{
    return v;
}
__device__ float f16_in(uint16_t v)
{
    return mc_half_f16_to_f32(v);
}
__device__ uint16_t f16_out(float v)
{
    return mc_half_f32_to_f16(v);
}
__device__ float bf16_in(uint16_t v)
{
    return mc_half_bf16_to_f32(v);
}
__device__ uint16_t bf16_out(float v)
{
    return mc_half_f32_to_bf16(v);
}

unsigned grid(int64_t n)
{
    int64_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 ? 65535 : blocks < 1 ? 1 : blocks);
}

} // namespace

extern "C" mc_status_t mc_gpu_combine(mc_dtype_t dtype, mc_reduce_t op, int n,
                                      const mc_strided_t *in, const mc_strided_t *out, int64_t off,
                                      int64_t len, void *stream)
{
    if (n < 1 || n > MC_GPU_MAX_ADDENDS)
        return mc_error(MC_ERR_UNSUPPORTED, "cuda: combine of %d addends (at most %d on a GPU)", n,
                        MC_GPU_MAX_ADDENDS);
    int64_t size = (int64_t)mc_dtype_size(dtype);
    if (len == 0 || size == 0)
        return MC_OK;
    boxes bx;
    bx.n = n;
    bx.out = *out;
    for (int j = 0; j < n; j++)
        bx.in[j] = in[j];
    int64_t e0 = off / size, m = len / size;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned g = grid(m);
    switch (dtype) {
    case MC_DTYPE_F64:
        combine_float<double, double, f64_in, f64_in><<<g, 256, 0, st>>>(bx, op, e0, m);
        break;
    case MC_DTYPE_F32:
        combine_float<float, float, f32_in, f32_in><<<g, 256, 0, st>>>(bx, op, e0, m);
        break;
    case MC_DTYPE_F16:
        combine_float<uint16_t, float, f16_in, f16_out><<<g, 256, 0, st>>>(bx, op, e0, m);
        break;
    case MC_DTYPE_BF16:
        combine_float<uint16_t, float, bf16_in, bf16_out><<<g, 256, 0, st>>>(bx, op, e0, m);
        break;
    case MC_DTYPE_I64:
        combine_int<int64_t><<<g, 256, 0, st>>>(bx, op, e0, m, false);
        break;
    case MC_DTYPE_I32:
        combine_int<int32_t><<<g, 256, 0, st>>>(bx, op, e0, m, false);
        break;
    case MC_DTYPE_I16:
        combine_int<int16_t><<<g, 256, 0, st>>>(bx, op, e0, m, false);
        break;
    case MC_DTYPE_I8:
        combine_int<int8_t><<<g, 256, 0, st>>>(bx, op, e0, m, false);
        break;
    case MC_DTYPE_U8:
        combine_int<uint8_t><<<g, 256, 0, st>>>(bx, op, e0, m, false);
        break;
    case MC_DTYPE_BOOL:
        combine_int<uint8_t><<<g, 256, 0, st>>>(bx, op, e0, m, true);
        break;
    default:
        return mc_error(MC_ERR_UNSUPPORTED, "cuda: combine of dtype %d", (int)dtype);
    }
    return mc_cuda_status(cudaGetLastError(), "combine kernel");
}
