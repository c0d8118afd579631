/*
 * threads.h: the one place that decides how many CPU threads the engine uses:
 * a context's default, its upper bound, and the team of each call.
 *
 * Inside LibreOffice the engine shares the cores with Calc's own threads, and
 * several processes may run it at once. Waking the threads of a parallel
 * loop costs time, and a thread of a loop holds its core while it runs, so
 * a small loop is cheaper on one thread. Hence: a default
 * that respects OMP_NUM_THREADS and the process's CPU affinity, never more
 * threads than blocks of work, and one thread for work too small to share.
 */
#ifndef STATGPU_CORE_THREADS_H
#define STATGPU_CORE_THREADS_H

#include <stddef.h>

/* The threads a context uses when its params leave thread_count at 0:
 * OMP_NUM_THREADS where set (its first number), else the processors this
 * process may run on; at most STATGPU_MAX_THREAD_COUNT. The loops run on the
 * engine's own threads (core/pool.h), not OpenMP's. */
int sg_threads_default(void);

/* The team for a call of a context with thread_count threads, whose work is
 * cut into block_count blocks and totals work_units (about one floating-point
 * operation each): at most one thread per block and one per
 * SG_THREADS_MIN_WORK units, at least 1. Results never depend on it: every
 * method sums over blocks that depend on the problem's size alone. */
int sg_threads_for(int thread_count, size_t block_count, double work_units);

/* Below this much work per thread, waking and parking a thread costs more
 * than it saves: a loop with 2^17 operations per thread runs for about
 * 50 µs, about what waking a sleeping thread can take. */
#define SG_THREADS_MIN_WORK 131072.0

#endif /* STATGPU_CORE_THREADS_H */
