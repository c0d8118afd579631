/*
 * random.h: the random streams of the randomised methods (k-means' starts,
 * LTS's subsets): splitmix64, unbiased bounded draws, and independent
 * streams derived from the context's and the call's seeds.
 */
#ifndef STATGPU_CORE_RANDOM_H
#define STATGPU_CORE_RANDOM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t sg_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define SG_GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64: a sequential stream, enough for the few draws of an initialisation. */
typedef struct sg_rng { uint64_t state; } sg_rng;

static inline uint64_t sg_rng_next(sg_rng *rng) { return sg_mix64(rng->state += SG_GOLDEN); }

/* Uniform on 0 .. bound-1, without bias (Lemire's multiply and reject). */
static inline size_t sg_rng_below(sg_rng *rng, size_t bound)
{
    uint64_t n = (uint64_t)bound;
    unsigned __int128 product = (unsigned __int128)sg_rng_next(rng) * n;
    uint64_t low = (uint64_t)product;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            product = (unsigned __int128)sg_rng_next(rng) * n;
            low = (uint64_t)product;
        }
    }
    return (size_t)(product >> 64);
}

/* The seed of independent stream `index` of a call, from the context's and
 * the call's seeds; `salt` keeps the streams of different methods apart. */
static inline uint64_t sg_derive_stream(uint64_t context_seed, uint64_t call_seed, uint64_t salt, size_t index)
{
    uint64_t base = sg_mix64(context_seed + SG_GOLDEN) ^ sg_mix64(call_seed ^ salt);
    return sg_mix64(base + ((uint64_t)index + 1) * SG_GOLDEN);
}

#endif
