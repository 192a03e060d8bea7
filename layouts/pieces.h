/* Pieces: the tensor cut into maximal boxes, each with one holder set and one needer set.
 * When the source is partial (pending reduction), a box's holders hold addends of it: a
 * needer wants the combination of one holder of every addend index. */
#ifndef MC_PIECES_H
#define MC_PIECES_H

#include "meshcast/layout.h"

typedef struct {
    mc_box_t box;
    int64_t bytes;
    int nholders;     /* source devices whose tile contains the box */
    int nneeders;     /* destination devices that want it and do not hold all of it */
    int nself;        /* destination devices that also hold it (a local copy suffices);
                         none when the source is partial */
    int64_t *holders; /* ascending device ids */
    int64_t *addends; /* parallel to holders: addend index in [0, naddends); NULL when the
                         source is not partial */
    int64_t *needers; /* ascending device ids */
    int64_t *self;    /* ascending device ids */
} mc_piece_t;

typedef struct {
    int ndim;
    int64_t shape[MC_MAX_NDIM];
    int64_t elem_size;
    int64_t naddends; /* addends per box: product of the source's partial axes (1: none) */
    mc_reduce_t op;   /* how addends combine (MC_REDUCE_NONE when naddends == 1) */
    int64_t npieces;
    mc_piece_t *pieces; /* every box that some destination device wants, in row-major
                           order of their lower corners; boxes partition those elements */
    int64_t *ids;       /* storage behind the holder/needer/self arrays */
} mc_pieces_t;

/* Most device entries (holders, needers and self copies over all pieces) that
 * mc_pieces_compute stores: 128 MiB of ids. */
#define MC_PIECES_MAX_IDS ((int64_t)1 << 24)

/* src and dst must have equal shape and dtype (error otherwise). Pieces nobody needs and
 * nobody copies locally are left out. A partial dst: only its devices of addend index 0 need
 * pieces (the others hold the op's identity, mc_combine_identity); MC_ERR_UNSUPPORTED for
 * Partial(avg), which has none. */
mc_status_t mc_pieces_compute(const mc_layout_t *src, const mc_layout_t *dst, mc_pieces_t **out);
void mc_pieces_destroy(mc_pieces_t *pieces);

#endif
