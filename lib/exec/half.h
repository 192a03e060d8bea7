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

MC_HD float mc_half_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) /* inf, NaN */
        return mc_half_bits_f32(sign | 0x7f800000u | man << 13);
    if (exp == 0) { /* zero, subnormal: exact in f32 */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return mc_half_bits_f32(sign | (exp + 112) << 23 | man << 13);
}

MC_HD uint16_t mc_half_f32_to_f16(float f)
{
    uint32_t u = mc_half_f32_bits(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    if (a > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)(sign | 0x7e00 | (a >> 13 & 0x3ff));
    if (a >= 0x477ff000u) /* rounds to at least 65520: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x38800000u) { /* below 2^-14: a subnormal half, rounded to nearest even */
        float v = mc_half_bits_f32(a) * 0x1p24f; /* exact: the half's units */
        return (uint16_t)(sign | (uint32_t)nearbyintf(v));
    }
    /* Normal: drop 13 mantissa bits with round to nearest even (may carry into exp). */
    uint32_t r = a + 0xfff + ((a >> 13) & 1);
    return (uint16_t)(sign | ((r >> 13) - (112u << 10)));
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
