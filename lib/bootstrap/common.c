/* Helpers shared by the built-in bootstraps: timeout validation and polling back-off. */
#include <time.h>
#include "bootstrap/bootstrap.h"
#include "util/util.h"

mc_status_t mc_bootstrap_check_timeout(double timeout_s, const char *who)
{
    if (!(timeout_s > 0)) /* also rejects NaN, which would never expire */
        return mc_error(MC_ERR_INVALID, "%s: timeout %g s is not a positive number of seconds", who,
                        timeout_s);
    return MC_OK;
}

void mc_bootstrap_backoff(long *pause_ns, long max_ns, double deadline)
{
    double left = deadline - mc_now();
    if (left <= 0)
        return;
    long ns = *pause_ns;
    if ((double)ns > left * 1e9)
        ns = (long)(left * 1e9) + 1;
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&ts, NULL); /* an early wake-up (EINTR) only means one more poll */
    if (*pause_ns < max_ns)
        *pause_ns = *pause_ns * 2 < max_ns ? *pause_ns * 2 : max_ns;
}
