/* `meshcast bench --generate N`: seeded random cases at cluster scale, as suite lines. */
#ifndef MC_TOOL_BENCH_GEN_H
#define MC_TOOL_BENCH_GEN_H

#include <stdint.h>
#include <stdio.h>

/* Most cases --generate accepts. */
#define BENCH_GEN_MAX 100000
/* Hosts a case draws at most: 40 by default (every seed's cases as before --max-hosts),
 * up to 1,024 (8,192 devices on the DGX profiles). */
#define BENCH_GEN_HOSTS 40
#define BENCH_GEN_MAX_HOSTS 1024

/* Writes n suite lines (benchmarks/suites format) of 2 to max_hosts hosts drawn from seed to
 * a temporary file and returns it rewound, or NULL (one line printed, *rc set to the exit
 * status). topology: NULL draws each case's profile from the three built-in ones; a profile
 * name or file puts every case on it, with its devices per host (the draws are the profiles'
 * until a case is drawn again: a case's deliveries depend on the topology). */
FILE *bench_generate(int64_t n, uint64_t seed, int64_t max_hosts, const char *topology, int *rc);

#endif
