/*
 * threads.c: the engine's thread policy (see threads.h).
 */
#include "core/threads.h"

#include "statgpu.h"

#include "core/pool.h"

#include <stdlib.h>

int sg_threads_default(void)
{
    /* OMP_NUM_THREADS, the usual way to tell a program how many threads to
     * use, where set (its first number); else the processors in this
     * process's affinity mask (taskset, cgroups' cpusets). */
    int count = 0;
    const char *requested = getenv("OMP_NUM_THREADS");
    if (requested != NULL) {
        char *end = NULL;
        long value = strtol(requested, &end, 10);
        if (end != requested && value > 0)
            count = value > STATGPU_MAX_THREAD_COUNT ? STATGPU_MAX_THREAD_COUNT : (int)value;
    }
    if (count < 1)
        count = sg_pool_processor_count();
    return count > STATGPU_MAX_THREAD_COUNT ? STATGPU_MAX_THREAD_COUNT : count;
}

int sg_threads_for(int thread_count, size_t block_count, double work_units)
{
    double team = thread_count > 0 ? (double)thread_count : 1.0;
    if ((double)block_count < team)
        team = (double)block_count;
    double by_work = work_units / SG_THREADS_MIN_WORK;
    if (by_work < team)
        team = by_work;
    return team < 1.0 ? 1 : (int)team;
}
