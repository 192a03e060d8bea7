/* Index math of strided N-d boxes, shared by the CPU path (strided.c) and the CUDA kernels
 * (lib/gpu): the C compiler sees plain inline functions, nvcc host+device ones, so both
 * paths map a byte of a box's row-major string to the same address. */
#ifndef MC_BOX_INDEX_H
#define MC_BOX_INDEX_H

#include <stdint.h>
#include "meshcast/layout.h"

#ifdef __CUDACC__
#define MC_HD __host__ __device__ static inline
#else
#define MC_HD static inline
#endif

/* A box of a dense row-major tile, seen as the byte string of its row-major linearization,
 * with dims merged where contiguous (mc_strided_init). */
typedef struct {
    char *base;                  /* address of the box's first element */
    int64_t offset;              /* of the box's first element from the tile's start */
    int ndim;                    /* after merging, >= 1 */
    int64_t count[MC_MAX_NDIM];  /* extent per merged dim, outer first; count[ndim-1] is
                                    the innermost run in bytes */
    int64_t stride[MC_MAX_NDIM]; /* byte stride per merged dim (stride[ndim-1] = 1) */
    int64_t run_bytes;           /* innermost contiguous run: count[ndim-1] */
    int64_t bytes;               /* total bytes of the box */
} mc_strided_t;

/* Splits byte offset off (< bytes) into the byte offset of its run's start from base (the
 * result), the offset inside that run (*in_run) and, when idx is not NULL, the outer-dim
 * indices idx[0..ndim-2]. */
MC_HD int64_t mc_box_locate(const mc_strided_t *s, int64_t off, int64_t *idx, int64_t *in_run)
{
    int64_t r = off / s->run_bytes, pos = 0;
    *in_run = off - r * s->run_bytes;
    for (int d = s->ndim - 2; d >= 0; d--) {
        int64_t q = r / s->count[d], i = r - q * s->count[d];
        if (idx)
            idx[d] = i;
        pos += i * s->stride[d];
        r = q;
    }
    return pos;
}

/* Offset from base of byte off of the box's string. */
MC_HD int64_t mc_box_offset(const mc_strided_t *s, int64_t off)
{
    int64_t in;
    int64_t pos = mc_box_locate(s, off, (int64_t *)0, &in);
    return pos + in;
}

#endif
