/*
 * bestsubset_search.c: the exhaustive search of best subset regression by
 * branch and bound over the dropping-column tree (Gatu and Kontoghiorghes,
 * "Branch-and-bound algorithms for computing the best-subset regression
 * models", 2006), with Furnival and Wilson's bound.
 *
 * A node of the tree is an ordered list of m columns (the forced ones first)
 * and a position k: the node stands for its own subset, and its subtree for
 * every subset that keeps its first k columns. Its children drop column j,
 * for each j from k to m - 1, and keep the first j: each subset is visited
 * once. Everything the subtree needs of the node's triangular factor is the
 * trailing block from row and column k (the response's column last): a
 * child's block is its parent's without column j, made triangular again by
 * Givens rotations, in O((m - j)^2).
 *
 * The bound: a subset's RSS is at most that of any subset of it, so a
 * child's RSS bounds its whole subtree, which reaches the sizes k .. m - 2;
 * where the bound exceeds the nbest-th best RSS found so far at every such
 * size (plus a margin against rounding), the subtree is cut. The best known
 * RSS start from the subsets a backward elimination meets. At nodes with
 * many free columns those columns are reordered first by how much their
 * removal costs, most first, so that the largest subtrees (those that drop
 * an early column) lack the most useful columns and are the likeliest cut.
 *
 * Threads: the top of the tree is expanded breadth first into subtrees, which
 * the threads search depth first, each keeping its own best subsets and
 * merging them into the shared ones now and then. A subtree is cut only
 * when it cannot hold one of the best, whatever order the threads ran in, and
 * each subset's RSS comes from its one path in the tree: the result is the
 * same at any thread count.
 */
#include "methods/bestsubset.h"

#include "internal.h"
#include "core/pool.h"
#include "backend/cuda_loader.h"
#include "math/dense.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Nodes whose free columns number at least the root's less this are
 * reordered by the cost of removing each (an O(q^3) step), the others keep
 * their parent's order. Measured (2-core machine, n = 10^4, p = 40, one
 * thread): reordering every node of 6 or more free columns took 0.25 s
 * (8 strong effects) and 2.5 s (all effects small) for 0.13 M and 0.86 M
 * nodes, almost all of it in the reordering; only the top 4 to 10 levels
 * 0.12 s and 0.47-0.70 s for 1% more nodes; none at all 0.93 s and 25 s for
 * 100 M nodes. */
#define SG_SUBSET_REORDER_LEVELS 6
/* Nodes a worker evaluates between merges of its best subsets into the
 * shared ones (and, on the calling thread, progress reports). */
#define SG_SUBSET_MERGE_NODES 4096
/* The breadth-first split: about this many subtrees per thread, and at most
 * this many bytes of their factors. */
#define SG_SUBSET_TASKS_PER_THREAD 32
#define SG_SUBSET_TASK_BYTES ((size_t)64 << 20)

/* ------------------------------------------------------------------ subsets */

static void sg_mask_set(sg_subset_mask *mask, size_t v) { mask->word[v / 64] |= (uint64_t)1 << (v % 64); }
static void sg_mask_clear(sg_subset_mask *mask, size_t v) { mask->word[v / 64] &= ~((uint64_t)1 << (v % 64)); }

bool sg_subset_before(double rss_a, const sg_subset_mask *a, double rss_b, const sg_subset_mask *b)
{
    if (rss_a != rss_b)
        return rss_a < rss_b;
    for (size_t w = 0; w < SG_SUBSET_MASK_WORDS; ++w) {
        uint64_t differ = a->word[w] ^ b->word[w];
        if (differ != 0)
            return (a->word[w] & (differ & (~differ + 1))) != 0;  /* a holds the lowest differing predictor */
    }
    return false;
}

bool sg_subset_best_init(sg_subset_best *best, size_t columns, size_t nbest)
{
    memset(best, 0, sizeof *best);
    best->columns = columns;
    best->nbest = nbest;
    size_t slots = (columns + 1) * nbest;
    best->count = calloc(columns + 1, sizeof *best->count);
    best->rss = malloc(slots * sizeof *best->rss);
    best->mask = calloc(slots, sizeof *best->mask);
    if (best->count == NULL || best->rss == NULL || best->mask == NULL) {
        sg_subset_best_free(best);
        return false;
    }
    for (size_t i = 0; i < slots; ++i)
        best->rss[i] = INFINITY;
    return true;
}

void sg_subset_best_free(sg_subset_best *best)
{
    free(best->count);
    free(best->rss);
    free(best->mask);
    memset(best, 0, sizeof *best);
}

/* The nbest-th best RSS of a size, or infinity while fewer are known. */
static double sg_best_worst(const sg_subset_best *best, size_t size)
{
    return best->count[size] < best->nbest ? INFINITY : best->rss[size * best->nbest + best->nbest - 1];
}

/* Offers a subset; keeps it when it ranks among the nbest of its size. */
static void sg_best_offer(sg_subset_best *best, size_t size, double rss, const sg_subset_mask *mask)
{
    size_t nbest = best->nbest, count = best->count[size];
    double *rss_list = best->rss + size * nbest;
    sg_subset_mask *mask_list = best->mask + size * nbest;
    if (count == nbest && !sg_subset_before(rss, mask, rss_list[nbest - 1], &mask_list[nbest - 1]))
        return;
    size_t at = count < nbest ? count : nbest - 1;
    while (at > 0 && sg_subset_before(rss, mask, rss_list[at - 1], &mask_list[at - 1])) {
        rss_list[at] = rss_list[at - 1];
        mask_list[at] = mask_list[at - 1];
        --at;
    }
    rss_list[at] = rss;
    mask_list[at] = *mask;
    if (count < nbest)
        best->count[size] = count + 1;
}

/* -------------------------------------------------------------------- nodes */

/* A node: its columns' predictors, its subset and the trailing block of its
 * factor from row and column k (order q = m - k + 1, the response last,
 * column-major, leading dimension q). */
typedef struct sg_node {
    size_t         m, k;
    sg_subset_mask mask;
    size_t        *vars;   /* m */
    double        *block;  /* q x q */
} sg_node;

static double sg_node_rss(const sg_node *node)
{
    size_t q = node->m - node->k + 1;
    double last = node->block[(q - 1) + q * (q - 1)];
    return last * last;
}

/* Drops column r of the triangular block b (order qp, the response last)
 * and restores the triangle by Givens rotations; writes the result's rows
 * and columns from `from` (from <= r) to out, order qp - 1 - from. Rows
 * above r are the parent's: the search's children (from = r) never need them. */
static void sg_block_drop(const double *b, size_t qp, size_t r, size_t from, double *out)
{
    size_t q = qp - 1 - from;
    /* Out's column c is the parent's column from + c (before r) or from +
     * c + 1 (after), rows from .. from + c; below the diagonal of those
     * after r stands the parent's diagonal entry, folded in below. */
    for (size_t c = 0; c < q; ++c) {
        size_t source = from + c < r ? from + c : from + c + 1;
        memcpy(out + q * c, b + from + qp * source, (c + 1) * sizeof *out);
    }
    for (size_t i = r - from; i < q; ++i) {
        double a = out[i + q * i], below = b[(from + i + 1) + qp * (from + i + 1)];
        double rho = sqrt(a * a + below * below);
        if (rho == 0.0)
            continue;
        double inverse = 1.0 / rho, cs = a * inverse, sn = below * inverse;
        out[i + q * i] = rho;
        for (size_t c = i + 1; c < q; ++c) {
            double upper = out[i + q * c], lower = out[(i + 1) + q * c];
            out[i + q * c] = cs * upper + sn * lower;
            out[(i + 1) + q * c] = cs * lower - sn * upper;
        }
    }
}

/* The child of parent that drops its column j (k <= j < m), keeping the
 * first j. child's arrays must hold the parent's sizes. */
static void sg_node_drop(const sg_node *parent, size_t j, sg_node *child)
{
    size_t qp = parent->m - parent->k + 1, r = j - parent->k;
    child->m = parent->m - 1;
    child->k = j;
    child->mask = parent->mask;
    sg_mask_clear(&child->mask, parent->vars[j]);
    memcpy(child->vars, parent->vars, j * sizeof *child->vars);
    memcpy(child->vars + j, parent->vars + j + 1, (parent->m - j - 1) * sizeof *child->vars);
    sg_block_drop(parent->block, qp, r, r, child->block);
}

/* What removing each of the first q - 1 columns of a triangular block (the
 * response last) adds to its RSS: b_i^2 / ((R^-1 R^-T)_ii), with b the
 * block's coefficients. inverse holds (q - 1)^2. False when a diagonal
 * entry is 0 (not after the rank test). */
static bool sg_removal_costs(const double *block, size_t q, double *inverse, double *cost)
{
    size_t f = q - 1;
    for (size_t i = 0; i < f; ++i)
        if (block[i + q * i] == 0.0)
            return false;
    sg_upper_inverse(block, q, f, inverse);
    for (size_t i = 0; i < f; ++i) {
        double coef = 0.0, norm = 0.0;
        for (size_t t = i; t < f; ++t) {
            coef += inverse[i + f * t] * block[t + q * f];
            norm += inverse[i + f * t] * inverse[i + f * t];
        }
        cost[i] = coef * coef / norm;
    }
    return true;
}

/* Reorders the node's free columns (from k) by the RSS their removal would
 * add, largest first (equal costs keep their order), and makes its block
 * triangular again. work holds 2 q^2 + q doubles, order 2 q sizes. */
static void sg_node_reorder(sg_node *node, double *work, size_t *order)
{
    size_t q = node->m - node->k + 1, f = q - 1;
    double *inverse = work, *copy = work + q * q, *cost = copy + q * q;
    if (!sg_removal_costs(node->block, q, inverse, cost))
        return;
    for (size_t i = 0; i < f; ++i)
        order[i] = i;
    for (size_t i = 1; i < f; ++i) {
        size_t moving = order[i], at = i;
        while (at > 0 && cost[order[at - 1]] < cost[moving]) {
            order[at] = order[at - 1];
            --at;
        }
        order[at] = moving;
    }
    bool same = true;
    for (size_t i = 0; i < f && same; ++i)
        same = order[i] == i;
    if (same)
        return;
    size_t *vars = order + q;
    for (size_t i = 0; i < f; ++i)
        vars[i] = node->vars[node->k + order[i]];
    memcpy(node->vars + node->k, vars, f * sizeof *vars);
    const double *b = node->block;
    for (size_t c = 0; c < q; ++c) {
        size_t source = c < f ? order[c] : f;
        for (size_t i = 0; i < q; ++i)
            copy[i + q * c] = i <= source ? b[i + q * source] : 0.0;
    }
    sg_qr_reduce(copy, q, q, q);
    for (size_t c = 0; c < q; ++c)
        for (size_t i = 0; i < q; ++i)
            node->block[i + q * c] = i <= c ? copy[i + q * c] : 0.0;
}

/* ------------------------------------------------------------------- search */

typedef struct sg_search_shared {
    const sg_subset_problem *problem;
    statgpu_context         *context;
    double                  *seed_bound;  /* per size: an RSS at least the nbest-th best's */
    sg_subset_best           best;        /* under lock */
    pthread_mutex_t          lock;
    atomic_int               cancelled;
    atomic_int               failed;      /* out of memory in a worker */
    atomic_uint_fast64_t     nodes;
    double                   done;        /* share of the tree walked or cut, under lock */
    int                      root_free;   /* free columns of the root */
    double                   progress_from, progress_span;
    sg_node                 *tasks;
    size_t                   task_count;
    size_t                   columns;
} sg_search_shared;

/* What one thread searches with. */
typedef struct sg_worker {
    sg_search_shared *shared;
    sg_subset_best    best;        /* found since the last merge */
    double           *threshold;   /* per size: the bound a subtree must beat */
    sg_node          *stack;       /* per depth */
    size_t           *next_child;  /* per depth: the next column to drop, + 1 (0: done) */
    double           *work;
    size_t           *order;
    uint64_t          nodes;
    double            done;
    int               slot;
} sg_worker;

/* The share of the tree a subtree of a node with free columns holds. */
static double sg_subtree_share(const sg_search_shared *shared, size_t free_columns)
{
    return ldexp(1.0, (int)free_columns - shared->root_free);
}

/* Whether a node's columns are reordered before its children are made. */
static bool sg_reorders(const sg_search_shared *shared, const sg_node *node)
{
    size_t free_columns = node->m - node->k;
    return free_columns >= 2 && (int)free_columns + SG_SUBSET_REORDER_LEVELS > shared->root_free;
}

static void sg_worker_refresh(sg_worker *worker)
{
    sg_search_shared *shared = worker->shared;
    size_t columns = shared->columns;
    for (size_t s = 0; s <= columns; ++s) {
        double known = sg_best_worst(&shared->best, s), own = sg_best_worst(&worker->best, s);
        double bound = known < own ? known : own;
        worker->threshold[s] = bound < shared->seed_bound[s] ? bound : shared->seed_bound[s];
    }
}

/* Merges the worker's best into the shared ones and takes the shared
 * thresholds; on the calling thread, reports progress. */
static void sg_worker_merge(sg_worker *worker)
{
    sg_search_shared *shared = worker->shared;
    pthread_mutex_lock(&shared->lock);
    for (size_t s = 0; s <= shared->columns; ++s) {
        size_t nbest = worker->best.nbest;
        for (size_t i = 0; i < worker->best.count[s]; ++i)
            sg_best_offer(&shared->best, s, worker->best.rss[s * nbest + i], &worker->best.mask[s * nbest + i]);
        worker->best.count[s] = 0;
    }
    shared->done += worker->done;
    worker->done = 0.0;
    double done = shared->done;
    sg_worker_refresh(worker);
    pthread_mutex_unlock(&shared->lock);
    atomic_fetch_add(&shared->nodes, worker->nodes);
    worker->nodes = 0;
    if (worker->slot == 0 && !atomic_load(&shared->cancelled)
        && sg_progress_cancelled(shared->context, shared->progress_from + shared->progress_span * (done < 1.0 ? done : 1.0)))
        atomic_store(&shared->cancelled, 1);
}

/* Records a node's own subset. */
static void sg_worker_offer(sg_worker *worker, const sg_node *node, double rss)
{
    const sg_subset_problem *problem = worker->shared->problem;
    size_t size = node->m;
    if (size < problem->min_size || size > problem->max_size)
        return;
    if (rss > worker->threshold[size])
        return;
    sg_best_offer(&worker->best, size, rss, &node->mask);
    double own = sg_best_worst(&worker->best, size);
    if (own < worker->threshold[size])
        worker->threshold[size] = own;
}

/* Whether a subtree that reaches sizes lowest .. highest, every subset of
 * it with an RSS of at least bound, may hold one of the best. */
static bool sg_worker_may_hold(const sg_worker *worker, double bound, size_t lowest, size_t highest)
{
    const sg_subset_problem *problem = worker->shared->problem;
    if (lowest < problem->min_size)
        lowest = problem->min_size;
    if (highest > problem->max_size)
        highest = problem->max_size;
    for (size_t s = lowest; s <= highest; ++s)
        if (bound <= worker->threshold[s] + problem->margin)
            return true;
    return false;
}

/* Whether a child of a node with m columns that drops column j (whose RSS
 * is rss) has a subtree worth searching: sizes j .. m - 2. */
static bool sg_child_worth_expanding(const sg_worker *worker, size_t j, size_t m, double rss)
{
    return m >= 2 && j + 2 <= m && sg_worker_may_hold(worker, rss, j, m - 2);
}

static void sg_node_copy(sg_node *target, const sg_node *source)
{
    size_t q = source->m - source->k + 1;
    target->m = source->m;
    target->k = source->k;
    target->mask = source->mask;
    memcpy(target->vars, source->vars, source->m * sizeof *target->vars);
    memcpy(target->block, source->block, q * q * sizeof *target->block);
}

/* Where a walk of the tree on the host hands the nodes that are not
 * reordered, instead of walking below them (the GPU's tasks); false when
 * it cannot take one. */
typedef bool (*sg_node_sink)(void *sink_context, const sg_node *node);

/* Searches the subtree below node (the node itself already offered),
 * depth first, the children that drop the later columns first; with a sink,
 * only down to the nodes that are not reordered, which go to the sink.
 * False when the sink failed. */
static bool sg_worker_search(sg_worker *worker, const sg_node *root, sg_node_sink sink, void *sink_context)
{
    sg_search_shared *shared = worker->shared;
    size_t depth = 0;
    if (sink != NULL && !sg_reorders(shared, root))
        return root->m == root->k || sink(sink_context, root);
    sg_node_copy(&worker->stack[0], root);
    if (sg_reorders(shared, root))
        sg_node_reorder(&worker->stack[0], worker->work, worker->order);
    worker->next_child[0] = root->m;  /* drops m - 1 first */
    for (;;) {
        sg_node *node = &worker->stack[depth];
        if (worker->next_child[depth] <= node->k) {
            if (depth == 0)
                break;
            --depth;
            continue;
        }
        size_t j = --worker->next_child[depth];
        /* The node's RSS bounds the child and its subtree: sizes j .. m - 1. */
        double parent_rss = sg_node_rss(node);
        size_t child_free = node->m - 1 - j;
        if (!sg_worker_may_hold(worker, parent_rss, j, node->m - 1)) {
            worker->done += sg_subtree_share(shared, child_free);
            continue;
        }
        sg_node *child = &worker->stack[depth + 1];
        sg_node_drop(node, j, child);
        double rss = sg_node_rss(child);
        sg_worker_offer(worker, child, rss);
        worker->done += sg_subtree_share(shared, 0);
        if (++worker->nodes % SG_SUBSET_MERGE_NODES == 0) {
            sg_worker_merge(worker);
            if (atomic_load(&shared->cancelled))
                return true;
        }
        if (!sg_child_worth_expanding(worker, j, node->m, rss)) {
            if (child_free > 0)
                worker->done += sg_subtree_share(shared, child_free) - sg_subtree_share(shared, 0);
            continue;
        }
        bool reordered = sg_reorders(shared, child);
        if (sink != NULL && !reordered) {
            if (!sink(sink_context, child))
                return false;
            continue;
        }
        if (reordered)
            sg_node_reorder(child, worker->work, worker->order);
        ++depth;
        worker->next_child[depth] = child->m;
    }
    return true;
}

static void sg_worker_free(sg_worker *worker);

/* A worker's arrays; on failure none is left. */
static bool sg_worker_init(sg_worker *worker, sg_search_shared *shared, int slot)
{
    memset(worker, 0, sizeof *worker);
    worker->shared = shared;
    worker->slot = slot;
    size_t columns = shared->columns, q = columns + 1;
    worker->threshold = malloc(q * sizeof *worker->threshold);
    worker->stack = calloc(q + 1, sizeof *worker->stack);
    worker->next_child = calloc(q + 1, sizeof *worker->next_child);
    worker->work = malloc(3 * q * q * sizeof *worker->work);
    worker->order = malloc(2 * q * sizeof *worker->order);
    bool ok = worker->threshold && worker->stack && worker->next_child && worker->work && worker->order
              && sg_subset_best_init(&worker->best, columns, shared->problem->nbest);
    for (size_t d = 0; ok && d <= q; ++d) {
        worker->stack[d].vars = malloc(q * sizeof(size_t));
        worker->stack[d].block = malloc(q * q * sizeof(double));
        ok = worker->stack[d].vars && worker->stack[d].block;
    }
    if (!ok)
        sg_worker_free(worker);
    return ok;
}

static void sg_worker_free(sg_worker *worker)
{
    if (worker->stack != NULL)
        for (size_t d = 0; d <= worker->shared->columns + 1; ++d) {
            free(worker->stack[d].vars);
            free(worker->stack[d].block);
        }
    free(worker->stack);
    free(worker->threshold);
    free(worker->next_child);
    free(worker->work);
    free(worker->order);
    if (worker->best.count != NULL)
        sg_subset_best_free(&worker->best);
}

/* Per thread: a worker, made at its first task. */
typedef struct sg_search_team {
    sg_search_shared *shared;
    sg_worker        *workers;
    bool             *ready;
} sg_search_team;

static void sg_search_task(void *context, size_t t, int slot)
{
    sg_search_team *team = context;
    sg_search_shared *shared = team->shared;
    if (atomic_load(&shared->cancelled) || atomic_load(&shared->failed))
        return;
    sg_worker *worker = &team->workers[slot];
    if (!team->ready[slot]) {
        if (!sg_worker_init(worker, shared, slot)) {
            atomic_store(&shared->failed, 1);
            return;
        }
        team->ready[slot] = true;
        pthread_mutex_lock(&shared->lock);
        sg_worker_refresh(worker);
        pthread_mutex_unlock(&shared->lock);
    }
    (void)sg_worker_search(worker, &shared->tasks[t], NULL, NULL);
    sg_worker_merge(worker);
}

/* ------------------------------------------------------------ start bounds */

/* Backward elimination from the full model: at each step every free
 * column's removal gives a subset of the next size down, of RSS the node's
 * plus that removal's cost; the nbest smallest of them bound that size's
 * nbest-th best (with an allowance for the costs' rounding). The cheapest
 * removal is taken. work holds 3 q^2 doubles. */
static void sg_seed_bounds(const sg_subset_problem *problem, const sg_node *root, double *seed_bound, double *work)
{
    size_t columns = problem->columns, nbest = problem->nbest;
    for (size_t s = 0; s <= columns; ++s)
        seed_bound[s] = INFINITY;
    size_t q = root->m - root->k + 1;
    double *block = work, *next = work + q * q, *inverse = next + q * q, *cost = inverse + q * q - q;
    memcpy(block, root->block, q * q * sizeof *block);
    for (size_t m = root->m; m > root->k; --m, --q) {
        size_t f = q - 1;
        double rss = block[f + q * f] * block[f + q * f];
        if (!sg_removal_costs(block, q, inverse, cost))
            return;
        size_t cheapest = 0;
        for (size_t i = 1; i < f; ++i)
            if (cost[i] < cost[cheapest])
                cheapest = i;
        if (f >= nbest && m - 1 >= problem->min_size && m - 1 <= problem->max_size) {
            /* The nbest-th smallest cost, by partial selection in place. */
            for (size_t i = 0; i < nbest; ++i)
                for (size_t t = i + 1; t < f; ++t)
                    if (cost[t] < cost[i]) {
                        double swap = cost[i];
                        cost[i] = cost[t];
                        cost[t] = swap;
                    }
            double bound = (rss + cost[nbest - 1]) * (1.0 + 1e-8) + problem->margin;
            if (bound < seed_bound[m - 1])
                seed_bound[m - 1] = bound;
        }
        sg_block_drop(block, q, cheapest, 0, next);
        double *swap = block;
        block = next;
        next = swap;
    }
}

/* ------------------------------------------------------------ on the GPU */

/* The subsets found on the GPU the engine takes at most (32 bytes each). */
#define SG_SUBSET_DEVICE_FOUND ((size_t)1 << 18)

/* The nodes handed to the GPU, their blocks one after another. */
typedef struct sg_device_tasks {
    statgpu_cuda_subset_node *nodes;
    size_t                    count, capacity;
    double                   *blocks;
    size_t                    doubles, block_capacity;
} sg_device_tasks;

static bool sg_device_tasks_add(sg_device_tasks *tasks, const sg_node *node)
{
    size_t q = node->m - node->k + 1;
    if (tasks->count == tasks->capacity) {
        size_t capacity = tasks->capacity ? 2 * tasks->capacity : 256;
        statgpu_cuda_subset_node *grown = realloc(tasks->nodes, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        tasks->nodes = grown;
        tasks->capacity = capacity;
    }
    if (tasks->doubles + q * q > tasks->block_capacity) {
        size_t capacity = tasks->block_capacity ? 2 * tasks->block_capacity : 65536;
        while (capacity < tasks->doubles + q * q)
            capacity *= 2;
        double *grown = realloc(tasks->blocks, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        tasks->blocks = grown;
        tasks->block_capacity = capacity;
    }
    statgpu_cuda_subset_node *task = &tasks->nodes[tasks->count++];
    memset(task, 0, sizeof *task);
    task->m = (uint32_t)node->m;
    task->k = (uint32_t)node->k;
    task->child_end = (uint32_t)node->m;
    for (size_t w = 0; w < 2 && w < SG_SUBSET_MASK_WORDS; ++w)
        task->mask[w] = node->mask.word[w];
    for (size_t c = 0; c < node->m; ++c)
        task->vars[c] = (uint8_t)node->vars[c];
    task->block_offset = tasks->doubles;
    memcpy(tasks->blocks + tasks->doubles, node->block, q * q * sizeof *tasks->blocks);
    tasks->doubles += q * q;
    return true;
}

static bool sg_device_sink(void *sink_context, const sg_node *node)
{
    return sg_device_tasks_add(sink_context, node);
}

typedef struct sg_device_cancel {
    statgpu_context *context;
    double           fraction;
} sg_device_cancel;

static int sg_device_cancelled(void *user_data)
{
    sg_device_cancel *cancel = user_data;
    return sg_progress_cancelled(cancel->context, cancel->fraction) ? 1 : 0;
}

/* The subtrees below the reordered top of the tree, on the GPU; the host's
 * part of the tree offered into lead. STATGPU_CUDA_OK, or why not (in
 * device, with lead's best then holding only real subsets, to be cleared). */
static statgpu_cuda_status sg_search_on_device(sg_worker *lead, const sg_node *root, sg_subset_device *device)
{
    sg_search_shared *shared = lead->shared;
    const sg_subset_problem *problem = shared->problem;
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (module == NULL || module->subset == NULL) {
        snprintf(device->message, sizeof device->message, "the CUDA module has no best subset search");
        return STATGPU_CUDA_NO_DEVICE;
    }
    sg_device_tasks tasks = { 0 };
    statgpu_cuda_subset_found *found = malloc(SG_SUBSET_DEVICE_FOUND * sizeof *found);
    double *bounds = malloc((shared->columns + 1) * sizeof *bounds);
    statgpu_cuda_status status = STATGPU_CUDA_OK;
    /* The top of the tree on the host, down to the nodes not reordered. */
    if (found == NULL || bounds == NULL || !sg_worker_search(lead, root, sg_device_sink, &tasks)) {
        snprintf(device->message, sizeof device->message, "out of host memory for the GPU's subset search");
        status = STATGPU_CUDA_OUT_OF_MEMORY;
        goto done;
    }
    sg_worker_merge(lead);
    for (size_t s = 0; s <= shared->columns; ++s)
        bounds[s] = lead->threshold[s];
    size_t found_count = 0;
    uint64_t nodes = 0;
    statgpu_cuda_timing timing = { 0.0, 0.0 };
    sg_device_cancel cancel = { shared->context, shared->progress_from + 0.5 * shared->progress_span };
    status = module->subset->search(shared->context->cuda_state, tasks.nodes, tasks.count,
                                    tasks.blocks ? tasks.blocks : bounds, tasks.doubles, shared->columns,
                                    problem->min_size, problem->max_size, problem->margin, bounds, found,
                                    SG_SUBSET_DEVICE_FOUND, &found_count, &nodes, sg_device_cancelled, &cancel,
                                    &timing, device->message, sizeof device->message);
    device->transfer_seconds += timing.transfer_seconds;
    device->compute_seconds += timing.compute_seconds;
    if (status != STATGPU_CUDA_OK)
        goto done;
    for (size_t i = 0; i < found_count; ++i) {
        sg_subset_mask mask = { { 0 } };
        for (size_t w = 0; w < 2 && w < SG_SUBSET_MASK_WORDS; ++w)
            mask.word[w] = found[i].mask[w];
        size_t size = found[i].size;
        if (size >= problem->min_size && size <= problem->max_size)
            sg_best_offer(&lead->best, size, found[i].rss, &mask);
    }
    lead->nodes += nodes;
    lead->done = 1.0;
    sg_worker_merge(lead);
done:
    free(tasks.nodes);
    free(tasks.blocks);
    free(found);
    free(bounds);
    return status;
}

static void sg_subset_best_clear(sg_subset_best *best)
{
    for (size_t s = 0; s <= best->columns; ++s) {
        best->count[s] = 0;
        for (size_t i = 0; i < best->nbest; ++i)
            best->rss[s * best->nbest + i] = INFINITY;
    }
}

/* --------------------------------------------------------------- the driver */

statgpu_status sg_subset_search(statgpu_context *context, const sg_subset_problem *problem, int thread_count,
                                double progress_from, double progress_to, sg_subset_device *device,
                                sg_subset_best *best, uint64_t *nodes)
{
    size_t columns = problem->columns, q = columns + 1;
    sg_search_shared shared;
    memset(&shared, 0, sizeof shared);
    shared.problem = problem;
    shared.context = context;
    shared.columns = columns;
    shared.root_free = (int)(columns - problem->forced);
    shared.progress_from = progress_from;
    shared.progress_span = progress_to - progress_from;
    atomic_init(&shared.cancelled, 0);
    atomic_init(&shared.failed, 0);
    atomic_init(&shared.nodes, 0);
    pthread_mutex_init(&shared.lock, NULL);
    statgpu_status status = STATGPU_OK;
    sg_worker lead;
    bool lead_ready = false;
    sg_node *tasks = NULL;
    size_t task_count = 0, task_capacity = 0;
    double *task_blocks = NULL;
    size_t *task_vars = NULL;
    sg_search_team team = { &shared, NULL, NULL };
    shared.seed_bound = malloc(q * sizeof *shared.seed_bound);
    if (shared.seed_bound == NULL || !sg_subset_best_init(&shared.best, columns, problem->nbest)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
        goto done;
    }
    for (size_t s = 0; s <= columns; ++s)
        shared.seed_bound[s] = INFINITY;
    if (!sg_worker_init(&lead, &shared, 0)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
        goto done;
    }
    lead_ready = true;

    /* The root: every column, its whole factor from row `forced`. */
    sg_node root = { columns, problem->forced, { { 0 } }, lead.stack[q].vars, lead.stack[q].block };
    memcpy(root.vars, problem->vars, columns * sizeof *root.vars);
    for (size_t c = 0; c < columns; ++c)
        sg_mask_set(&root.mask, problem->vars[c]);
    size_t qr = columns - problem->forced + 1;
    for (size_t c = 0; c < qr; ++c)
        for (size_t i = 0; i < qr; ++i)
            root.block[i + qr * c] = i <= c ? problem->r[(problem->forced + i) + q * (problem->forced + c)] : 0.0;
    sg_seed_bounds(problem, &root, shared.seed_bound, lead.work);
    sg_worker_refresh(&lead);
    sg_worker_offer(&lead, &root, sg_node_rss(&root));
    lead.nodes = 1;

    if (device != NULL && device->wanted && problem->nbest == 1) {
        device->status = sg_search_on_device(&lead, &root, device);
        if (device->status == STATGPU_CUDA_OK) {
            device->ran = true;
            task_count = 0;  /* nothing left for the CPU */
            goto hand_over;
        }
        if (device->status == STATGPU_CUDA_CANCELLED) {
            status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
            goto done;
        }
        /* Start again on the CPU: the subsets offered so far would be met twice. */
        sg_subset_best_clear(&shared.best);
        sg_subset_best_clear(&lead.best);
        shared.done = lead.done = 0.0;
        sg_worker_refresh(&lead);
        sg_worker_offer(&lead, &root, sg_node_rss(&root));
    }

    /* Breadth first from the root until there are enough subtrees for the
     * threads (one thread: the root is the one subtree). */
    size_t wanted = thread_count > 1 ? (size_t)thread_count * SG_SUBSET_TASKS_PER_THREAD : 1;
    size_t max_by_bytes = SG_SUBSET_TASK_BYTES / (qr * qr * sizeof(double) + q * sizeof(size_t));
    if (wanted > max_by_bytes)
        wanted = max_by_bytes > 0 ? max_by_bytes : 1;
    task_capacity = wanted * (qr + 1) + 1;
    tasks = calloc(task_capacity, sizeof *tasks);
    task_blocks = malloc(task_capacity * qr * qr * sizeof *task_blocks);
    task_vars = malloc(task_capacity * q * sizeof *task_vars);
    if (tasks == NULL || task_blocks == NULL || task_vars == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
        goto done;
    }
    for (size_t t = 0; t < task_capacity; ++t) {
        tasks[t].block = task_blocks + t * qr * qr;
        tasks[t].vars = task_vars + t * q;
    }
    sg_node_copy(&tasks[0], &root);
    task_count = 1;
    while (task_count < wanted) {
        /* Expand the whole level: each task's children replace it. */
        size_t level_end = task_count, produced = 0;
        sg_node *next = tasks + level_end;
        bool room = true;
        for (size_t t = 0; t < level_end && room; ++t) {
            sg_node *node = &tasks[t];
            if (sg_reorders(&shared, node))
                sg_node_reorder(node, lead.work, lead.order);
            for (size_t j = node->m; j-- > node->k;) {
                if (level_end + produced >= task_capacity) {
                    room = false;
                    break;
                }
                size_t child_free = node->m - 1 - j;
                if (!sg_worker_may_hold(&lead, sg_node_rss(node), j, node->m - 1)) {
                    lead.done += sg_subtree_share(&shared, child_free);
                    continue;
                }
                sg_node *child = &next[produced];
                sg_node_drop(node, j, child);
                double rss = sg_node_rss(child);
                sg_worker_offer(&lead, child, rss);
                ++lead.nodes;
                lead.done += sg_subtree_share(&shared, 0);
                if (sg_child_worth_expanding(&lead, j, node->m, rss))
                    ++produced;
                else if (child_free > 0)
                    lead.done += sg_subtree_share(&shared, child_free) - sg_subtree_share(&shared, 0);
            }
        }
        if (!room) {
            /* Out of room mid-level: search the level as it stands (its
             * expanded children were offered and must not be searched twice,
             * so undo is not possible; stop expanding before this happens). */
            status = sg_fail(context, STATGPU_ERROR_INTERNAL, "the subset search's split overflowed");
            goto done;
        }
        /* The expanded level's nodes are done; their children are the tasks. */
        for (size_t t = 0; t < produced; ++t)
            sg_node_copy(&tasks[t], &next[t]);
        task_count = produced;
        if (produced == 0 || produced * (qr + 1) + produced > task_capacity)
            break;
    }
    sg_worker_merge(&lead);
    if (atomic_load(&shared.cancelled)) {
        status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
        goto done;
    }
    if (task_count == 1 && tasks[0].m == root.m && thread_count <= 1) {
        /* One thread: the root's subtree, depth first. */
        (void)sg_worker_search(&lead, &tasks[0], NULL, NULL);
        sg_worker_merge(&lead);
    } else if (task_count > 0) {
        shared.tasks = tasks;
        shared.task_count = task_count;
        int team_size = thread_count > 1 ? thread_count : 1;
        team.workers = calloc((size_t)team_size, sizeof *team.workers);
        team.ready = calloc((size_t)team_size, sizeof *team.ready);
        if (team.workers == NULL || team.ready == NULL) {
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
            goto done;
        }
        sg_parallel_for(team_size, task_count, sg_search_task, &team);
        for (int s = 0; s < team_size; ++s)
            if (team.ready[s])
                sg_worker_free(&team.workers[s]);
    }
    if (atomic_load(&shared.failed)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
        goto done;
    }
    if (atomic_load(&shared.cancelled)) {
        status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
        goto done;
    }
hand_over:
    /* Hand over the shared best. */
    for (size_t s = 0; s <= columns; ++s)
        for (size_t i = 0; i < shared.best.count[s]; ++i)
            sg_best_offer(best, s, shared.best.rss[s * problem->nbest + i], &shared.best.mask[s * problem->nbest + i]);
    *nodes += atomic_load(&shared.nodes);

done:
    free(team.workers);
    free(team.ready);
    free(tasks);
    free(task_blocks);
    free(task_vars);
    if (lead_ready)
        sg_worker_free(&lead);
    if (shared.best.count != NULL)
        sg_subset_best_free(&shared.best);
    free(shared.seed_bound);
    pthread_mutex_destroy(&shared.lock);
    return status;
}
