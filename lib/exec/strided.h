/* Strided N-d boxes in host memory: a box of a dense row-major tile, seen as the byte
 * string of its row-major linearization. Chunks of a flow are byte ranges of that string;
 * pack/unpack move a range between the box and contiguous memory, copy moves it between
 * two boxes of equal shape. Written for speed: dims are merged where contiguous, and the
 * innermost contiguous run is moved with memcpy. The address math is box_index.h's. */
#ifndef MC_STRIDED_H
#define MC_STRIDED_H

#include <stddef.h>
#include <stdint.h>
#include "exec/box_index.h"
#include "meshcast/layout.h"

/* Describes box (inside tile, both in tensor coordinates, ndim dims) of a dense row-major
 * tile stored at tile_base with elem_size-byte elements. box must lie inside tile. An empty
 * box gives bytes == 0. */
void mc_strided_init(mc_strided_t *s, void *tile_base, const mc_box_t *tile, const mc_box_t *box,
                     int ndim, size_t elem_size);
/* The same description without a tile (base NULL): its geometry depends on shapes alone,
 * so programs keep it and each execution only binds it to the caller's tile. */
void mc_strided_shape(mc_strided_t *s, const mc_box_t *tile, const mc_box_t *box, int ndim,
                      size_t elem_size);
/* shape placed on the tile stored at tile_base. */
mc_strided_t mc_strided_bind(const mc_strided_t *shape, void *tile_base);

/* Pointer to bytes [off, off+len) of the box when they are contiguous in memory, else NULL.
 * The whole box is contiguous when run_bytes == bytes. */
void *mc_strided_range(const mc_strided_t *s, int64_t off, int64_t len);

/* Bytes [off, off+len) of the box to out (contiguous). */
void mc_strided_pack(const mc_strided_t *s, int64_t off, int64_t len, void *out);
/* Contiguous in to bytes [off, off+len) of the box. */
void mc_strided_unpack(const mc_strided_t *s, int64_t off, int64_t len, const void *in);
/* Bytes [off, off+len) of src's box to the same bytes of dst's box (same total bytes;
 * the two may be strided differently). No temporary memory. */
void mc_strided_copy(const mc_strided_t *dst, const mc_strided_t *src, int64_t off, int64_t len);

#endif
