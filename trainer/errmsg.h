/* Error messages of the trainer's fallible setup steps: written into a caller's buffer. */
#ifndef TR_ERRMSG_H
#define TR_ERRMSG_H
#include <stddef.h>

/* Formats the message into err (len bytes) and returns -1, so a check reads
 * `return tr_fail(err, len, "...", ...);`. */
int tr_fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
