/*
 * pool.h: the engine's parallel loop, on threads of its own that sleep when
 * there is no work.
 *
 * Inside LibreOffice, and wherever several processes run the engine at once,
 * the cores are shared. OpenMP's runtime (libgomp) keeps the threads of a
 * team spinning after each parallel region (GOMP_SPINCOUNT, read once when
 * libgomp loads), and hands every thread a fixed share of a loop: with as many
 * processes as cores, each spinning team took the cores from the others and
 * each region waited for its slowest, descheduled thread, so N runs together
 * took twice as long as the same runs one after another (bench/NOTES.md,
 * Contention). Here:
 *   - an idle thread spins only briefly, then sleeps on a condition variable;
 *   - a loop's blocks are handed out one at a time, so a thread that is not
 *     running only delays the block it holds, and a thread that wakes after
 *     every block is taken does not delay the loop at all;
 *   - the calling thread works on the loop too, and never waits for a helper
 *     that has not started.
 *
 * Each calling thread has its own pool, made at its first parallel loop and
 * grown to the largest team it asks for; a loop inside a loop's body runs on
 * the thread that calls it. Results never depend on the team: bodies write
 * per-block results that the caller combines in block order.
 */
#ifndef STATGPU_CORE_POOL_H
#define STATGPU_CORE_POOL_H

#include <stddef.h>

/* One block of a parallel loop. slot, from 0 to team - 1, is the same for
 * every block one thread runs in one loop: an index into per-thread scratch
 * of `team` entries. */
typedef void (*sg_block_body)(void *context, size_t block, int slot);

/* Runs body(context, b, slot) for every b < block_count, each exactly once,
 * on at most `team` threads (the caller's included), and returns when all
 * have returned. team < 2, one block, a call from inside a body, or a pool
 * that cannot start its threads run every block on the caller (slot 0). */
void sg_parallel_for(int team, size_t block_count, sg_block_body body, void *context);

/* The processors this process may run on (its affinity mask), at least 1. */
int sg_pool_processor_count(void);

#endif
