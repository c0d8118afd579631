/*
 * pool.c: the engine's parallel loop on its own sleeping threads (see pool.h).
 */
#define _GNU_SOURCE
#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* An idle helper watches for the next loop this long before it sleeps: long
 * enough to catch the next loop of a run (a Lloyd iteration, a C-step batch),
 * short enough that helpers of other processes lose little. Measured on 16
 * cores (bench/contention.sh, engine time of a lone run, median of 9; OpenMP
 * before: k-means 0.0399 s, LTS 0.1311 s): 50 us: 0.0500 s, 0.1107 s;
 * 200 us: 0.0410 s, 0.1154 s; 1 ms: 0.0418 s, 0.1056 s, but 32 runs together
 * took 0.37 of their time in turn against 0.22 at 200 us. */
#ifndef SG_POOL_SPIN_NANOSECONDS
#define SG_POOL_SPIN_NANOSECONDS 200000
#endif

/* One parallel loop, on the caller's stack. wanted and joined change under
 * the pool's mutex; a helper that joined holds a count in active until it
 * has run its last block, and touches the job no more after that. */
typedef struct sg_job {
    sg_block_body body;
    void         *context;
    size_t        block_count;
    atomic_size_t next;    /* the next block to hand out */
    int           wanted;  /* helpers that may still join */
    int           joined;  /* helpers that joined: their slots are 1 .. joined */
    atomic_int    active;  /* helpers still working on it */
} sg_job;

typedef struct sg_pool {
    pthread_mutex_t mutex;
    pthread_cond_t  wake;        /* helpers sleep here */
    pthread_cond_t  idle;        /* the caller waits here for helpers to leave its loop */
    pthread_t      *threads;
    int             thread_count;
    atomic_ulong    generation;  /* counts the loops published */
    sg_job         *job;         /* open for helpers to join, or NULL */
    bool            caller_waiting;  /* the caller sleeps on idle */
    bool            stopping;
    struct sg_pool *next_pool;   /* every pool of the process, to stop them when the library unloads */
} sg_pool;

static _Thread_local sg_pool *t_pool;
static _Thread_local bool     t_in_body;

static pthread_once_t  g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t   g_pool_key;
static atomic_bool     g_key_made;  /* read at unload, while a thread may be making the key */
static pthread_mutex_t g_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static sg_pool        *g_registry;

static void sg_run_blocks(sg_job *job, int slot)
{
    t_in_body = true;
    for (;;) {
        size_t block = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (block >= job->block_count)
            break;
        job->body(job->context, block, slot);
    }
    t_in_body = false;
}

static inline void sg_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static uint64_t sg_now_nanoseconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Watches the generation for a while; true when it moved past seen. */
static bool sg_spin_for_work(sg_pool *pool, unsigned long seen)
{
    uint64_t start = sg_now_nanoseconds();
    for (unsigned spin = 1;; ++spin) {
        if (atomic_load_explicit(&pool->generation, memory_order_relaxed) != seen)
            return true;
        sg_cpu_relax();
        if (spin % 64 == 0 && sg_now_nanoseconds() - start > SG_POOL_SPIN_NANOSECONDS)
            return false;
    }
}

/* Watches the helpers of a job for a while; true when none is left. */
static bool sg_spin_until_idle(sg_job *job)
{
    uint64_t start = sg_now_nanoseconds();
    for (unsigned spin = 1;; ++spin) {
        if (atomic_load_explicit(&job->active, memory_order_acquire) == 0)
            return true;
        sg_cpu_relax();
        if (spin % 64 == 0 && sg_now_nanoseconds() - start > SG_POOL_SPIN_NANOSECONDS)
            return false;
    }
}

static void *sg_worker(void *argument)
{
    sg_pool *pool = argument;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->mutex);
    while (!pool->stopping) {
        unsigned long generation = atomic_load_explicit(&pool->generation, memory_order_relaxed);
        if (generation != seen) {
            seen = generation;
            sg_job *job = pool->job;
            if (job != NULL && job->wanted > 0) {
                job->wanted--;
                int slot = ++job->joined;
                atomic_fetch_add_explicit(&job->active, 1, memory_order_relaxed);
                pthread_mutex_unlock(&pool->mutex);
                sg_run_blocks(job, slot);
                bool last = atomic_fetch_sub_explicit(&job->active, 1, memory_order_acq_rel) == 1;
                pthread_mutex_lock(&pool->mutex);
                if (last && pool->caller_waiting)
                    pthread_cond_signal(&pool->idle);
            }
            continue;
        }
        pthread_mutex_unlock(&pool->mutex);
        bool moved = sg_spin_for_work(pool, seen);
        pthread_mutex_lock(&pool->mutex);
        if (!moved && !pool->stopping && atomic_load_explicit(&pool->generation, memory_order_relaxed) == seen)
            pthread_cond_wait(&pool->wake, &pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

static void sg_pool_stop(sg_pool *pool)
{
    pthread_mutex_lock(&pool->mutex);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    for (int t = 0; t < pool->thread_count; ++t)
        pthread_join(pool->threads[t], NULL);
    pthread_mutex_destroy(&pool->mutex);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->idle);
    free(pool->threads);
    free(pool);
}

/* A calling thread's pool goes when the thread ends, unless the library's
 * unloading took it first (sg_pools_shutdown): whoever takes it from the
 * registry stops it, once. */
static void sg_pool_release(void *value)
{
    sg_pool *pool = value;
    bool registered = false;
    pthread_mutex_lock(&g_registry_mutex);
    for (sg_pool **link = &g_registry; *link != NULL; link = &(*link)->next_pool)
        if (*link == pool) {
            *link = pool->next_pool;
            registered = true;
            break;
        }
    pthread_mutex_unlock(&g_registry_mutex);
    if (registered)
        sg_pool_stop(pool);
}

/* Every pool stops before the library's code goes away (dlclose, exit):
 * its threads run that code. */
__attribute__((destructor)) static void sg_pools_shutdown(void)
{
    pthread_mutex_lock(&g_registry_mutex);
    sg_pool *pool = g_registry;
    g_registry = NULL;
    pthread_mutex_unlock(&g_registry_mutex);
    /* No thread that ends later may call sg_pool_release on a stopped pool. */
    if (atomic_load_explicit(&g_key_made, memory_order_acquire))
        pthread_key_delete(g_pool_key);
    while (pool != NULL) {
        sg_pool *next = pool->next_pool;
        sg_pool_stop(pool);
        pool = next;
    }
    t_pool = NULL;
}

static void sg_make_key(void)
{
    atomic_store_explicit(&g_key_made, pthread_key_create(&g_pool_key, sg_pool_release) == 0,
                          memory_order_release);
}

/* The calling thread's pool with at least `helpers` threads where they can
 * be started; NULL when none can be made. */
static sg_pool *sg_pool_with_helpers(int helpers)
{
    sg_pool *pool = t_pool;
    if (pool == NULL) {
        pool = calloc(1, sizeof *pool);
        if (pool == NULL)
            return NULL;
        pthread_mutex_init(&pool->mutex, NULL);
        pthread_cond_init(&pool->wake, NULL);
        pthread_cond_init(&pool->idle, NULL);
        atomic_init(&pool->generation, 0);
        pthread_once(&g_key_once, sg_make_key);
        if (atomic_load_explicit(&g_key_made, memory_order_relaxed))
            pthread_setspecific(g_pool_key, pool);
        pthread_mutex_lock(&g_registry_mutex);
        pool->next_pool = g_registry;
        g_registry = pool;
        pthread_mutex_unlock(&g_registry_mutex);
        t_pool = pool;
    }
    if (pool->thread_count < helpers) {
        pthread_t *threads = realloc(pool->threads, (size_t)helpers * sizeof *threads);
        if (threads != NULL) {
            pool->threads = threads;
            while (pool->thread_count < helpers
                   && pthread_create(&threads[pool->thread_count], NULL, sg_worker, pool) == 0) {
                pthread_setname_np(threads[pool->thread_count], "statgpu");
                pool->thread_count++;
            }
        }
    }
    return pool;
}

void sg_parallel_for(int team, size_t block_count, sg_block_body body, void *context)
{
    if (team > 1 && (size_t)team > block_count)
        team = (int)block_count;
    sg_pool *pool = team > 1 && !t_in_body ? sg_pool_with_helpers(team - 1) : NULL;
    if (pool == NULL || pool->thread_count == 0) {
        for (size_t block = 0; block < block_count; ++block)
            body(context, block, 0);
        return;
    }
    sg_job job = { body, context, block_count, 0, 0, 0, 0 };
    atomic_init(&job.next, 0);
    atomic_init(&job.active, 0);
    job.wanted = team - 1 < pool->thread_count ? team - 1 : pool->thread_count;

    pthread_mutex_lock(&pool->mutex);
    pool->job = &job;
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_relaxed);
    if (job.wanted == pool->thread_count)
        pthread_cond_broadcast(&pool->wake);
    else
        for (int helper = 0; helper < job.wanted; ++helper)
            pthread_cond_signal(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);

    sg_run_blocks(&job, 0);

    /* Every block is handed out: close the loop to late helpers, then wait
     * for those still running a block, watching briefly before sleeping. */
    pthread_mutex_lock(&pool->mutex);
    pool->job = NULL;
    pthread_mutex_unlock(&pool->mutex);
    if (!sg_spin_until_idle(&job)) {
        pthread_mutex_lock(&pool->mutex);
        pool->caller_waiting = true;
        while (atomic_load_explicit(&job.active, memory_order_acquire) > 0)
            pthread_cond_wait(&pool->idle, &pool->mutex);
        pool->caller_waiting = false;
        pthread_mutex_unlock(&pool->mutex);
    }
}

int sg_pool_processor_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0)
            return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
