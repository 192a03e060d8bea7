/* A deterministic, position-dependent test pattern for tiles: fill source tiles, reshard,
 * then check every destination element (what `meshcast run` does). */
#ifndef MESHCAST_PATTERN_H
#define MESHCAST_PATTERN_H

#include <stdint.h>
#include "meshcast/layout.h"
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into tile (the device's dense row-major tile) the pattern value of every element:
 * a hash of its flat index in the whole tensor and seed, truncated to the element size. */
mc_status_t mc_pattern_fill(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                            void *tile);
/* Counts the tile's elements that differ from the pattern into *wrong. */
mc_status_t mc_pattern_check(const mc_layout_t *layout, int64_t device_id, uint64_t seed,
                             const void *tile, int64_t *wrong);

#ifdef __cplusplus
}
#endif
#endif
