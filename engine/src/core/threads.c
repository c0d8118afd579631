/*
 * threads.c: the engine's thread policy (see threads.h).
 */
#include "core/threads.h"

#include "statgpu.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int sg_threads_default(void)
{
#ifdef _OPENMP
    /* libgomp's default team size is OMP_NUM_THREADS where set, else the
     * processors in this process's affinity mask (taskset, cgroups' cpusets). */
    int count = omp_get_max_threads();
#else
    int count = 1;
#endif
    if (count < 1)
        count = 1;
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
