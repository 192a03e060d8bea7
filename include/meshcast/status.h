/* Status codes and error messages shared by every meshcast call. */
#ifndef MESHCAST_STATUS_H
#define MESHCAST_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MC_OK = 0,
    MC_INPROGRESS = 1,
    MC_ERR_INVALID = -1,     /* bad argument or malformed input */
    MC_ERR_NOMEM = -2,       /* allocation failed */
    MC_ERR_OVERFLOW = -3,    /* a size does not fit in 64 bits */
    MC_ERR_UNSUPPORTED = -4, /* valid request this build or notation cannot express */
    MC_ERR_IO = -5,          /* file or stream error */
    MC_ERR_NOT_FOUND = -6,   /* named thing (topology, setting) does not exist */
    MC_ERR_TIMEOUT = -7,     /* a peer did not answer in time */
    MC_ERR_PEER = -8,        /* a peer failed */
    MC_ERR_MISMATCH = -9,    /* ranks disagree (plan fingerprint) */
    MC_ERR_INTERNAL = -10    /* a bug: please report */
} mc_status_t;

/* Short fixed description of a status code. */
const char *mc_status_string(mc_status_t status);

/* The calling thread's message for its last failed call: names what was wrong and where.
 * Empty string when no call has failed on this thread. */
const char *mc_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
