/* Thread-local last-error message and status strings. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util.h"

static _Thread_local char last_error[512];

const char *mc_status_string(mc_status_t status)
{
    switch (status) {
    case MC_OK:
        return "success";
    case MC_INPROGRESS:
        return "in progress";
    case MC_ERR_INVALID:
        return "invalid argument";
    case MC_ERR_NOMEM:
        return "out of memory";
    case MC_ERR_OVERFLOW:
        return "size overflow";
    case MC_ERR_UNSUPPORTED:
        return "unsupported";
    case MC_ERR_IO:
        return "input/output error";
    case MC_ERR_NOT_FOUND:
        return "not found";
    case MC_ERR_TIMEOUT:
        return "timed out";
    case MC_ERR_PEER:
        return "peer failed";
    case MC_ERR_MISMATCH:
        return "ranks disagree";
    case MC_ERR_INTERNAL:
        return "internal error";
    }
    return "unknown status";
}

const char *mc_last_error(void)
{
    return last_error;
}

void mc_error_clear(void)
{
    last_error[0] = '\0';
}

mc_status_t mc_error(mc_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

mc_status_t mc_error_context(mc_status_t status, const char *fmt, ...)
{
    char prefix[256], old[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof old);
    size_t n = strlen(prefix);
    if (n > sizeof last_error - 3)
        n = sizeof last_error - 3;
    memcpy(last_error, prefix, n);
    memcpy(last_error + n, ": ", 2);
    size_t rest = sizeof last_error - n - 3, m = strlen(old);
    if (m > rest)
        m = rest;
    memcpy(last_error + n + 2, old, m);
    last_error[n + 2 + m] = 0;
    return status;
}
