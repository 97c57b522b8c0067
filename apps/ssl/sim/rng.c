/* SPDX-License-Identifier: MIT */
/*
 * Counter-based random numbers: splitmix64's finaliser applied to a mix of
 * (seed, stream, index). A value depends only on its three inputs, so the
 * simulator can produce any sample of any stream in any order.
 */
#include <math.h>

#include "sim_internal.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

uint64_t rng_hash(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t z = mix(seed + 0x9E3779B97F4A7C15u);
    z = mix(z ^ (stream * 0xD6E8FEB86659FD93u));
    return mix(z ^ (index + 0x632BE59BD9B4E019u));
}

double rng_uniform(uint64_t h)
{
    return ((double) (h >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* 2^53 */
}

double rng_gauss(uint64_t seed, uint64_t stream, uint64_t index)
{
    /* Box-Muller on two hashes of the same counter. */
    double u1 = rng_uniform(rng_hash(seed, stream, 2u * index));
    double u2 = rng_uniform(rng_hash(seed, stream, 2u * index + 1u));
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
