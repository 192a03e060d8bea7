/* Settings: one declarative table; each entry NAME is read from MESHCAST_<NAME>. */
#ifndef MESHCAST_CONFIG_H
#define MESHCAST_CONFIG_H

#include <stddef.h>
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;         /* e.g. "TIMEOUT", read from MESHCAST_TIMEOUT */
    const char *default_text; /* default value as text */
    const char *help;         /* one line */
} mc_setting_t;

/* Number of settings and the i-th (0 <= i < count). */
size_t mc_setting_count(void);
const mc_setting_t *mc_setting_at(size_t i);

/* Current value as text: the environment variable if set, else the default.
 * Returns NULL for an unknown name. */
const char *mc_setting_text(const char *name);

/* Current value parsed as a number (integers and decimals accepted; K/M/G suffixes are
 * powers of 1024). Fails with MC_ERR_INVALID naming the variable when unparsable. */
mc_status_t mc_setting_number(const char *name, double *out);

#ifdef __cplusplus
}
#endif
#endif
