/* IEEE half and bfloat16 conversions (round to nearest even; NaN stays NaN), shared by the
 * CPU combine (combine.c) and the CUDA one (lib/gpu/combine.cu) so both round alike. */
#ifndef MC_HALF_H
#define MC_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "exec/box_index.h" /* MC_HD */

MC_HD uint32_t mc_half_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

MC_HD float mc_half_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Both f16 conversions are branch-free (selects), so that CPU combine loops over f16
 * vectorize (combine.c). */
MC_HD float mc_half_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu;
    /* exponent and mantissa moved into place; scaling by 2^112 rebiases normals and makes
     * subnormals exact normals of f32 */
    float v = mc_half_bits_f32(em << 13) * 0x1p112f;
    uint32_t u = em >= 0x7c00u ? 0x7f800000u | em << 13 : mc_half_f32_bits(v); /* inf, NaN */
    return mc_half_bits_f32(sign | u);
}

MC_HD uint16_t mc_half_f32_to_f16(float f)
{
    uint32_t u = mc_half_f32_bits(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    /* below 2^-14: a subnormal half, its units rounded to nearest even by adding 2^23 */
    float units = mc_half_bits_f32(a < 0x38800000u ? a : 0) * 0x1p24f;
    uint32_t sub = (uint32_t)(int32_t)((units + 0x1p23f) - 0x1p23f);
    /* normal: drop 13 mantissa bits, round to nearest even (may carry into exp) */
    uint32_t r = a + 0xfff + ((a >> 13) & 1), normal = (r >> 13) - (112u << 10);
    uint32_t h = a > 0x7f800000u    ? 0x7e00 | (a >> 13 & 0x3ff) /* NaN: keep it quiet */
                 : a >= 0x477ff000u ? 0x7c00                     /* rounds to >= 65520 */
                 : a < 0x38800000u  ? sub
                                    : normal;
    return (uint16_t)(sign | h);
}

MC_HD float mc_half_bf16_to_f32(uint16_t h)
{
    return mc_half_bits_f32((uint32_t)h << 16);
}

MC_HD uint16_t mc_half_f32_to_bf16(float f)
{
    uint32_t u = mc_half_f32_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000u)
        return (uint16_t)(u >> 16 | 0x40);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

#endif
