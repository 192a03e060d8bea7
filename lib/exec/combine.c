/* Combining addends (reduction ops) for every dtype. The order of combination is the order
 * of the inputs, so every device that combines the same inputs gets the same bits. */
#include "exec/combine.h"
#include "exec/half.h"
#include <math.h>
#include <string.h>
#include "util/util.h"

mc_status_t mc_combine_check(mc_dtype_t dtype, mc_reduce_t op)
{
    if (op <= MC_REDUCE_NONE || op >= MC_REDUCE_COUNT || !mc_dtype_name(dtype))
        return mc_error(MC_ERR_UNSUPPORTED, "combine: unknown op %d or dtype %d", (int)op,
                        (int)dtype);
    if (dtype == MC_DTYPE_BOOL && op == MC_REDUCE_AVG)
        return mc_error(MC_ERR_UNSUPPORTED, "combine: avg of bool is not defined");
    return MC_OK;
}

/* The conversions are half.h's (shared with the CUDA combine), wrapped so the loops below
 * inline them. */
static inline float f16_to_f32(uint16_t h)
{
    return mc_half_f16_to_f32(h);
}

float mc_f16_to_f32(uint16_t h)
{
    return f16_to_f32(h);
}

static inline uint16_t f32_to_f16(float f)
{
    return mc_half_f32_to_f16(f);
}

uint16_t mc_f32_to_f16(float f)
{
    return f32_to_f16(f);
}

static inline float bf16_to_f32(uint16_t h)
{
    return mc_half_bf16_to_f32(h);
}

float mc_bf16_to_f32(uint16_t h)
{
    return bf16_to_f32(h);
}

static inline uint16_t f32_to_bf16(float f)
{
    return mc_half_f32_to_bf16(f);
}

uint16_t mc_f32_to_bf16(float f)
{
    return f32_to_bf16(f);
}

#define BLOCK 2048 /* elements combined at a time, accumulators on the stack */

/* One block of accumulators: f64 for f64, f32 for f32/f16/bf16; integer sums in the type's
 * own unsigned width (wrap-around), avg in 64 bits; max and min in the type itself. */
typedef union {
    double f64[BLOCK];
    float f32[BLOCK];
    uint64_t u64[BLOCK];
    int64_t i64[BLOCK];
    uint32_t u32[BLOCK];
    int32_t i32[BLOCK];
    uint16_t u16[BLOCK];
    int16_t i16[BLOCK];
    uint8_t u8[BLOCK];
    int8_t i8[BLOCK];
} acc_t;

/* The kernels of one (dtype, op): acc = in, acc = acc op in, out = acc (avg: / n). One
 * plain loop each, no per-element dispatch, so that the compiler vectorizes them. */
typedef struct {
    void (*init)(acc_t *acc, const char *in, int64_t m);
    void (*fold)(acc_t *acc, const char *in, int64_t m);
    void (*finish)(const acc_t *acc, char *out, int64_t m, int n);
} kernels_t;

/* Loads and stores of element i; buffers are aligned to their element size (tiles and
 * staging buffers come from malloc, boxes start at whole elements). */
#define LOADER(NAME, T)                                                                            \
    static inline T ld_##NAME(const char *p, int64_t i)                                            \
    {                                                                                              \
        return ((const T *)(const void *)p)[i];                                                    \
    }                                                                                              \
    static inline void st_##NAME(char *p, int64_t i, T v)                                          \
    {                                                                                              \
        ((T *)(void *)p)[i] = v;                                                                   \
    }
LOADER(f64, double)
LOADER(f32, float)
LOADER(u64, uint64_t)
LOADER(i64, int64_t)
LOADER(u32, uint32_t)
LOADER(i32, int32_t)
LOADER(u16, uint16_t)
LOADER(i16, int16_t)
LOADER(u8, uint8_t)
LOADER(i8, int8_t)

static inline float ld_f16(const char *p, int64_t i)
{
    return f16_to_f32(ld_u16(p, i));
}
static inline float ld_bf16(const char *p, int64_t i)
{
    return bf16_to_f32(ld_u16(p, i));
}
static inline void st_f16(char *p, int64_t i, float v)
{
    st_u16(p, i, f32_to_f16(v));
}
static inline void st_bf16(char *p, int64_t i, float v)
{
    st_u16(p, i, f32_to_bf16(v));
}

/* max and min keep the first of equal values and propagate the first NaN: y replaces x
 * when it is strictly larger (smaller), or NaN while x is not. */
#define SUM(x, y) ((x) + (y))
#define FMAX(x, y) ((y) > (x) || ((y) != (y) && (x) == (x)) ? (y) : (x))
#define FMIN(x, y) ((y) < (x) || ((y) != (y) && (x) == (x)) ? (y) : (x))
#define IMAX(x, y) ((y) > (x) ? (y) : (x))
#define IMIN(x, y) ((y) < (x) ? (y) : (x))
#define ANY(x, y) ((uint8_t)((x) | ((y) != 0)))
#define ALL(x, y) ((uint8_t)((x) & ((y) != 0)))

/* acc.A = LOAD(in) and acc.A = OP(acc.A, LOAD(in)); A is the accumulator's member, C
 * converts a loaded element to it. */
#define INIT_FOLD(NAME, A, TA, LOAD, C, OP)                                                        \
    static void init_##NAME(acc_t *acc, const char *in, int64_t m)                                 \
    {                                                                                              \
        TA *restrict a = acc->A;                                                                   \
        for (int64_t i = 0; i < m; i++)                                                            \
            a[i] = (TA)C(LOAD(in, i));                                                             \
    }                                                                                              \
    static void fold_##NAME(acc_t *acc, const char *in, int64_t m)                                 \
    {                                                                                              \
        TA *restrict a = acc->A;                                                                   \
        for (int64_t i = 0; i < m; i++) {                                                          \
            TA y = (TA)C(LOAD(in, i));                                                             \
            a[i] = (TA)OP(a[i], y);                                                                \
        }                                                                                          \
    }
/* out = STORE(acc.A), or acc.A / n (DIV: the avg) */
#define FINISH(NAME, A, TA, STORE, DIV)                                                            \
    static void finish_##NAME(const acc_t *acc, char *out, int64_t m, int n)                       \
    {                                                                                              \
        const TA *restrict a = acc->A;                                                             \
        (void)n;                                                                                   \
        for (int64_t i = 0; i < m; i++)                                                            \
            STORE(out, i, DIV(a[i], n));                                                           \
    }
#define AS_IS(x) (x)
#define KEEP(v, n) (v)
#define DIV(v, n) ((v) / (n)) /* float / (float)n, double / n, int64 truncated */
/* Sums of narrow integers stay far below 2^53, where a double quotient truncates to the
 * integer one; SIMD has no integer division. */
/* i64: the sum wraps in 64 unsigned bits (as the type's own arithmetic), divided signed */
#define SIGNED_DIV(v, n) ((int64_t)(v) / (n))
#define NARROW_DIV(v, n) ((int32_t)((double)(v) / (double)(n)))
#define TO_BOOL(x) ((uint8_t)((x) != 0))

/* Floats: sum (also avg's accumulation), max, min; finish as is and for avg. */
#define FLOAT_KERNELS(T, A, TA)                                                                    \
    INIT_FOLD(T##_sum, A, TA, ld_##T, AS_IS, SUM)                                                  \
    INIT_FOLD(T##_max, A, TA, ld_##T, AS_IS, FMAX)                                                 \
    INIT_FOLD(T##_min, A, TA, ld_##T, AS_IS, FMIN)                                                 \
    FINISH(T, A, TA, st_##T, KEEP)                                                                 \
    FINISH(T##_avg, A, TA, st_##T, DIV)
FLOAT_KERNELS(f64, f64, double)
FLOAT_KERNELS(f32, f32, float)
FLOAT_KERNELS(f16, f32, float)
FLOAT_KERNELS(bf16, f32, float)

/* Integers: the wrapping sum in the unsigned type U, avg in AVG (i64: 64 unsigned bits, wrapping
 * like its sum; i32, i16: 64 bits; i8, u8: 32 bits, which hold sums of 2^24 addends, the most
 * a plan has (MC_PIECES_MAX_IDS)) truncated toward zero, max and
 * min in the type T itself. */
#define INT_KERNELS(T, TT, U, UT, AVG, TAVG, AVG_DIV)                                              \
    INIT_FOLD(T##_sum, U, UT, ld_##U, AS_IS, SUM)                                                  \
    INIT_FOLD(T##_avg, AVG, TAVG, ld_##T, AS_IS, SUM)                                              \
    INIT_FOLD(T##_max, T, TT, ld_##T, AS_IS, IMAX)                                                 \
    INIT_FOLD(T##_min, T, TT, ld_##T, AS_IS, IMIN)                                                 \
    FINISH(T##_sum, U, UT, st_##U, KEEP)                                                           \
    FINISH(T##_avg, AVG, TAVG, st_##T, AVG_DIV)                                                    \
    FINISH(T, T, TT, st_##T, KEEP)
INT_KERNELS(i64, int64_t, u64, uint64_t, u64, uint64_t, SIGNED_DIV)
INT_KERNELS(i32, int32_t, u32, uint32_t, i64, int64_t, NARROW_DIV)
INT_KERNELS(i16, int16_t, u16, uint16_t, i64, int64_t, NARROW_DIV)
INT_KERNELS(i8, int8_t, u8, uint8_t, i32, int32_t, NARROW_DIV)
/* u8: sum and avg as above (avg: zero-extended), max and min unsigned */
INIT_FOLD(u8_avg, u32, uint32_t, ld_u8, AS_IS, SUM)
INIT_FOLD(u8_max, u8, uint8_t, ld_u8, AS_IS, IMAX)
INIT_FOLD(u8_min, u8, uint8_t, ld_u8, AS_IS, IMIN)
FINISH(u8_avg, u32, uint32_t, st_u8, NARROW_DIV)
FINISH(u8, u8, uint8_t, st_u8, KEEP)
/* bool: sum and max are "any", min is "all" (of nonzero bytes), written as 0 or 1 */
INIT_FOLD(bool_any, u8, uint8_t, ld_u8, TO_BOOL, ANY)
INIT_FOLD(bool_all, u8, uint8_t, ld_u8, TO_BOOL, ALL)

static kernels_t kernels(mc_dtype_t t, mc_reduce_t op)
{
    int avg = op == MC_REDUCE_AVG, sum = op == MC_REDUCE_SUM || avg;
#define PICK_FLOAT(T)                                                                              \
    return sum ? (kernels_t){init_##T##_sum, fold_##T##_sum, avg ? finish_##T##_avg : finish_##T}  \
           : op == MC_REDUCE_MAX ? (kernels_t){init_##T##_max, fold_##T##_max, finish_##T}         \
                                 : (kernels_t)                                                     \
    {                                                                                              \
        init_##T##_min, fold_##T##_min, finish_##T                                                 \
    }
#define PICK_INT(T, U)                                                                             \
    return avg                   ? (kernels_t){init_##T##_avg, fold_##T##_avg, finish_##T##_avg}   \
           : sum                 ? (kernels_t){init_##U##_sum, fold_##U##_sum, finish_##U##_sum}   \
           : op == MC_REDUCE_MAX ? (kernels_t){init_##T##_max, fold_##T##_max, finish_##T}         \
                                 : (kernels_t)                                                     \
    {                                                                                              \
        init_##T##_min, fold_##T##_min, finish_##T                                                 \
    }
    switch (t) {
    case MC_DTYPE_F64:
        PICK_FLOAT(f64);
    case MC_DTYPE_F32:
        PICK_FLOAT(f32);
    case MC_DTYPE_F16:
        PICK_FLOAT(f16);
    case MC_DTYPE_BF16:
        PICK_FLOAT(bf16);
    case MC_DTYPE_I64:
        PICK_INT(i64, i64);
    case MC_DTYPE_I32:
        PICK_INT(i32, i32);
    case MC_DTYPE_I16:
        PICK_INT(i16, i16);
    case MC_DTYPE_I8:
        PICK_INT(i8, i8);
    case MC_DTYPE_U8:
        PICK_INT(u8, i8); /* the wrapping sum is the same bits */
    default:              /* bool */
        return op == MC_REDUCE_MIN ? (kernels_t){init_bool_all, fold_bool_all, finish_u8}
                                   : (kernels_t){init_bool_any, fold_bool_any, finish_u8};
    }
#undef PICK_FLOAT
#undef PICK_INT
}

void mc_combine_identity(mc_dtype_t dtype, mc_reduce_t op, void *elem)
{
    int lo = op == MC_REDUCE_MAX, hi = op == MC_REDUCE_MIN; /* else sum: zero */
    double d = lo ? -INFINITY : hi ? INFINITY : -0.0;
    float f = (float)d;
    uint16_t h = dtype == MC_DTYPE_F16 ? f32_to_f16(f) : f32_to_bf16(f);
    size_t size = mc_dtype_size(dtype);
    /* integers: the least value has only the sign bit set, the greatest all others */
    uint64_t u = lo ? (uint64_t)1 << (8 * size - 1) : hi ? ~((uint64_t)1 << (8 * size - 1)) : 0;
    if (dtype == MC_DTYPE_U8 || dtype == MC_DTYPE_BOOL)
        u = hi ? (dtype == MC_DTYPE_U8 ? 0xff : 1) : 0;
    switch (dtype) {
    case MC_DTYPE_F64:
        memcpy(elem, &d, 8);
        break;
    case MC_DTYPE_F32:
        memcpy(elem, &f, 4);
        break;
    case MC_DTYPE_F16:
    case MC_DTYPE_BF16:
        memcpy(elem, &h, 2);
        break;
    default:
        memcpy(elem, &u, size); /* the low bytes (little-endian hosts) */
    }
}

void mc_combine_fill(mc_dtype_t dtype, mc_reduce_t op, const mc_strided_t *out, int64_t off,
                     int64_t len)
{
    uint64_t buf[BLOCK];
    int64_t size = (int64_t)mc_dtype_size(dtype);
    for (int64_t i = 0; i < BLOCK; i++)
        mc_combine_identity(dtype, op, (char *)buf + i * size);
    for (int64_t at = 0; at < len; at += BLOCK * size) {
        int64_t bytes = len - at < BLOCK * size ? len - at : BLOCK * size;
        char *o = mc_strided_range(out, off + at, bytes);
        if (o)
            memcpy(o, buf, (size_t)bytes);
        else
            mc_strided_unpack(out, off + at, bytes, buf);
    }
}

void mc_combine(mc_dtype_t dtype, mc_reduce_t op, int n, const void *const *in, void *out,
                int64_t nelems)
{
    acc_t acc;
    kernels_t k = kernels(dtype, op);
    int64_t size = (int64_t)mc_dtype_size(dtype);
    for (int64_t at = 0; at < nelems; at += BLOCK) {
        int64_t m = nelems - at < BLOCK ? nelems - at : BLOCK;
        k.init(&acc, (const char *)in[0] + at * size, m);
        for (int j = 1; j < n; j++)
            k.fold(&acc, (const char *)in[j] + at * size, m);
        k.finish(&acc, (char *)out + at * size, m, n);
    }
}

void mc_combine_boxes(mc_dtype_t dtype, mc_reduce_t op, int n, const mc_strided_t *in,
                      const mc_strided_t *out, int64_t off, int64_t len)
{
    acc_t acc;
    uint64_t buf[BLOCK]; /* one block of a strided box, packed */
    kernels_t k = kernels(dtype, op);
    int64_t size = (int64_t)mc_dtype_size(dtype);
    for (int64_t at = 0; at < len; at += BLOCK * size) {
        int64_t bytes = len - at < BLOCK * size ? len - at : BLOCK * size;
        for (int j = 0; j < n; j++) {
            const char *p = mc_strided_range(&in[j], off + at, bytes);
            if (!p) {
                mc_strided_pack(&in[j], off + at, bytes, buf);
                p = (const char *)buf;
            }
            (j ? k.fold : k.init)(&acc, p, bytes / size);
        }
        char *o = mc_strided_range(out, off + at, bytes);
        k.finish(&acc, o ? o : (char *)buf, bytes / size, n);
        if (!o)
            mc_strided_unpack(out, off + at, bytes, buf);
    }
}
