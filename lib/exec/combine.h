/* Combining addends of a pending reduction, for every dtype, in a fixed order. */
#ifndef MC_COMBINE_H
#define MC_COMBINE_H

#include <stdint.h>
#include "exec/strided.h"
#include "meshcast/layout.h"

/* MC_OK when op can combine dtype; MC_ERR_UNSUPPORTED with a message otherwise (avg of bool,
 * or an unknown op or dtype). */
mc_status_t mc_combine_check(mc_dtype_t dtype, mc_reduce_t op);

/* out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], left to right, for nelems elements;
 * out may be one of the inputs. f64 accumulates in f64; f32, f16 and bf16 in f32, rounded
 * once to the dtype (nearest even); avg divides the sum by n. max and min propagate NaN
 * and keep the first of equal values. Integers: sum and avg accumulate in 64 bits,
 * wrapping around (so a sum wraps like the type's own arithmetic); avg truncates toward
 * zero. bool: sum and max are "any", min is "all". Needs mc_combine_check(dtype, op). */
void mc_combine(mc_dtype_t dtype, mc_reduce_t op, int n, const void *const *in, void *out,
                int64_t nelems);

/* The same over bytes [off, off+len) of n boxes of equal shape into the same bytes of out
 * (which may be one of them); off and len are multiples of the element size. No memory is
 * allocated. */
void mc_combine_boxes(mc_dtype_t dtype, mc_reduce_t op, int n, const mc_strided_t *in,
                      const mc_strided_t *out, int64_t off, int64_t len);

/* Writes to elem the identity addend of op (sum, max, min) for dtype: the value a device of
 * a Partial destination holds when it is not addend 0, so the pending combination is the
 * value itself bit for bit — sum -0.0 (x + -0.0 is x, also for x = +0.0) or 0, max -inf or
 * the type's least value (false), min +inf or its greatest (true). */
void mc_combine_identity(mc_dtype_t dtype, mc_reduce_t op, void *elem);

/* Fills bytes [off, off+len) of the box out with mc_combine_identity's element. */
void mc_combine_fill(mc_dtype_t dtype, mc_reduce_t op, const mc_strided_t *out, int64_t off,
                     int64_t len);

/* IEEE half and bfloat16 conversions (round to nearest even; NaN stays NaN). */
float mc_f16_to_f32(uint16_t h);
uint16_t mc_f32_to_f16(float f);
float mc_bf16_to_f32(uint16_t h);
uint16_t mc_f32_to_bf16(float f);

#endif
