/*
 * test_pool.c: the engine's parallel loop (engine/src/core/pool.c), compiled
 * in: every block runs exactly once whatever the team, slots stay below the
 * team and one thread keeps one slot within a loop, a loop inside a body runs
 * on the thread that calls it, several threads run loops at once on pools of
 * their own, and helpers that sleep between loops wake for the next one.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct counted_loop {
    size_t         block_count;
    atomic_int    *runs;          /* per block */
    int            team;
    atomic_int     bad_slot;
    pthread_t     *slot_owner;    /* per slot: the thread that used it first */
    atomic_int    *slot_taken;
    atomic_int     shared_slot;   /* a slot used by two threads */
} counted_loop;

static void count_block(void *context, size_t block, int slot)
{
    counted_loop *loop = context;
    atomic_fetch_add(&loop->runs[block], 1);
    if (slot < 0 || slot >= loop->team) {
        atomic_store(&loop->bad_slot, 1);
        return;
    }
    int expected = 0;
    if (atomic_compare_exchange_strong(&loop->slot_taken[slot], &expected, 1))
        loop->slot_owner[slot] = pthread_self();
    else if (atomic_load(&loop->slot_taken[slot]) == 1 && !pthread_equal(loop->slot_owner[slot], pthread_self()))
        atomic_store(&loop->shared_slot, 1);
}

static void run_counted(int team, size_t block_count)
{
    counted_loop loop = { .block_count = block_count, .team = team < 1 ? 1 : team };
    loop.runs = calloc(block_count + 1, sizeof *loop.runs);
    loop.slot_owner = calloc((size_t)loop.team, sizeof *loop.slot_owner);
    loop.slot_taken = calloc((size_t)loop.team, sizeof *loop.slot_taken);
    atomic_init(&loop.bad_slot, 0);
    atomic_init(&loop.shared_slot, 0);
    sg_parallel_for(team, block_count, count_block, &loop);
    for (size_t b = 0; b < block_count; ++b)
        if (atomic_load(&loop.runs[b]) != 1)
            fail_msg("team %d, %zu blocks: block %zu ran %d times", team, block_count, b, atomic_load(&loop.runs[b]));
    assert_int_equal(atomic_load(&loop.bad_slot), 0);
    assert_int_equal(atomic_load(&loop.shared_slot), 0);
    free(loop.runs);
    free(loop.slot_owner);
    free(loop.slot_taken);
}

static void test_every_block_once(void **state)
{
    (void)state;
    const int teams[] = { 0, 1, 2, 3, 8, 64 };
    const size_t counts[] = { 0, 1, 2, 7, 64, 1000, 100000 };
    for (size_t t = 0; t < sizeof teams / sizeof teams[0]; ++t)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
            run_counted(teams[t], counts[c]);
}

/* A loop inside a body: runs whole, on the calling thread, slot 0. */
typedef struct nested {
    atomic_int inner_runs;
    atomic_int inner_off_thread;
} nested;

typedef struct inner_context {
    nested   *outer;
    pthread_t caller;
} inner_context;

static void inner_block(void *context, size_t block, int slot)
{
    (void)block;
    inner_context *inner = context;
    atomic_fetch_add(&inner->outer->inner_runs, 1);
    if (slot != 0 || !pthread_equal(inner->caller, pthread_self()))
        atomic_store(&inner->outer->inner_off_thread, 1);
}

static void outer_block(void *context, size_t block, int slot)
{
    (void)block;
    (void)slot;
    inner_context inner = { context, pthread_self() };
    sg_parallel_for(8, 10, inner_block, &inner);
}

static void test_nested_loop_runs_on_its_caller(void **state)
{
    (void)state;
    nested counts;
    atomic_init(&counts.inner_runs, 0);
    atomic_init(&counts.inner_off_thread, 0);
    sg_parallel_for(4, 16, outer_block, &counts);
    assert_int_equal(atomic_load(&counts.inner_runs), 160);
    assert_int_equal(atomic_load(&counts.inner_off_thread), 0);
}

/* Several threads, each with its pool, running loops at once. */
static void *many_loops(void *argument)
{
    (void)argument;
    for (int round = 0; round < 200; ++round)
        run_counted(1 + round % 6, (size_t)(round * 37 % 500));
    return NULL;
}

static void test_threads_run_loops_at_once(void **state)
{
    (void)state;
    pthread_t threads[6];
    for (int t = 0; t < 6; ++t)
        assert_int_equal(pthread_create(&threads[t], NULL, many_loops, NULL), 0);
    for (int t = 0; t < 6; ++t)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
}

/* Helpers asleep after a pause (past their spin) still join the next loop. */
static void test_sleeping_helpers_wake(void **state)
{
    (void)state;
    run_counted(4, 400);
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    run_counted(4, 400);
    run_counted(8, 4000);  /* the pool grows */
}

static void test_processor_count(void **state)
{
    (void)state;
    assert_true(sg_pool_processor_count() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_block_once),
        cmocka_unit_test(test_nested_loop_runs_on_its_caller),
        cmocka_unit_test(test_threads_run_loops_at_once),
        cmocka_unit_test(test_sleeping_helpers_wake),
        cmocka_unit_test(test_processor_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
