/*
 * kmeans_cpu.c: the CPU passes of k-means: the data scan, k-means++ and
 * k-means|| initialisation, and Lloyd's iterations with the assignment and
 * the partial sums fused in one pass over the data.
 *
 * Reproducible whatever the thread count: rows are cut into blocks that depend
 * on the problem's size only; each block is summed in row order into its own
 * partial sums (no atomics), and the blocks' partials are added in block
 * order (the scan's, in a fixed tree over that order). Threads only decide
 * which block runs where.
 */
#include "internal.h"

#include "core/clock.h"
#include "core/pool.h"
#include "methods/kmeans_screen.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Blocks of at least this many rows: up to this size one block sums the rows
 * in order, exactly as R's kmeans does. */
#define SG_BLOCK_ROWS_MIN ((size_t)1024)
/* At most this many blocks: enough for every core, few enough to add up. */
#define SG_BLOCKS_MAX ((size_t)256)
/* The per-block partial sums stay under this many doubles (64 MiB). */
#define SG_PARTIALS_MAX ((size_t)1 << 23)
/* Rows processed together: the screen's tile (kmeans_screen.h); without
 * the screen their distances are computed column by column in vectors that
 * fit the L1 cache. */
#define SG_TILE_ROWS SG_SCREEN_TILE_ROWS

/* k-means|| (Bahmani et al. 2012): rounds and oversampling factor ell = 2k,
 * the values of the paper's experiments. */
#define SG_PARALLEL_ROUNDS 5
/* Lloyd iterations on the weighted candidates of k-means||. */
#define SG_PARALLEL_RECLUSTER_ITERATIONS 300

struct sg_kmeans_workspace {
    size_t   block_count, block_rows;
    size_t   trial_count;     /* k-means++ candidates per step */
    double  *block_sums;      /* block_count x max(k, 2) x n_vars: cluster sums, or the scan's means and squares */
    size_t  *block_counts;    /* block_count x k */
    double  *block_wss;       /* block_count x k */
    double  *block_values;    /* block_count x max(trial_count, 1): one or more scalars per block */
    size_t  *block_changed;   /* block_count */
    double  *prefix;          /* block_count + 1 */
    double  *sums;            /* k x n_vars */
    size_t  *counts;          /* k */
    double  *wss;             /* k */
    double  *next_centroids;  /* k x n_vars */
    double  *closest;         /* n_obs, allocated at first use */
    int32_t *nearest;         /* n_obs, allocated at first use (k-means||) */
    bool     screening;       /* Lloyd's assignment screens by the product form */
    sg_kmeans_screen screen;
    double  *screen_scratch;  /* thread_count x screen_stride, 32-byte aligned */
    size_t   screen_stride;
};

/* ------------------------------------------------------------ random streams */

/* Uniform on [0, 1). */
static inline double sg_rng_uniform(sg_rng *rng) { return (double)(sg_rng_next(rng) >> 11) * 0x1p-53; }

/* Counter-based: the same (key, round, row) always gives the same uniform on
 * [0, 1), whichever thread asks. */
static inline double sg_counter_uniform(uint64_t key, unsigned round, size_t row)
{
    uint64_t bits = sg_mix64(key + sg_mix64((uint64_t)row ^ ((uint64_t)round << 56)));
    return (double)(bits >> 11) * 0x1p-53;
}

uint64_t sg_kmeans_stream(uint64_t context_seed, uint64_t call_seed, size_t run)
{
    return sg_derive_stream(context_seed, call_seed, 0xD1B54A32D192ED03ull, run);
}

/* -------------------------------------------------------------- workspace */

static void sg_block_range(const sg_kmeans_workspace *workspace, size_t n_obs, size_t block, size_t *begin,
                           size_t *end)
{
    *begin = block * workspace->block_rows;
    *end = *begin + workspace->block_rows < n_obs ? *begin + workspace->block_rows : n_obs;
}

/* The rows of blocks first .. last - 1. */
static size_t sg_rows_of_blocks(const sg_kmeans_workspace *workspace, size_t n_obs, size_t first, size_t last)
{
    size_t end = last * workspace->block_rows < n_obs ? last * workspace->block_rows : n_obs;
    return end - first * workspace->block_rows;
}

/* The screen of Lloyd's assignment (kmeans_screen.h) where it pays: from
 * SG_SCREEN_MIN_K centroids, and while every thread's scratch (the tile of
 * shifted rows, and the block's sums row by row) stays within
 * SG_PARTIALS_MAX doubles in all. False when out of memory. */
#define SG_SCREEN_MIN_K ((size_t)2)

static bool sg_screen_create(sg_kmeans_workspace *workspace, const sg_kmeans_problem *problem)
{
    size_t threads = problem->thread_count > 1 ? (size_t)problem->thread_count : 1;
    size_t stride = sg_kmeans_screen_scratch_count(problem->n_vars) + problem->k * problem->n_vars;
    stride = (stride + 3) / 4 * 4;  /* each thread's scratch 32-byte aligned */
    if (problem->k < SG_SCREEN_MIN_K || stride > SG_PARTIALS_MAX / threads)
        return true;
    if (!sg_kmeans_screen_create(&workspace->screen, problem->k, problem->n_vars))
        return false;
    workspace->screen_scratch = aligned_alloc(32, threads * stride * sizeof(double));
    workspace->screen_stride = stride;
    workspace->screening = workspace->screen_scratch != NULL;
    return workspace->screening;
}

sg_kmeans_workspace *sg_cpu_kmeans_workspace_create(const sg_kmeans_problem *problem)
{
    size_t n = problem->n_obs, k = problem->k, d = problem->n_vars;
    sg_kmeans_workspace *workspace = calloc(1, sizeof *workspace);
    if (workspace == NULL)
        return NULL;
    size_t blocks = (n + SG_BLOCK_ROWS_MIN - 1) / SG_BLOCK_ROWS_MIN;
    if (blocks > SG_BLOCKS_MAX)
        blocks = SG_BLOCKS_MAX;
    size_t per_block = k * (d + 2) + 1;
    if (blocks > SG_PARTIALS_MAX / per_block)
        blocks = SG_PARTIALS_MAX / per_block;
    if (blocks < 1)
        blocks = 1;
    workspace->block_rows = (n + blocks - 1) / blocks;
    workspace->block_count = (n + workspace->block_rows - 1) / workspace->block_rows;
    workspace->trial_count = 2 + (size_t)floor(log((double)k));

    size_t b = workspace->block_count;
    size_t values = workspace->trial_count > 1 ? workspace->trial_count : 1;
    workspace->block_sums = malloc(b * (k > 2 ? k : 2) * d * sizeof(double));
    workspace->block_counts = malloc(b * k * sizeof(size_t));
    workspace->block_wss = malloc(b * k * sizeof(double));
    workspace->block_values = malloc(b * values * sizeof(double));
    workspace->block_changed = malloc(b * sizeof(size_t));
    workspace->prefix = malloc((b + 1) * sizeof(double));
    workspace->sums = malloc(k * d * sizeof(double));
    workspace->counts = malloc(k * sizeof(size_t));
    workspace->wss = malloc(k * sizeof(double));
    workspace->next_centroids = malloc(k * d * sizeof(double));
    if (!sg_screen_create(workspace, problem)) {
        sg_cpu_kmeans_workspace_destroy(workspace);
        return NULL;
    }
    if (!workspace->block_sums || !workspace->block_counts || !workspace->block_wss || !workspace->block_values
        || !workspace->block_changed || !workspace->prefix || !workspace->sums || !workspace->counts
        || !workspace->wss || !workspace->next_centroids) {
        sg_cpu_kmeans_workspace_destroy(workspace);
        return NULL;
    }
    return workspace;
}

void sg_cpu_kmeans_workspace_destroy(sg_kmeans_workspace *workspace)
{
    if (workspace == NULL)
        return;
    free(workspace->block_sums);
    free(workspace->block_counts);
    free(workspace->block_wss);
    free(workspace->block_values);
    free(workspace->block_changed);
    free(workspace->prefix);
    free(workspace->sums);
    free(workspace->counts);
    free(workspace->wss);
    free(workspace->next_centroids);
    free(workspace->closest);
    free(workspace->nearest);
    sg_kmeans_screen_destroy(&workspace->screen);
    free(workspace->screen_scratch);
    free(workspace);
}

static bool sg_ensure_closest(sg_kmeans_workspace *workspace, size_t n_obs)
{
    if (workspace->closest == NULL)
        workspace->closest = malloc(n_obs * sizeof(double));
    return workspace->closest != NULL;
}

/* Adds the blocks' scalars in block order; prefix[b] is the sum before block b. */
static double sg_add_block_values(sg_kmeans_workspace *workspace, const double *values, size_t stride)
{
    double total = 0.0;
    for (size_t b = 0; b < workspace->block_count; ++b) {
        workspace->prefix[b] = total;
        total += values[b * stride];
    }
    workspace->prefix[workspace->block_count] = total;
    return total;
}

/* ------------------------------------------------------- parallel passes */

/* What one parallel pass over the row blocks reads and writes; each pass
 * uses the fields its body names. */
typedef struct sg_pass {
    const sg_kmeans_problem *problem;
    sg_kmeans_workspace     *workspace;
    const double            *centres;   /* centroids (leading dimension k), or row-major centres */
    int32_t                 *labels;
    const int32_t           *fixed_labels;
    double                  *closest;   /* each row's D^2 */
    int32_t                 *nearest;   /* each row's nearest candidate */
    size_t                  *picks;     /* per block */
    size_t                   from, to;  /* candidates from .. to - 1 */
    uint64_t                 key;
    unsigned                 round;
    double                   potential, oversampling;
    bool                     update;
} sg_pass;

/* body(pass, b, slot) for every row block b, on the problem's threads. */
static void sg_run_pass(sg_pass *pass, sg_block_body body)
{
    sg_parallel_for(pass->problem->thread_count, pass->workspace->block_count, body, pass);
}

/* ------------------------------------------------------------------- scan */

/* One pass over the data gives the finiteness and magnitude checks and the
 * total sum of squares. Values are taken relative to a pivot per variable, a
 * value of the data near its middle, so that no step loses digits to the
 * data's offset. Each variable of a block is read in chunks of
 * SG_SCAN_CHUNK_ROWS rows: the chunk's sum, then, while the chunk is still in
 * the L1 cache (16 KiB), its squared deviations around its mean by the
 * corrected two-pass algorithm (Chan, Golub and LeVeque 1983: the square of
 * the deviations' sum, divided by the count, taken off). Chunks are joined
 * into their block's (count, mean, squares) in row order, and blocks in a
 * fixed tree over the block order, by the same authors' pairwise update: the
 * result depends on the block layout alone, not on the threads. Data around
 * 1e9 and 1e12 give totals within 2e-16 of a long double reference, where
 * the two passes over the data this replaced were 1e-13 and 1e-7 off
 * (bench/NOTES.md, k-means, Host scan). */
#define SG_SCAN_CHUNK_ROWS ((size_t)2048)
/* Rows, spread over the column, whose median is the variable's pivot. */
#define SG_PIVOT_ROWS ((size_t)15)

/* The median of the finite values among SG_PIVOT_ROWS rows spread evenly
 * over the column (a data value: a constant column has squares 0 exactly),
 * 0 where none is finite (the scan then reports the data). */
static double sg_scan_pivot(const double *column, size_t n_obs)
{
    double sample[SG_PIVOT_ROWS];
    size_t count = 0, rows = n_obs < SG_PIVOT_ROWS ? n_obs : SG_PIVOT_ROWS;
    for (size_t s = 0; s < rows; ++s) {
        double value = column[rows > 1 ? s * (n_obs - 1) / (rows - 1) : 0];
        if (!isfinite(value))
            continue;
        size_t slot = count++;
        for (; slot > 0 && sample[slot - 1] > value; --slot)
            sample[slot] = sample[slot - 1];
        sample[slot] = value;
    }
    return count > 0 ? sample[count / 2] : 0.0;
}

/* A chunk's loops keep SG_SCAN_PAIRS pairs of partial sums (two doubles in
 * one SSE2 register; GCC's and Clang's vector extension): several vector
 * additions in flight instead of one addition's latency a value, the same
 * additions in the same order on every machine. */
typedef double  sg_pair __attribute__((vector_size(16)));
typedef int64_t sg_pair_bits __attribute__((vector_size(16)));
#define SG_SCAN_PAIRS 4

static inline sg_pair sg_pair_load(const double *x)
{
    sg_pair pair;
    memcpy(&pair, x, sizeof pair);
    return pair;
}

static inline sg_pair sg_pair_abs(sg_pair a)
{
    const sg_pair_bits magnitude = { INT64_MAX, INT64_MAX };
    return (sg_pair)((sg_pair_bits)a & magnitude);
}

/* a > b ? a : b in each lane, so NaN in a is passed over (MAXPD's rule). */
static inline sg_pair sg_pair_max(sg_pair a, sg_pair b)
{
#ifdef __SSE2__
    return _mm_max_pd(a, b);
#else
    sg_pair_bits greater = a > b;
    return (sg_pair)(((sg_pair_bits)a & greater) | ((sg_pair_bits)b & ~greater));
#endif
}

/* The pairs' sum, in a fixed order. */
static inline double sg_pairs_sum(const sg_pair *pairs)
{
    sg_pair sum = (pairs[0] + pairs[1]) + (pairs[2] + pairs[3]);
    return sum[0] + sum[1];
}

/* Sum over the rows of x - pivot; *largest becomes the largest |x| seen. */
static double sg_chunk_sum(const double *x, size_t rows, double pivot, double *largest)
{
    const sg_pair pivots = { pivot, pivot };
    sg_pair sum[SG_SCAN_PAIRS] = { { 0 } }, magnitude[SG_SCAN_PAIRS] = { { 0 } };
    size_t i = 0;
    for (; i + 2 * SG_SCAN_PAIRS <= rows; i += 2 * SG_SCAN_PAIRS)
        for (size_t j = 0; j < SG_SCAN_PAIRS; ++j) {
            sg_pair value = sg_pair_load(x + i + 2 * j);
            sum[j] += value - pivots;
            magnitude[j] = sg_pair_max(sg_pair_abs(value), magnitude[j]);
        }
    double tail = 0.0, big = *largest;
    for (; i < rows; ++i) {
        tail += x[i] - pivot;
        double value = fabs(x[i]);
        big = value > big ? value : big;
    }
    for (size_t j = 0; j < SG_SCAN_PAIRS; ++j)
        for (size_t lane = 0; lane < 2; ++lane)
            big = magnitude[j][lane] > big ? magnitude[j][lane] : big;
    *largest = big;
    return sg_pairs_sum(sum) + tail;
}

/* Sums over the rows of e = (x - pivot) - mean and of e^2; the first in
 * *deviation_sum. Not x - (pivot + mean): on data far from 0 that centre
 * lies on the data's own grid of doubles, and on data spaced by a coarser
 * grid (1e9 + multiples of 2^-20) the deviations' squares then share their
 * last bits, so that the sum's rounding errors all lean one way (3.5e-15
 * relative on 524,288 such rows, 1e-17 this way). */
static double sg_chunk_squares(const double *x, size_t rows, double pivot, double mean, double *deviation_sum)
{
    const sg_pair pivots = { pivot, pivot }, means = { mean, mean };
    sg_pair sum[SG_SCAN_PAIRS] = { { 0 } }, squares[SG_SCAN_PAIRS] = { { 0 } };
    size_t i = 0;
    for (; i + 2 * SG_SCAN_PAIRS <= rows; i += 2 * SG_SCAN_PAIRS)
        for (size_t j = 0; j < SG_SCAN_PAIRS; ++j) {
            sg_pair deviation = (sg_pair_load(x + i + 2 * j) - pivots) - means;
            sum[j] += deviation;
            squares[j] += deviation * deviation;
        }
    double tail = 0.0, tail_squares = 0.0;
    for (; i < rows; ++i) {
        double deviation = (x[i] - pivot) - mean;
        tail += deviation;
        tail_squares += deviation * deviation;
    }
    *deviation_sum = sg_pairs_sum(sum) + tail;
    return sg_pairs_sum(squares) + tail_squares;
}

/* Chan, Golub and LeVeque's update: (count, mean, squares) of a set joined
 * by a disjoint one. From count 0 the result is the other set's exactly. */
static void sg_moments_join(size_t *count, double *mean, double *squares, size_t other_count, double other_mean,
                            double other_squares)
{
    size_t total = *count + other_count;
    double difference = other_mean - *mean;
    double share = (double)other_count / (double)total;
    *mean += difference * share;
    *squares += other_squares + difference * difference * share * (double)*count;
    *count = total;
}

/* Per block and variable: the mean relative to the pivot (pass->centres) and
 * the sum of squared deviations in block_sums (block b's d means, then its
 * d sums of squares); per block the largest magnitude in block_values and
 * the first row and variable that are not finite. */
static void sg_scan_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    const sg_kmeans_problem *problem = pass->problem;
    sg_kmeans_workspace *workspace = pass->workspace;
    const size_t n = problem->n_obs, d = problem->n_vars, ld = problem->ld;
    size_t begin, end;
    sg_block_range(workspace, n, b, &begin, &end);
    double *means = workspace->block_sums + b * 2 * d, *squares = means + d;
    double largest = 0.0;
    size_t first_row = SIZE_MAX, first_var = SIZE_MAX;
    for (size_t v = 0; v < d; ++v) {
        const double *column = problem->data + ld * v;
        const double pivot = pass->centres[v];
        size_t count = 0;
        double mean = 0.0, block_squares = 0.0;
        bool finite = true;
        for (size_t chunk = begin; chunk < end; chunk += SG_SCAN_CHUNK_ROWS) {
            size_t rows = end - chunk < SG_SCAN_CHUNK_ROWS ? end - chunk : SG_SCAN_CHUNK_ROWS;
            double sum = sg_chunk_sum(column + chunk, rows, pivot, &largest);
            finite = finite && isfinite(sum);
            double chunk_mean = sum / (double)rows, deviation_sum;
            double chunk_squares = sg_chunk_squares(column + chunk, rows, pivot, chunk_mean, &deviation_sum);
            /* What chunk_mean's rounding added to the squares is taken off,
             * and the mean refined. */
            chunk_squares -= deviation_sum * deviation_sum / (double)rows;
            chunk_mean += deviation_sum / (double)rows;
            sg_moments_join(&count, &mean, &block_squares, rows, chunk_mean, chunk_squares);
        }
        means[v] = mean;
        squares[v] = block_squares;
        if (!finite)
            for (size_t i = begin; i < end && i < first_row; ++i)
                if (!isfinite(column[i])) {
                    first_row = i;
                    first_var = v;
                }
    }
    workspace->block_values[b] = largest;
    workspace->block_changed[b] = first_row;
    workspace->block_counts[b] = first_var;
}

void sg_cpu_kmeans_scan(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace, sg_kmeans_scan *scan)
{
    const size_t n = problem->n_obs, d = problem->n_vars, ld = problem->ld;
    const size_t blocks = workspace->block_count;
    /* Per block and variable: the mean and the squared deviations in
     * block_sums (room for blocks x max(k, 2) x d), the largest magnitude in
     * block_values; per block the first bad row and variable. */
    double *partial = workspace->block_sums;
    const double *block_max = workspace->block_values;
    const size_t *bad_row = workspace->block_changed, *bad_var = workspace->block_counts;
    double *pivots = workspace->next_centroids;  /* k x d >= d */
    for (size_t v = 0; v < d; ++v)
        pivots[v] = sg_scan_pivot(problem->data + ld * v, n);

    sg_pass pass = { .problem = problem, .workspace = workspace, .centres = pivots };
    sg_run_pass(&pass, sg_scan_block);

    scan->finite = true;
    scan->first_bad_is_nan = false;
    scan->bad_row = scan->bad_var = 0;
    scan->max_abs = 0.0;
    for (size_t b = 0; b < blocks; ++b) {
        if (bad_row[b] != SIZE_MAX && scan->finite) {
            scan->finite = false;
            scan->bad_row = bad_row[b];
            scan->bad_var = bad_var[b];
            scan->first_bad_is_nan = isnan(problem->data[bad_row[b] + ld * bad_var[b]]);
        }
        scan->max_abs = block_max[b] > scan->max_abs ? block_max[b] : scan->max_abs;
    }
    scan->total_ss = scan->mean_variance = 0.0;
    if (!scan->finite)
        return;

    /* Blocks joined pairwise, in a fixed tree over the block order: rounding
     * grows with the tree's depth, not with the number of blocks (test_kmeans's
     * 256 blocks: 1.6e-16 relative, in block order 6.2e-16). The result
     * lands in block 0's entries. */
    double variance_sum = 0.0;
    for (size_t v = 0; v < d; ++v) {
        for (size_t step = 1; step < blocks; step *= 2)
            for (size_t b = 0; b + step < blocks; b += 2 * step) {
                size_t count = sg_rows_of_blocks(workspace, n, b, b + step);
                size_t last = b + 2 * step < blocks ? b + 2 * step : blocks;
                double *mean = partial + b * 2 * d + v, *other = partial + (b + step) * 2 * d + v;
                sg_moments_join(&count, mean, mean + d, sg_rows_of_blocks(workspace, n, b + step, last), *other,
                                other[d]);
            }
        scan->total_ss += partial[d + v];
        variance_sum += partial[d + v] / (double)n;
    }
    scan->mean_variance = variance_sum / (double)d;
}

/* --------------------------------------------------------- Lloyd's passes */

/* Squared distance from row i to a centroid stored with leading dimension
 * ldc, by the exact difference form: every label and sum of k-means comes
 * from this arithmetic, in this order. */
static inline double sg_row_distance(const sg_kmeans_problem *problem, size_t i, const double *centre,
                                     size_t ldc)
{
    double distance = 0.0;
    for (size_t v = 0; v < problem->n_vars; ++v) {
        double difference = problem->data[i + problem->ld * v] - centre[ldc * v];
        distance += difference * difference;
    }
    return distance;
}

/* Row i's nearest centroid by the exact form over all k (the lower index on
 * a tie) and its squared distance. */
static void sg_nearest_exact(const sg_kmeans_problem *problem, const double *centroids, size_t i,
                             int32_t *nearest, double *best)
{
    *best = INFINITY;
    *nearest = 0;
    for (size_t j = 0; j < problem->k; ++j) {
        double distance = sg_row_distance(problem, i, centroids + j, problem->k);
        if (distance < *best) {
            *best = distance;
            *nearest = (int32_t)j;
        }
    }
}

/* The nearest centroid of rows tile .. tile+rows-1 and its squared distance
 * by the exact form, column by column over the rows: the arithmetic of
 * sg_nearest_exact, row for row. */
static void sg_nearest_exact_tile(const sg_kmeans_problem *problem, const double *centroids, size_t tile,
                                  size_t rows, int32_t *nearest, double *best)
{
    const size_t k = problem->k, d = problem->n_vars, ld = problem->ld;
    double distance[SG_TILE_ROWS];
    for (size_t i = 0; i < rows; ++i) {
        best[i] = INFINITY;
        nearest[i] = 0;
    }
    for (size_t j = 0; j < k; ++j) {
        for (size_t i = 0; i < rows; ++i)
            distance[i] = 0.0;
        for (size_t v = 0; v < d; ++v) {
            const double *column = problem->data + ld * v + tile;
            double centre = centroids[j + k * v];
            for (size_t i = 0; i < rows; ++i) {
                double difference = column[i] - centre;
                distance[i] += difference * difference;
            }
        }
        for (size_t i = 0; i < rows; ++i)
            if (distance[i] < best[i]) {
                best[i] = distance[i];
                nearest[i] = (int32_t)j;
            }
    }
}

/* The same by the product-form screen (kmeans_screen.h): the screen's
 * choice, its exact distance, and for each row the screen cannot vouch for
 * the exact form over all k. */
static void sg_nearest_screened_tile(const sg_kmeans_problem *problem, const sg_kmeans_screen *screen,
                                     double *scratch, const double *centroids, size_t tile, size_t rows,
                                     int32_t *nearest, double *best)
{
    const size_t k = problem->k, d = problem->n_vars, ld = problem->ld;
    bool certain[SG_TILE_ROWS];
    sg_kmeans_screen_rows(screen, problem->data + tile, ld, rows, scratch, nearest, certain);
    /* The chosen centroids' distances, four rows at a time: four
     * independent chains of additions where one row's would wait on each
     * addition (sg_row_distance's arithmetic, row for row). */
    size_t i = 0;
    for (; i + 4 <= rows; i += 4) {
        const double *row = problem->data + tile + i;
        const double *centre0 = centroids + nearest[i], *centre1 = centroids + nearest[i + 1];
        const double *centre2 = centroids + nearest[i + 2], *centre3 = centroids + nearest[i + 3];
        double distance0 = 0.0, distance1 = 0.0, distance2 = 0.0, distance3 = 0.0;
        for (size_t v = 0; v < d; ++v) {
            const double *x = row + ld * v;
            double difference0 = x[0] - centre0[k * v], difference1 = x[1] - centre1[k * v];
            double difference2 = x[2] - centre2[k * v], difference3 = x[3] - centre3[k * v];
            distance0 += difference0 * difference0;
            distance1 += difference1 * difference1;
            distance2 += difference2 * difference2;
            distance3 += difference3 * difference3;
        }
        best[i] = distance0, best[i + 1] = distance1, best[i + 2] = distance2, best[i + 3] = distance3;
    }
    for (; i < rows; ++i)
        best[i] = sg_row_distance(problem, tile + i, centroids + nearest[i], k);
    for (i = 0; i < rows; ++i)
        if (!certain[i])
            sg_nearest_exact(problem, centroids, tile + i, &nearest[i], &best[i]);
}

/* Assigns rows [begin, end) to their nearest centroid (the lower index on a
 * tie), counting the labels that change; adds each row to its cluster's sums
 * and count and its squared distance to the cluster's within sum of squares;
 * the block's total squared distance goes to *inertia. Every sum runs in row
 * order. screen is NULL where the assignment does not screen. */
static size_t sg_assign_rows(const sg_kmeans_problem *problem, const sg_kmeans_screen *screen, double *scratch,
                             const double *centroids, size_t begin, size_t end, int32_t *labels, double *sums,
                             size_t *counts, double *wss, double *inertia)
{
    const size_t k = problem->k, d = problem->n_vars, ld = problem->ld;
    double best[SG_TILE_ROWS];
    int32_t nearest[SG_TILE_ROWS];
    size_t changed = 0;
    double total = 0.0;
    /* With the screen, the clusters' sums a cluster after another (a row's d
     * additions in one or two cache lines), into sums at the end. */
    double *row_sums = screen != NULL ? scratch + sg_kmeans_screen_scratch_count(d) : NULL;
    if (row_sums != NULL)
        memset(row_sums, 0, k * d * sizeof *row_sums);
    for (size_t tile = begin; tile < end; tile += SG_TILE_ROWS) {
        size_t rows = end - tile < SG_TILE_ROWS ? end - tile : SG_TILE_ROWS;
        if (screen != NULL)
            sg_nearest_screened_tile(problem, screen, scratch, centroids, tile, rows, nearest, best);
        else
            sg_nearest_exact_tile(problem, centroids, tile, rows, nearest, best);
        for (size_t i = 0; i < rows; ++i) {
            if (labels[tile + i] != nearest[i]) {
                labels[tile + i] = nearest[i];
                ++changed;
            }
        }
        for (size_t i = 0; i < rows; ++i) {
            counts[nearest[i]] += 1;
            wss[nearest[i]] += best[i];
            total += best[i];
        }
        /* Row by row: the additions into one cluster's sum of one variable
         * still come in row order, and a row's d additions are independent. */
        for (size_t i = 0; i < rows; ++i) {
            const double *row = problem->data + tile + i;
            if (row_sums != NULL) {
                double *cluster_sums = row_sums + d * (size_t)nearest[i];
                for (size_t v = 0; v < d; ++v)
                    cluster_sums[v] += row[ld * v];
            } else {
                double *cluster_sums = sums + nearest[i];
                for (size_t v = 0; v < d; ++v)
                    cluster_sums[k * v] += row[ld * v];
            }
        }
    }
    if (row_sums != NULL)
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                sums[j + k * v] = row_sums[d * j + v];
    *inertia = total;
    return changed;
}

/* Adds rows [begin, end) to the sums and counts of their labelled clusters. */
static void sg_sum_rows(const sg_kmeans_problem *problem, const int32_t *labels, size_t begin, size_t end,
                        double *sums, size_t *counts)
{
    const size_t k = problem->k, d = problem->n_vars, ld = problem->ld;
    for (size_t i = begin; i < end; ++i)
        counts[labels[i]] += 1;
    for (size_t v = 0; v < d; ++v) {
        const double *column = problem->data + ld * v;
        double *cluster_sums = sums + k * v;
        for (size_t i = begin; i < end; ++i)
            cluster_sums[labels[i]] += column[i];
    }
}

/* Adds the blocks' partial sums, counts and within sums of squares in block
 * order into the workspace's totals. */
#define SG_REDUCE_ENTRIES 256  /* sums added per block of the reduction */

static void sg_reduce_entries(void *context, size_t chunk, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    const size_t kd = pass->problem->k * pass->problem->n_vars, blocks = pass->workspace->block_count;
    const double *block_sums = pass->workspace->block_sums;
    size_t end = (chunk + 1) * SG_REDUCE_ENTRIES < kd ? (chunk + 1) * SG_REDUCE_ENTRIES : kd;
    for (size_t entry = chunk * SG_REDUCE_ENTRIES; entry < end; ++entry) {
        double sum = 0.0;
        for (size_t b = 0; b < blocks; ++b)
            sum += block_sums[b * kd + entry];
        pass->workspace->sums[entry] = sum;
    }
}

static void sg_reduce_blocks(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace, bool with_wss)
{
    const size_t k = problem->k, kd = problem->k * problem->n_vars, blocks = workspace->block_count;
    sg_pass pass = { .problem = problem, .workspace = workspace };
    int team = kd * blocks > 65536 ? problem->thread_count : 1;
    sg_parallel_for(team, (kd + SG_REDUCE_ENTRIES - 1) / SG_REDUCE_ENTRIES, sg_reduce_entries, &pass);
    for (size_t j = 0; j < k; ++j) {
        size_t count = 0;
        double wss = 0.0;
        for (size_t b = 0; b < blocks; ++b) {
            count += workspace->block_counts[b * k + j];
            if (with_wss)
                wss += workspace->block_wss[b * k + j];
        }
        workspace->counts[j] = count;
        workspace->wss[j] = wss;
    }
}

/* One block of the assignment pass, into the block's own partial sums. */
static void sg_assign_block(void *context, size_t b, int slot)
{
    const sg_pass *pass = context;
    const sg_kmeans_problem *problem = pass->problem;
    sg_kmeans_workspace *workspace = pass->workspace;
    const size_t k = problem->k, kd = problem->k * problem->n_vars;
    size_t begin, end;
    sg_block_range(workspace, problem->n_obs, b, &begin, &end);
    double *sums = workspace->block_sums + b * kd;
    size_t *counts = workspace->block_counts + b * k;
    double *wss = workspace->block_wss + b * k;
    memset(sums, 0, kd * sizeof *sums);
    memset(counts, 0, k * sizeof *counts);
    memset(wss, 0, k * sizeof *wss);
    const sg_kmeans_screen *screen = workspace->screening ? &workspace->screen : NULL;
    double *scratch = workspace->screening ? workspace->screen_scratch + (size_t)slot * workspace->screen_stride
                                           : NULL;
    workspace->block_changed[b] = sg_assign_rows(problem, screen, scratch, pass->centres, begin, end,
                                                 pass->labels, sums, counts, wss, &workspace->block_values[b]);
}

/* One pass over the data: labels from centroids, and the clusters' sums,
 * counts, within sums of squares and the inertia. Returns the count of labels
 * that changed. */
static size_t sg_assign_pass(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                             const double *centroids, int32_t *labels, double *inertia)
{
    if (workspace->screening)
        sg_kmeans_screen_prepare(&workspace->screen, centroids);
    sg_pass pass = { .problem = problem, .workspace = workspace, .centres = centroids, .labels = labels };
    sg_run_pass(&pass, sg_assign_block);
    size_t changed = 0;
    for (size_t b = 0; b < workspace->block_count; ++b)
        changed += workspace->block_changed[b];
    *inertia = sg_add_block_values(workspace, workspace->block_values, 1);
    sg_reduce_blocks(problem, workspace, true);
    return changed;
}

/* One block of the sum pass. */
static void sg_sum_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    const sg_kmeans_problem *problem = pass->problem;
    sg_kmeans_workspace *workspace = pass->workspace;
    const size_t k = problem->k, kd = problem->k * problem->n_vars;
    size_t begin, end;
    sg_block_range(workspace, problem->n_obs, b, &begin, &end);
    double *sums = workspace->block_sums + b * kd;
    size_t *counts = workspace->block_counts + b * k;
    memset(sums, 0, kd * sizeof *sums);
    memset(counts, 0, k * sizeof *counts);
    sg_sum_rows(problem, pass->fixed_labels, begin, end, sums, counts);
}

/* Sums and counts of the clusters as labelled. */
static void sg_sum_pass(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace, const int32_t *labels)
{
    sg_pass pass = { .problem = problem, .workspace = workspace, .fixed_labels = labels };
    sg_run_pass(&pass, sg_sum_block);
    sg_reduce_blocks(problem, workspace, false);
}

/* Each row's squared distance to its own centroid, into closest. */
static void sg_own_distance_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    size_t begin, end;
    sg_block_range(pass->workspace, pass->problem->n_obs, b, &begin, &end);
    for (size_t i = begin; i < end; ++i)
        pass->closest[i] = sg_row_distance(pass->problem, i, pass->centres + pass->labels[i], pass->problem->k);
}

/* Re-seeds every empty cluster (in index order) with the row farthest from its
 * centroid among clusters that keep another row; ties go to the lowest row.
 * counts are updated with the moves; *moved counts them. Fails with
 * STATGPU_ERROR_INVALID_ARGUMENT when no such row lies off its centroid:
 * then every non-empty cluster holds one distinct row value, so the data have
 * fewer than k distinct rows. */
static statgpu_status sg_reseed_empty(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                      const double *centroids, int32_t *labels, size_t *moved)
{
    const size_t n = problem->n_obs, k = problem->k;
    size_t *counts = workspace->counts;
    if (!sg_ensure_closest(workspace, n))
        return STATGPU_ERROR_OUT_OF_MEMORY;
    double *distance = workspace->closest;
    sg_pass pass = { .problem = problem, .workspace = workspace, .centres = centroids, .labels = labels,
                     .closest = distance };
    sg_run_pass(&pass, sg_own_distance_block);

    for (size_t empty = 0; empty < k; ++empty) {
        if (counts[empty] != 0)
            continue;
        size_t farthest = SIZE_MAX;
        double largest = 0.0;
        for (size_t i = 0; i < n; ++i)
            if (distance[i] > largest && counts[labels[i]] >= 2) {
                largest = distance[i];
                farthest = i;
            }
        if (farthest == SIZE_MAX)
            return STATGPU_ERROR_INVALID_ARGUMENT;
        counts[labels[farthest]] -= 1;
        labels[farthest] = (int32_t)empty;
        counts[empty] = 1;
        distance[farthest] = -1.0;  /* moved: not a candidate again */
        ++*moved;
    }
    return STATGPU_OK;
}

statgpu_status sg_cpu_kmeans_lloyd(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                   size_t max_iterations, double absolute_tolerance,
                                   const sg_kmeans_progress *progress, sg_kmeans_run *run)
{
    const size_t n = problem->n_obs, k = problem->k, d = problem->n_vars;
    int32_t *labels = run->labels;
    for (size_t i = 0; i < n; ++i)
        labels[i] = -1;
    double *centroids = run->centroids, *next = workspace->next_centroids;
    bool settled = false;  /* the last assignment changed no label */
    run->converged = false;
    run->reseed_count = 0;
    run->iterations = 0;
    double inertia = 0.0;

    while (run->iterations < max_iterations) {
        double fraction = ((double)progress->run + (double)run->iterations / (double)max_iterations)
                          / (double)progress->run_count;
        if (sg_progress_cancelled(progress->context, fraction))
            return STATGPU_ERROR_CANCELLED;
        size_t changed = sg_assign_pass(problem, workspace, centroids, labels, &inertia);
        ++run->iterations;

        bool any_empty = false;
        for (size_t j = 0; j < k; ++j)
            any_empty = any_empty || workspace->counts[j] == 0;
        if (any_empty) {
            size_t moved = 0;
            statgpu_status status = sg_reseed_empty(problem, workspace, centroids, labels, &moved);
            if (status != STATGPU_OK)
                return status;
            changed += moved;
            run->reseed_count += moved;
            sg_sum_pass(problem, workspace, labels);
        }

        double shift = 0.0;
        for (size_t j = 0; j < k; ++j) {
            double count = (double)workspace->counts[j];
            for (size_t v = 0; v < d; ++v) {
                double old = centroids[j + k * v];
                double moved_to = workspace->counts[j] > 0 ? workspace->sums[j + k * v] / count : old;
                double difference = moved_to - old;
                shift += difference * difference;
                next[j + k * v] = moved_to;
            }
        }
        double *swap = centroids;
        centroids = next;
        next = swap;

        /* scikit-learn's order: unchanged labels first (then the new
         * centroids equal the old ones), then the tolerance. */
        if (changed == 0) {
            settled = true;
            run->converged = true;
            break;
        }
        if (shift <= absolute_tolerance) {
            run->converged = true;
            break;
        }
    }

    /* Labels are each row's nearest centroid: after unchanged labels they are
     * already, and the last pass's sums of squares are the final ones (the
     * centroids did not move); otherwise one more assignment. */
    if (!settled)
        sg_assign_pass(problem, workspace, centroids, labels, &inertia);
    if (centroids != run->centroids)
        memcpy(run->centroids, centroids, k * d * sizeof *centroids);
    memcpy(run->cluster_sizes, workspace->counts, k * sizeof *workspace->counts);
    memcpy(run->within_ss, workspace->wss, k * sizeof *workspace->wss);
    run->inertia = inertia;
    return STATGPU_OK;
}

/* -------------------------------------------------- k-means++ (greedy) */

/* The row whose running D^2 sum first exceeds target: blocks by their prefix,
 * then rows within the block in order, with the same additions that made the
 * block's sum, so the search always ends on a row of positive D^2. */
static size_t sg_search_potential(const sg_kmeans_problem *problem, const sg_kmeans_workspace *workspace,
                                  const double *closest, double target)
{
    size_t low = 0, high = workspace->block_count - 1;
    while (low < high) {  /* the first block b with prefix[b+1] > target */
        size_t middle = low + (high - low) / 2;
        if (workspace->prefix[middle + 1] > target)
            high = middle;
        else
            low = middle + 1;
    }
    size_t begin, end;
    sg_block_range(workspace, problem->n_obs, low, &begin, &end);
    double base = workspace->prefix[low], running = 0.0;
    size_t last_positive = begin;
    for (size_t i = begin; i < end; ++i) {
        running += closest[i];
        if (closest[i] > 0.0)
            last_positive = i;
        if (base + running > target)
            return i;
    }
    return last_positive;  /* unreachable while target < prefix[low + 1] */
}

/* D^2 of every row to one centre given as a row-major vector; block sums of
 * D^2 into block_values and their prefix. With update, D^2 = min(D^2, new). */
static void sg_closest_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    double *closest = pass->closest;
    size_t begin, end;
    sg_block_range(pass->workspace, pass->problem->n_obs, b, &begin, &end);
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i) {
        double distance = sg_row_distance(pass->problem, i, pass->centres, 1);
        if (!pass->update || distance < closest[i])
            closest[i] = distance;
        sum += closest[i];
    }
    pass->workspace->block_values[b] = sum;
}

static double sg_closest_pass(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                              const double *centre, bool update)
{
    sg_pass pass = { .problem = problem, .workspace = workspace, .centres = centre, .closest = workspace->closest,
                     .update = update };
    sg_run_pass(&pass, sg_closest_block);
    return sg_add_block_values(workspace, workspace->block_values, 1);
}

static void sg_copy_row(const sg_kmeans_problem *problem, size_t row, double *to, size_t stride)
{
    for (size_t v = 0; v < problem->n_vars; ++v)
        to[v * stride] = problem->data[row + problem->ld * v];
}

/* The potential each of the trial centres (row-major) would leave, per block. */
static void sg_trial_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    const size_t trials = pass->workspace->trial_count, d = pass->problem->n_vars;
    const double *closest = pass->closest;
    size_t begin, end;
    sg_block_range(pass->workspace, pass->problem->n_obs, b, &begin, &end);
    double *sums = pass->workspace->block_values + b * trials;
    for (size_t t = 0; t < trials; ++t)
        sums[t] = 0.0;
    for (size_t i = begin; i < end; ++i)
        for (size_t t = 0; t < trials; ++t) {
            double distance = sg_row_distance(pass->problem, i, pass->centres + t * d, 1);
            sums[t] += distance < closest[i] ? distance : closest[i];
        }
}

/* The progress callback between the steps of a seeding, at most every 0.1 s
 * (k-means++ takes k steps, some of a few microseconds), with the run's
 * share done so far: true when it asks to stop. A seeding of many centroids
 * (k = 8000 on 20000 rows: seconds) can so be stopped as Lloyd's iterations
 * can. progress may be NULL (no callback). */
typedef struct sg_seeding_poll {
    const sg_kmeans_progress *progress;
    double                    next;
} sg_seeding_poll;

static bool sg_seeding_cancelled(sg_seeding_poll *poll)
{
    if (poll->progress == NULL)
        return false;
    const double now = sg_monotonic_seconds();
    if (now < poll->next)
        return false;
    poll->next = now + 0.1;
    const sg_kmeans_progress *progress = poll->progress;
    return sg_progress_cancelled(progress->context, (double)progress->run / (double)progress->run_count);
}

statgpu_status sg_cpu_kmeans_plus_plus(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                       uint64_t stream, const sg_kmeans_progress *progress, double *centroids)
{
    sg_seeding_poll poll = { progress, sg_monotonic_seconds() + 0.1 };
    const size_t n = problem->n_obs, k = problem->k, d = problem->n_vars;
    const size_t trials = workspace->trial_count;
    if (!sg_ensure_closest(workspace, n))
        return STATGPU_ERROR_OUT_OF_MEMORY;
    double *candidates = malloc(trials * d * sizeof *candidates);  /* row-major */
    size_t *candidate_rows = malloc(trials * sizeof *candidate_rows);
    if (candidates == NULL || candidate_rows == NULL) {
        free(candidates);
        free(candidate_rows);
        return STATGPU_ERROR_OUT_OF_MEMORY;
    }

    sg_rng rng = { stream };
    size_t first = sg_rng_below(&rng, n);
    sg_copy_row(problem, first, centroids, k);
    sg_copy_row(problem, first, candidates, 1);
    double potential = sg_closest_pass(problem, workspace, candidates, false);

    statgpu_status status = STATGPU_OK;
    for (size_t c = 1; c < k; ++c) {
        if (!(potential > 0.0)) {  /* every row equals a chosen centroid */
            status = STATGPU_ERROR_INVALID_ARGUMENT;
            break;
        }
        if (sg_seeding_cancelled(&poll)) {
            status = STATGPU_ERROR_CANCELLED;
            break;
        }
        for (size_t t = 0; t < trials; ++t) {
            double target = sg_rng_uniform(&rng) * potential;
            if (!(target < potential))
                target = nextafter(potential, 0.0);
            candidate_rows[t] = sg_search_potential(problem, workspace, workspace->closest, target);
            sg_copy_row(problem, candidate_rows[t], candidates + t * d, 1);
        }
        /* The potential each candidate would leave, per block, in one pass. */
        sg_pass pass = { .problem = problem, .workspace = workspace, .centres = candidates,
                         .closest = workspace->closest };
        sg_run_pass(&pass, sg_trial_block);
        size_t best = 0;
        double best_potential = INFINITY;
        for (size_t t = 0; t < trials; ++t) {
            double sum = 0.0;
            for (size_t b = 0; b < workspace->block_count; ++b)
                sum += workspace->block_values[b * trials + t];
            if (sum < best_potential) {
                best_potential = sum;
                best = t;
            }
        }
        sg_copy_row(problem, candidate_rows[best], centroids + c, k);
        potential = sg_closest_pass(problem, workspace, candidates + best * d, true);
    }
    free(candidates);
    free(candidate_rows);
    return status;
}

/* ---------------------------------------------------------------- k-means|| */

/* Greedy k-means++ and then Lloyd on m weighted points (row-major m x d),
 * sequentially: m is about 10k. The points of positive weight are distinct. */
static statgpu_status sg_weighted_recluster(const double *points, const double *weights, size_t m, size_t d,
                                            size_t k, size_t trials, sg_rng *rng, sg_seeding_poll *poll,
                                            double *centres /* k x d row-major */)
{
    double *closest = malloc(m * sizeof *closest);
    int32_t *labels = malloc(m * sizeof *labels);
    double *sums = malloc(k * d * sizeof *sums);
    double *totals = malloc(k * sizeof *totals);
    if (!closest || !labels || !sums || !totals) {
        free(closest), free(labels), free(sums), free(totals);
        return STATGPU_ERROR_OUT_OF_MEMORY;
    }
#define SG_POINT_DISTANCE(out, a, b)                                   \
    do {                                                               \
        double sum_ = 0.0;                                             \
        for (size_t v_ = 0; v_ < d; ++v_) {                            \
            double difference_ = (a)[v_] - (b)[v_];                    \
            sum_ += difference_ * difference_;                         \
        }                                                              \
        (out) = sum_;                                                  \
    } while (0)

    /* The first centre by weight, the next ones by weight x D^2. */
    double total_weight = 0.0;
    for (size_t i = 0; i < m; ++i)
        total_weight += weights[i];
    double target = sg_rng_uniform(rng) * total_weight, running = 0.0;
    size_t first = 0;
    for (size_t i = 0; i < m; ++i) {
        running += weights[i];
        if (weights[i] > 0.0)
            first = i;
        if (running > target)
            break;
    }
    memcpy(centres, points + first * d, d * sizeof *centres);
    double potential = 0.0;
    for (size_t i = 0; i < m; ++i) {
        SG_POINT_DISTANCE(closest[i], points + i * d, centres);
        potential += weights[i] * closest[i];
    }
    statgpu_status status = STATGPU_OK;
    for (size_t c = 1; c < k && status == STATGPU_OK; ++c) {
        if (!(potential > 0.0)) {
            status = STATGPU_ERROR_INVALID_ARGUMENT;
            break;
        }
        if (sg_seeding_cancelled(poll)) {
            status = STATGPU_ERROR_CANCELLED;
            break;
        }
        size_t best_row = 0;
        double best_potential = INFINITY;
        for (size_t t = 0; t < trials; ++t) {
            double goal = sg_rng_uniform(rng) * potential, sum = 0.0;
            size_t row = 0;
            for (size_t i = 0; i < m; ++i) {
                sum += weights[i] * closest[i];
                if (weights[i] * closest[i] > 0.0)
                    row = i;
                if (sum > goal)
                    break;
            }
            double candidate_potential = 0.0;
            for (size_t i = 0; i < m; ++i) {
                double distance;
                SG_POINT_DISTANCE(distance, points + i * d, points + row * d);
                candidate_potential += weights[i] * (distance < closest[i] ? distance : closest[i]);
            }
            if (candidate_potential < best_potential) {
                best_potential = candidate_potential;
                best_row = row;
            }
        }
        memcpy(centres + c * d, points + best_row * d, d * sizeof *centres);
        potential = 0.0;
        for (size_t i = 0; i < m; ++i) {
            double distance;
            SG_POINT_DISTANCE(distance, points + i * d, points + best_row * d);
            if (distance < closest[i])
                closest[i] = distance;
            potential += weights[i] * closest[i];
        }
    }

    /* Weighted Lloyd; it stops where a cluster would empty, keeping the last
     * centres (distinct points at the start, so none is empty then). */
    for (size_t i = 0; i < m; ++i)
        labels[i] = -1;
    for (size_t iteration = 0; iteration < SG_PARALLEL_RECLUSTER_ITERATIONS && status == STATGPU_OK;
         ++iteration) {
        bool changed = false;
        memset(sums, 0, k * d * sizeof *sums);
        memset(totals, 0, k * sizeof *totals);
        for (size_t i = 0; i < m; ++i) {
            double best = INFINITY;
            int32_t label = 0;
            for (size_t j = 0; j < k; ++j) {
                double distance;
                SG_POINT_DISTANCE(distance, points + i * d, centres + j * d);
                if (distance < best) {
                    best = distance;
                    label = (int32_t)j;
                }
            }
            changed = changed || labels[i] != label;
            labels[i] = label;
            totals[label] += weights[i];
            for (size_t v = 0; v < d; ++v)
                sums[label * d + v] += weights[i] * points[i * d + v];
        }
        if (!changed)
            break;
        bool empty = false;
        for (size_t j = 0; j < k; ++j)
            empty = empty || !(totals[j] > 0.0);
        if (empty)
            break;
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                centres[j * d + v] = sums[j * d + v] / totals[j];
    }
#undef SG_POINT_DISTANCE
    free(closest), free(labels), free(sums), free(totals);
    return status;
}

/* Folds candidates from .. to - 1 (row-major) into every row's D^2 and
 * nearest candidate; the block's sum of D^2 into block_values. */
static void sg_fold_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    const size_t d = pass->problem->n_vars;
    double *closest = pass->closest;
    size_t begin, end;
    sg_block_range(pass->workspace, pass->problem->n_obs, b, &begin, &end);
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i) {
        for (size_t c = pass->from; c < pass->to; ++c) {
            double distance = sg_row_distance(pass->problem, i, pass->centres + c * d, 1);
            if (c == 0 || distance < closest[i]) {
                closest[i] = distance;
                pass->nearest[i] = (int32_t)c;
            }
        }
        sum += closest[i];
    }
    pass->workspace->block_values[b] = sum;
}

/* How many rows of the block the round draws. */
static void sg_draw_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_pass *pass = context;
    size_t begin, end;
    sg_block_range(pass->workspace, pass->problem->n_obs, b, &begin, &end);
    size_t picks = 0;
    for (size_t i = begin; i < end; ++i)
        picks += sg_counter_uniform(pass->key, pass->round, i) * pass->potential
                 < pass->oversampling * pass->closest[i];
    pass->picks[b] = picks;
}

statgpu_status sg_cpu_kmeans_parallel(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                      uint64_t stream, const sg_kmeans_progress *progress, double *centroids)
{
    sg_seeding_poll poll = { progress, sg_monotonic_seconds() + 0.1 };
    const size_t n = problem->n_obs, k = problem->k, d = problem->n_vars;
    const double oversampling = 2.0 * (double)k;
    if (!sg_ensure_closest(workspace, n))
        return STATGPU_ERROR_OUT_OF_MEMORY;
    if (workspace->nearest == NULL)
        workspace->nearest = malloc(n * sizeof *workspace->nearest);
    if (workspace->nearest == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    double *closest = workspace->closest;
    int32_t *nearest = workspace->nearest;

    size_t capacity = 16 * k + 16, count = 0;
    double *points = malloc(capacity * d * sizeof *points);  /* row-major */
    double *weights = NULL, *centres = NULL;
    size_t *block_picks = malloc(workspace->block_count * sizeof *block_picks);
    statgpu_status status = STATGPU_OK;
    if (points == NULL || block_picks == NULL) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }

    sg_rng rng = { stream };
    sg_copy_row(problem, sg_rng_below(&rng, n), points, 1);
    count = 1;
    size_t added_from = 0;  /* candidates not yet folded into closest */
    uint64_t key = sg_rng_next(&rng);
    size_t positive = 0;    /* candidates nearest to some row: distinct */
    double potential = 0.0;
    for (unsigned round = 0;; ++round) {
        /* Fold the new candidates into every row's D^2 and nearest candidate. */
        sg_pass fold = { .problem = problem, .workspace = workspace, .centres = points, .closest = closest,
                         .nearest = nearest, .from = added_from, .to = count };
        sg_run_pass(&fold, sg_fold_block);
        added_from = count;
        potential = sg_add_block_values(workspace, workspace->block_values, 1);

        /* Enough rounds, or no row left off the candidates: the candidates
         * nearest to some row are distinct; k of them are needed. */
        bool exhausted = !(potential > 0.0);
        if ((round >= SG_PARALLEL_ROUNDS || exhausted) && count >= k) {
            positive = 0;
            free(weights);
            weights = calloc(count, sizeof *weights);
            if (weights == NULL) {
                status = STATGPU_ERROR_OUT_OF_MEMORY;
                goto done;
            }
            for (size_t i = 0; i < n; ++i)
                weights[nearest[i]] += 1.0;
            for (size_t c = 0; c < count; ++c)
                positive += weights[c] > 0.0;
            if (positive >= k)
                break;
        }
        if (exhausted) {  /* every row equals a candidate: fewer than k distinct rows */
            status = STATGPU_ERROR_INVALID_ARGUMENT;
            goto done;
        }

        /* Each row is drawn with probability min(1, ell D^2 / potential),
         * from its own counter-based uniform; drawn rows are kept in row order. */
        sg_pass draw = { .problem = problem, .workspace = workspace, .closest = closest, .picks = block_picks,
                         .key = key, .round = round, .potential = potential, .oversampling = oversampling };
        sg_run_pass(&draw, sg_draw_block);
        size_t new_count = count;
        for (size_t b = 0; b < workspace->block_count; ++b)
            new_count += block_picks[b];
        if (new_count > capacity) {
            size_t grown = new_count + new_count / 2;
            double *more_points = realloc(points, grown * d * sizeof *points);
            if (more_points == NULL) {
                status = STATGPU_ERROR_OUT_OF_MEMORY;
                goto done;
            }
            points = more_points;
            capacity = grown;
        }
        size_t next = count;
        for (size_t b = 0; b < workspace->block_count; ++b) {
            size_t begin, end;
            sg_block_range(workspace, n, b, &begin, &end);
            for (size_t i = begin; i < end && block_picks[b] > 0; ++i)
                if (sg_counter_uniform(key, round, i) * potential < oversampling * closest[i]) {
                    sg_copy_row(problem, i, points + next * d, 1);
                    ++next;
                }
        }
        count = next;
    }

    /* Recluster the candidates of positive weight. */
    {
        size_t kept = 0;
        for (size_t c = 0; c < count; ++c)
            if (weights[c] > 0.0) {
                memmove(points + kept * d, points + c * d, d * sizeof *points);
                weights[kept++] = weights[c];
            }
        centres = malloc(k * d * sizeof *centres);
        if (centres == NULL) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        status = sg_weighted_recluster(points, weights, kept, d, k, workspace->trial_count, &rng, &poll, centres);
        if (status == STATGPU_OK)
            for (size_t j = 0; j < k; ++j)
                for (size_t v = 0; v < d; ++v)
                    centroids[j + k * v] = centres[j * d + v];
    }

done:
    free(points);
    free(weights);
    free(centres);
    free(block_picks);
    return status;
}
