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

float mc_f16_to_f32(uint16_t h)
{
    return mc_half_f16_to_f32(h);
}

uint16_t mc_f32_to_f16(float f)
{
    return mc_half_f32_to_f16(f);
}

float mc_bf16_to_f32(uint16_t h)
{
    return mc_half_bf16_to_f32(h);
}

uint16_t mc_f32_to_bf16(float f)
{
    return mc_half_f32_to_bf16(f);
}

/* NaN wins; otherwise the later value only replaces a strictly smaller (larger) one. */
static double pick(mc_reduce_t op, double acc, double y)
{
    if (isnan(acc))
        return acc;
    if (isnan(y))
        return y;
    return (op == MC_REDUCE_MAX ? y > acc : y < acc) ? y : acc;
}

/* One accumulator per element: f64 for f64, f32 for f32/f16/bf16, 64-bit integers (the
 * wrapping sum, or the best value for max and min) for the rest. */
typedef union {
    double d;
    float f;
    uint64_t u;
    int64_t i;
} acc_t;

static float load_f32(mc_dtype_t t, const char *p, int64_t i)
{
    if (t == MC_DTYPE_F32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    return t == MC_DTYPE_F16 ? mc_f16_to_f32(h) : mc_bf16_to_f32(h);
}

/* Integers as 64-bit values: signed ones sign-extended. */
static int64_t load_int(mc_dtype_t t, const char *c, int64_t i)
{
    switch (t) {
    case MC_DTYPE_I64: {
        int64_t v;
        memcpy(&v, c + 8 * i, 8);
        return v;
    }
    case MC_DTYPE_I32: {
        int32_t v;
        memcpy(&v, c + 4 * i, 4);
        return v;
    }
    case MC_DTYPE_I16: {
        int16_t v;
        memcpy(&v, c + 2 * i, 2);
        return v;
    }
    case MC_DTYPE_I8:
        return (int8_t)c[i];
    default: /* u8, bool */
        return (unsigned char)c[i];
    }
}

/* Folds m elements of in into acc (first: acc starts from in). */
static void fold(mc_dtype_t t, mc_reduce_t op, int first, acc_t *acc, const char *in, int64_t m)
{
    int add = op == MC_REDUCE_SUM || op == MC_REDUCE_AVG;
    for (int64_t i = 0; i < m; i++) {
        if (t == MC_DTYPE_F64) {
            double y;
            memcpy(&y, in + 8 * i, 8);
            acc[i].d = first ? y : add ? acc[i].d + y : pick(op, acc[i].d, y);
        } else if (t == MC_DTYPE_F32 || t == MC_DTYPE_F16 || t == MC_DTYPE_BF16) {
            float y = load_f32(t, in, i);
            acc[i].f = first ? y : add ? acc[i].f + y : (float)pick(op, acc[i].f, y);
        } else {
            int64_t y = load_int(t, in, i);
            if (first || (!add && (op == MC_REDUCE_MAX ? y > acc[i].i : y < acc[i].i)))
                acc[i].i = y;
            else if (add)
                acc[i].u += (uint64_t)y; /* unsigned: wrap-around is defined */
        }
    }
}

/* Writes m combined elements of n inputs from acc to out. */
static void finish(mc_dtype_t t, mc_reduce_t op, int n, const acc_t *acc, char *out, int64_t m)
{
    size_t size = mc_dtype_size(t);
    for (int64_t i = 0; i < m; i++) {
        char *o = out + (int64_t)size * i;
        if (t == MC_DTYPE_F64) {
            double v = op == MC_REDUCE_AVG ? acc[i].d / n : acc[i].d;
            memcpy(o, &v, 8);
        } else if (t == MC_DTYPE_F32 || t == MC_DTYPE_F16 || t == MC_DTYPE_BF16) {
            float v = op == MC_REDUCE_AVG ? acc[i].f / (float)n : acc[i].f;
            if (t == MC_DTYPE_F32) {
                memcpy(o, &v, 4);
            } else {
                uint16_t h = t == MC_DTYPE_F16 ? mc_f32_to_f16(v) : mc_f32_to_bf16(v);
                memcpy(o, &h, 2);
            }
        } else {
            uint64_t v = op == MC_REDUCE_AVG ? (uint64_t)(acc[i].i / n) : acc[i].u;
            if (t == MC_DTYPE_BOOL) /* sum and max: any; min: all */
                v = v != 0;
            memcpy(o, &v, size); /* the low bytes: wrap-around (little-endian hosts) */
        }
    }
}

#define BLOCK 512 /* elements combined at a time, accumulators on the stack */

void mc_combine(mc_dtype_t dtype, mc_reduce_t op, int n, const void *const *in, void *out,
                int64_t nelems)
{
    acc_t acc[BLOCK];
    int64_t size = (int64_t)mc_dtype_size(dtype);
    for (int64_t at = 0; at < nelems; at += BLOCK) {
        int64_t m = nelems - at < BLOCK ? nelems - at : BLOCK;
        for (int j = 0; j < n; j++)
            fold(dtype, op, j == 0, acc, (const char *)in[j] + at * size, m);
        finish(dtype, op, n, acc, (char *)out + at * size, m);
    }
}

void mc_combine_boxes(mc_dtype_t dtype, mc_reduce_t op, int n, const mc_strided_t *in,
                      const mc_strided_t *out, int64_t off, int64_t len)
{
    acc_t acc[BLOCK];
    uint64_t buf[BLOCK]; /* one block of a strided box, packed */
    int64_t size = (int64_t)mc_dtype_size(dtype);
    for (int64_t at = 0; at < len; at += BLOCK * size) {
        int64_t bytes = len - at < BLOCK * size ? len - at : BLOCK * size;
        for (int j = 0; j < n; j++) {
            const char *p = mc_strided_range(&in[j], off + at, bytes);
            if (!p) {
                mc_strided_pack(&in[j], off + at, bytes, buf);
                p = (const char *)buf;
            }
            fold(dtype, op, j == 0, acc, p, bytes / size);
        }
        char *o = mc_strided_range(out, off + at, bytes);
        finish(dtype, op, n, acc, o ? o : (char *)buf, bytes / size);
        if (!o)
            mc_strided_unpack(out, off + at, bytes, buf);
    }
}
