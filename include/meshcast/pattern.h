/* A deterministic, position-dependent test pattern for tiles: fill source tiles, reshard,
 * then check every destination element (what `meshcast run` does). */
#ifndef MESHCAST_PATTERN_H
#define MESHCAST_PATTERN_H

#include <stdint.h>
#include "meshcast/layout.h"
#include "meshcast/plan.h"
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into tile (the device's dense row-major tile) the pattern value of every element:
 * a hash of its flat index in the whole tensor and seed, truncated to the element size.
 * On a partial layout (pending reduction) each device writes the addend of its addend
 * index instead: integers and bool hash bits (bool 0 or 1), floats a multiple of 1/16 in
 * [-64, 64) (so that sums stay finite and exact sums are known). */
mc_status_t mc_pattern_fill(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                            void *tile);
/* Counts the tile's elements that differ from the pattern into *wrong. On a Partial layout
 * (as a destination) a device other than addend 0 must hold the op's identity instead
 * (-0.0 or 0 for sum, -inf or the least value for max, +inf or the greatest for min). */
mc_status_t mc_pattern_check(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                             const void *tile, int64_t *wrong);

/* Checks a destination tile of a reduction plan (a partial source, filled by
 * mc_pattern_fill): every element must equal, bit for bit, the source's addends of that
 * element combined along the combine tree of the plan's flow that delivers it, in the
 * plan's order (each combiner's partial rounded to the dtype, as it travels; a flat tree
 * combines in addend order). *max_diff: the largest |value - float64 combination of the
 * addends| over the tile's elements (0 for integers); NULL to skip. A Partial destination's
 * devices other than addend 0 must hold the identity (as mc_pattern_check). */
mc_status_t mc_pattern_check_reduced(const mc_plan_t *plan, int64_t device_id, uint64_t seed,
                                     const void *tile, int64_t *wrong, double *max_diff);

#ifdef __cplusplus
}
#endif
#endif
