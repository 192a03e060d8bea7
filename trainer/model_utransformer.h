/* U-transformer: the L blocks form a U. Blocks 0 .. L/2-1 are the down path, blocks
 * L-L/2 .. L-1 the up path (with L odd, the middle block is a plain bottleneck). The
 * output of down-block i is joined into the input of up-block L-1-i: the two [B,T,C]
 * tensors are concatenated to [B,T,2C] and projected back to C by a learned [C,2C] matrix
 * and bias, initialised to [I I] and 0, so training starts from a plain sum. Each join is
 * a skip edge; a stage split carries the edges that cross it. */
#ifndef TRAINER_MODEL_UTRANSFORMER_H
#define TRAINER_MODEL_UTRANSFORMER_H

#include "model.h"

int tr_utransformer_build(tr_model *m);
/* Sets a join's projection to [I I], bias 0. */
void tr_utransformer_init_join(tr_model *m, tr_layer *ly);

/* Skip edge e of a U-transformer of `blocks` blocks (e < blocks / 2): down-block e (layer
 * 1 + e) into up-block blocks - 1 - e (layer blocks - e). */
static inline void tr_utransformer_skip(int blocks, int e, int *from_layer, int *to_layer)
{
    *from_layer = 1 + e;
    *to_layer = blocks - e;
}

#endif
