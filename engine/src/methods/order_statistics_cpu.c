/*
 * order_statistics_cpu.c: exact order statistics on the CPU.
 *
 * Doubles are mapped to 64-bit keys whose unsigned order is IEEE total order
 * (sg_key_from_double), so every comparison below is an integer comparison,
 * -0.0 sorts before +0.0 and infinities need no special case.
 *
 * Three algorithms, all expected O(n):
 *   - window select (Floyd and Rivest) for a few ranks of a large array, the
 *     default there: a sample of the keys bounds each rank's key, one pass
 *     over the data (four values a compare with AVX2) counts the keys below
 *     each bound and keeps those between, a window select of the kept keys
 *     where they are many and introselect on a copy of them otherwise: the
 *     data are read once (NaN looked for in the same pass), where radix
 *     select reads them two to four times a rank;
 *   - radix select for a few ranks of a large array: each pass histograms the
 *     next 16 bits of the keys that still match the chosen prefix, with one
 *     private histogram per thread; once the chosen bucket is small the
 *     candidates are compacted into a buffer and later passes read only them.
 *     At most four passes, whatever the distribution (all-equal data too).
 *   - introselect (three-way quickselect, heapsort when the recursion gets too
 *     deep) on a copy of the keys, applied recursively for many ranks at once.
 */
#define _GNU_SOURCE
#include "internal.h"

#include "core/pool.h"
#include "core/random.h"
#include "core/threads.h"

#include <locale.h>
#include <math.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SG_WINDOW_AVX2 1
#endif

enum {
    SG_DIGIT_BITS          = 16,
    SG_BUCKET_COUNT        = 1 << SG_DIGIT_BITS,
    /* Below this size a copy plus introselect beats histogram passes. */
    SG_RADIX_MIN_COUNT     = 1 << 16,
    /* Candidates at or below this count are finished with introselect. */
    SG_FINISH_COUNT        = 1 << 12,
    /* Many ranks: one copy and a recursive multi-select beats a radix select per rank. */
    SG_RADIX_MAX_RANKS     = 4,
    /* Elements per block of the parallel passes over the data (NaN check, keys). */
    SG_PASS_BLOCK          = 1 << 16,
    SG_INSERTION_SORT_SIZE = 16
};

/* ---------------------------------------------------------------- NaN check */

/* Elements [*begin, *end) of block `block` of a pass over count elements. */
static void sg_pass_range(size_t block, size_t count, size_t *begin, size_t *end)
{
    *begin = block * SG_PASS_BLOCK;
    *end = *begin + SG_PASS_BLOCK < count ? *begin + SG_PASS_BLOCK : count;
}

typedef struct sg_nan_scan {
    const void   *data;
    statgpu_dtype dtype;
    size_t        count;
    atomic_int    found;
} sg_nan_scan;

static void sg_nan_block(void *context, size_t block, int slot)
{
    (void)slot;
    sg_nan_scan *scan = context;
    size_t begin, end;
    sg_pass_range(block, scan->count, &begin, &end);
    int found = 0;
    if (scan->dtype == STATGPU_DTYPE_FLOAT32) {
        const float *values = scan->data;
        for (size_t i = begin; i < end; ++i)
            found |= values[i] != values[i];
    } else {
        const double *values = scan->data;
        for (size_t i = begin; i < end; ++i)
            found |= values[i] != values[i];
    }
    if (found)
        atomic_store_explicit(&scan->found, 1, memory_order_relaxed);
}

bool sg_cpu_has_nan(const void *data, statgpu_dtype dtype, size_t data_count, int thread_count)
{
    sg_nan_scan scan = { data, dtype, data_count, 0 };
    atomic_init(&scan.found, 0);
    sg_parallel_for(thread_count, (data_count + SG_PASS_BLOCK - 1) / SG_PASS_BLOCK, sg_nan_block, &scan);
    return atomic_load_explicit(&scan.found, memory_order_relaxed) != 0;
}

/* The key of element i of a float64 or float32 array. Floats widen to doubles
 * exactly, so both types share one key space. */
static inline uint64_t sg_key_at(const void *data, statgpu_dtype dtype, size_t i)
{
    return dtype == STATGPU_DTYPE_FLOAT32 ? sg_key_from_double((double)((const float *)data)[i])
                                          : sg_key_from_double(((const double *)data)[i]);
}

/* ------------------------------------------------------------- introselect */

static void sg_insertion_sort(uint64_t *keys, size_t count)
{
    for (size_t i = 1; i < count; ++i) {
        uint64_t key = keys[i];
        size_t j = i;
        while (j > 0 && keys[j - 1] > key) {
            keys[j] = keys[j - 1];
            --j;
        }
        keys[j] = key;
    }
}

static void sg_sift_down(uint64_t *keys, size_t root, size_t count)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= count)
            return;
        if (child + 1 < count && keys[child + 1] > keys[child])
            ++child;
        if (keys[root] >= keys[child])
            return;
        uint64_t swap = keys[root];
        keys[root] = keys[child];
        keys[child] = swap;
        root = child;
    }
}

/* The guaranteed O(n log n) fallback of introselect. */
static void sg_heap_sort(uint64_t *keys, size_t count)
{
    for (size_t i = count / 2; i-- > 0;)
        sg_sift_down(keys, i, count);
    for (size_t end = count; end-- > 1;) {
        uint64_t swap = keys[0];
        keys[0] = keys[end];
        keys[end] = swap;
        sg_sift_down(keys, 0, end);
    }
}

static uint64_t sg_median_of_three(uint64_t a, uint64_t b, uint64_t c)
{
    if (a > b) { uint64_t t = a; a = b; b = t; }
    if (b > c) { b = c; }
    return a > b ? a : b;
}

/* Moves the keys of [lo, hi) below pivot (or_equal: not above it) to the
 * front, in their order, and returns where they end. Branch-free: each key
 * is swapped with the first key not moved and the boundary advances by the
 * compare, where a branch on the compare is mispredicted for half the keys
 * of random data. */
static inline size_t sg_partition_front(uint64_t *keys, size_t lo, size_t hi, uint64_t pivot, bool or_equal)
{
    size_t store = lo;
    for (size_t i = lo; i < hi; ++i) {
        const uint64_t key = keys[i];
        keys[i] = keys[store];
        keys[store] = key;
        store += (key < pivot) | (or_equal & (key == pivot));  /* or_equal is a constant where inlined */
    }
    return store;
}

/* The place, among count keys, of sample key i hashed from seed: the same
 * on any team, and a sample of any order of the keys. */
static inline size_t sg_hashed_place(uint64_t seed, size_t i, size_t count)
{
    const uint64_t hash = sg_mix64(seed + i * SG_GOLDEN);
    return (size_t)(((unsigned __int128)hash * count) >> 64);
}

/* The places in a sorted sample of m of count keys that bound the key at
 * position target (0-based): reach places below and above where it falls
 * in the sample; SIZE_MAX where that is outside the sample (no bound on
 * that side). */
static void sg_sample_bounds(size_t target, size_t count, size_t m, double reach, size_t *below, size_t *above)
{
    const double centre = ((double)target + 0.5) / (double)count * (double)m;
    const double low = floor(centre - reach), high = ceil(centre + reach);
    *below = low < 0.0 ? SIZE_MAX : (size_t)low;
    *above = high >= (double)m ? SIZE_MAX : (size_t)high;
}

/* The multiple of the sample's standard deviation a sample select's
 * bounds reach, fallback unless the environment variable asks for another
 * (tests of the targets that fall outside their bounds): "r", or "r,s" for
 * r and, where second, s. */
static double sg_asked_reach(const char *variable, bool second, double fallback)
{
    const char *text = getenv(variable);
    if (text == NULL)
        return fallback;
    const char *comma = strchr(text, ',');
    /* Read in the C locale, not the process's: inside the office that is the
     * desktop's, where atof stops at the '.' of "0.1" (a German one), and
     * which another thread may be setting meanwhile. */
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale == (locale_t)0)
        return fallback;
    const double asked = strtod_l(second && comma != NULL ? comma + 1 : text, NULL, c_locale);
    freelocale(c_locale);
    return asked >= 0.0 && asked <= 64.0 ? asked : fallback;
}

/* From this many keys an introselect round takes its bounds from a sample
 * of the keys (Floyd and Rivest): a pass moves the keys above the upper
 * bound out, another those below the lower one, and the next round reads
 * only the keys between, about 4 / sqrt(s) of them (s = 1024 sample keys:
 * 12.5%). Below it, the median of three keys at the quarters. */
enum {
    SG_SAMPLED_ROUND_MIN = 1 << 13,
    SG_PIVOT_SAMPLE_MOST = 1 << 10
};

static void sg_introselect(uint64_t *keys, size_t lo, size_t hi, size_t target);

/* One sampled round on [*lo, *hi) (at least SG_SAMPLED_ROUND_MIN keys),
 * bounded by the sample's keys two standard deviations of its count either
 * side of the target's place (STATGPU_SELECT_ROUND_REACH sets the 2; at
 * 0.1 most targets fall outside): true with the range narrowed. False, with
 * *pivot the target's own sample key, for the caller's three-way round on
 * it, where that key equals a bound (runs of equal keys) or the bounds
 * took nothing out (few distinct keys). */
static bool sg_sampled_round(uint64_t *keys, size_t *lo_io, size_t *hi_io, size_t target, uint64_t round,
                             uint64_t *pivot)
{
    const size_t lo = *lo_io, hi = *hi_io, n = hi - lo;
    const size_t s = n / 16 < SG_PIVOT_SAMPLE_MOST ? n / 16 : SG_PIVOT_SAMPLE_MOST;
    uint64_t sample[SG_PIVOT_SAMPLE_MOST];
    for (size_t i = 0; i < s; ++i)
        sample[i] = keys[lo + sg_hashed_place(round * 0xD1B54A32D192ED03ull, i, n)];
    size_t place_low, place_high;
    sg_sample_bounds(target - lo, n, s, sg_asked_reach("STATGPU_SELECT_ROUND_REACH", false, 2.0) * sqrt((double)s),
                     &place_low, &place_high);
    const size_t place = (size_t)(((double)(target - lo) + 0.5) / (double)n * (double)s);
    sg_introselect(sample, 0, s, place);  /* s < SG_SAMPLED_ROUND_MIN: no sampled round inside */
    const bool has_low = place_low != SIZE_MAX, has_high = place_high != SIZE_MAX;
    if (has_low)
        sg_introselect(sample, 0, place, place_low);
    if (has_high)
        sg_introselect(sample, place + 1, s, place_high);
    *pivot = sample[place];
    if ((has_low && sample[place_low] == *pivot) || (has_high && sample[place_high] == *pivot))
        return false;
    size_t lt = lo, le = hi;
    if (2 * (target - lo) < n) {  /* the upper bound first: the second pass reads the smaller part */
        if (has_high)
            le = sg_partition_front(keys, lo, hi, sample[place_high], true);
        if (target < le && has_low)
            lt = sg_partition_front(keys, lo, le, sample[place_low], false);
    } else {
        if (has_low)
            lt = sg_partition_front(keys, lo, hi, sample[place_low], false);
        if (target >= lt && has_high)
            le = sg_partition_front(keys, lt, hi, sample[place_high], true);
    }
    if (target < lt) {
        *hi_io = lt;
    } else if (target >= le) {
        *lo_io = le;
    } else {
        if (lt == lo && le == hi)
            return false;
        *lo_io = lt;
        *hi_io = le;
    }
    return true;
}

/* Rearranges keys[lo, hi) so that keys[target] holds the value it would have
 * in sorted order, everything before it is <= and everything after is >=.
 * Each round splits off the keys below the pivot and, where the target lies
 * beyond them, then those equal to it (runs of equal keys -- two-valued,
 * all-equal data -- end the search at once), both branch-free: 2^15 random
 * keys in 73 us against 235 for a three-way partition with branches, 10^6
 * in 2.4 ms against 7.0 (one core of the 2-core development machine; the
 * window select's sample places took 0.9 ms at 16 threads on the H100
 * machine with the latter). The sampled rounds from SG_SAMPLED_ROUND_MIN
 * keys and the quarters' median of three below took the middle of random
 * keys 0.4-0.8 times as long again (2^13 to 10^6), and of keys rising then
 * falling (organ pipe) 0.01-0.04 times: the median of the first, middle
 * and last keys had made each round there take a few keys off (101 ms at
 * 10^6 keys, 37 us at 1024); sorted keys 1.2-1.8 times as long. */
static void sg_introselect(uint64_t *keys, size_t lo, size_t hi, size_t target)
{
    int depth_budget = 2;
    for (size_t n = hi - lo; n > 1; n >>= 1)
        depth_budget += 2;
    uint64_t round = 0;
    while (hi - lo > SG_INSERTION_SORT_SIZE) {
        if (depth_budget-- == 0) {
            sg_heap_sort(keys + lo, hi - lo);
            return;
        }
        uint64_t pivot;
        if (hi - lo < SG_SAMPLED_ROUND_MIN) {
            const size_t quarter = (hi - lo) / 4;
            pivot = sg_median_of_three(keys[lo + quarter], keys[lo + 2 * quarter], keys[hi - 1 - quarter]);
        } else if (sg_sampled_round(keys, &lo, &hi, target, ++round, &pivot)) {
            continue;
        }

        /* [lo, lt) < pivot, then [lt, gt) == pivot, [gt, hi) > pivot; the
         * pivot is one of the keys, so each round leaves fewer. */
        const size_t lt = sg_partition_front(keys, lo, hi, pivot, false);
        if (target < lt) {
            hi = lt;
            continue;
        }
        const size_t gt = sg_partition_front(keys, lt, hi, pivot, true);
        if (target < gt)
            return;
        lo = gt;
    }
    sg_insertion_sort(keys + lo, hi - lo);
}

/* Places every rank position of positions[0, position_count) (0-based,
 * ascending, all within [lo, hi)) by splitting on the middle one. */
static void sg_multiselect(uint64_t *keys, size_t lo, size_t hi,
                           const size_t *positions, size_t position_count)
{
    while (position_count > 0) {
        size_t middle = position_count / 2;
        size_t target = positions[middle];
        sg_introselect(keys, lo, hi, target);
        /* Positions equal to the target are placed with it. */
        size_t left_count = middle;
        while (left_count > 0 && positions[left_count - 1] == target)
            --left_count;
        size_t right_start = middle + 1;
        while (right_start < position_count && positions[right_start] == target)
            ++right_start;
        sg_multiselect(keys, lo, target, positions, left_count);
        positions      += right_start;
        position_count -= right_start;
        lo = target + 1;
    }
}

typedef struct sg_key_pass {
    const void   *data;
    statgpu_dtype dtype;
    size_t        count;
    uint64_t     *keys;
} sg_key_pass;

static void sg_key_block(void *context, size_t block, int slot)
{
    (void)slot;
    const sg_key_pass *pass = context;
    size_t begin, end;
    sg_pass_range(block, pass->count, &begin, &end);
    for (size_t i = begin; i < end; ++i)
        pass->keys[i] = sg_key_at(pass->data, pass->dtype, i);
}

/* The ranks' keys of keys[0 .. count-1], which it reorders: a recursive
 * multi-select around the sorted positions. */
static statgpu_status sg_select_keys(uint64_t *keys, size_t count, const size_t *ranks, size_t rank_count,
                                     double *results)
{
    size_t *positions = calloc(rank_count > 0 ? rank_count : 1, sizeof *positions);
    if (positions == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    for (size_t j = 0; j < rank_count; ++j)
        positions[j] = ranks[j] - 1;
    sg_multiselect(keys, 0, count, positions, rank_count);
    for (size_t j = 0; j < rank_count; ++j)
        results[j] = sg_double_from_key(keys[positions[j]]);
    free(positions);
    return STATGPU_OK;
}

static statgpu_status sg_select_by_copy(const void *data, statgpu_dtype dtype, size_t data_count,
                                        const size_t *ranks, size_t rank_count,
                                        double *results, int thread_count)
{
    uint64_t *keys = malloc(data_count * sizeof *keys);
    if (keys == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    sg_key_pass pass = { data, dtype, data_count, keys };
    sg_parallel_for(thread_count, (data_count + SG_PASS_BLOCK - 1) / SG_PASS_BLOCK, sg_key_block, &pass);
    statgpu_status status = sg_select_keys(keys, data_count, ranks, rank_count, results);
    free(keys);
    return status;
}

/* ------------------------------------------------------------ radix select */

typedef struct sg_radix_pass {
    const void     *data;        /* the original data, read while candidates is NULL */
    statgpu_dtype   dtype;
    const uint64_t *candidates;  /* keys already filtered, or NULL */
    size_t          count;       /* elements to read */
    uint64_t        prefix;      /* bits of the answer decided so far */
    uint64_t        prefix_mask; /* which bits those are */
    int             shift;       /* the digit read in this pass is key >> shift */
} sg_radix_pass;

static inline bool sg_pass_key(const sg_radix_pass *pass, size_t i, uint64_t *key)
{
    *key = pass->candidates != NULL ? pass->candidates[i] : sg_key_at(pass->data, pass->dtype, i);
    return (*key & pass->prefix_mask) == pass->prefix;
}

static inline void sg_chunk(size_t count, int chunk_count, int chunk, size_t *begin, size_t *end)
{
    size_t base = count / (size_t)chunk_count, extra = count % (size_t)chunk_count;
    *begin = base * (size_t)chunk + ((size_t)chunk < extra ? (size_t)chunk : extra);
    *end   = *begin + base + ((size_t)chunk < extra ? 1 : 0);
}

/* One chunk's histogram of the current digit, or its copy of the bucket's keys. */
typedef struct sg_chunk_pass {
    const sg_radix_pass *pass;
    int                  chunk_count;
    size_t              *histograms;  /* chunk_count x SG_BUCKET_COUNT */
    unsigned             bucket;      /* for the copy: the bucket that holds the rank */
    uint64_t            *target;      /* for the copy: where the bucket's keys go */
} sg_chunk_pass;

static void sg_histogram_chunk(void *context, size_t chunk, int slot)
{
    (void)slot;
    const sg_chunk_pass *work = context;
    const sg_radix_pass *pass = work->pass;
    size_t begin, end;
    sg_chunk(pass->count, work->chunk_count, (int)chunk, &begin, &end);
    size_t *histogram = work->histograms + chunk * SG_BUCKET_COUNT;
    for (size_t i = begin; i < end; ++i) {
        uint64_t key;
        if (sg_pass_key(pass, i, &key))
            ++histogram[(key >> pass->shift) & (SG_BUCKET_COUNT - 1)];
    }
}

/* Each chunk writes at its offset: the sum of the bucket's counts in earlier chunks. */
static void sg_compact_chunk(void *context, size_t chunk, int slot)
{
    (void)slot;
    const sg_chunk_pass *work = context;
    const sg_radix_pass *pass = work->pass;
    size_t begin, end, offset = 0;
    for (size_t earlier = 0; earlier < chunk; ++earlier)
        offset += work->histograms[earlier * SG_BUCKET_COUNT + work->bucket];
    sg_chunk(pass->count, work->chunk_count, (int)chunk, &begin, &end);
    for (size_t i = begin; i < end; ++i) {
        uint64_t key;
        if (sg_pass_key(pass, i, &key))
            work->target[offset++] = key;
    }
}

/* The rank-th smallest (1-based) of data, for large data; keys, when not
 * NULL, are the data's keys already, read instead of data. */
static statgpu_status sg_radix_select(const void *data, statgpu_dtype dtype, const uint64_t *keys, size_t data_count,
                                      size_t rank, int thread_count, double *result)
{
    int chunk_count = thread_count;
    size_t *histograms = malloc((size_t)chunk_count * SG_BUCKET_COUNT * sizeof *histograms);
    if (histograms == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;

    uint64_t *buffer = NULL, *spare = NULL;
    sg_radix_pass pass = { data, dtype, keys, data_count, 0, 0, 64 - SG_DIGIT_BITS };
    statgpu_status status = STATGPU_OK;

    for (;;) {
        /* 1. Histogram of the current digit, one private histogram per chunk. */
        memset(histograms, 0, (size_t)chunk_count * SG_BUCKET_COUNT * sizeof *histograms);
        sg_chunk_pass work = { &pass, chunk_count, histograms, 0, NULL };
        sg_parallel_for(thread_count, (size_t)chunk_count, sg_histogram_chunk, &work);

        /* 2. The bucket holding the rank. */
        size_t below = 0, bucket_total = 0;
        unsigned bucket = 0;
        for (;; ++bucket) {
            bucket_total = 0;
            for (int chunk = 0; chunk < chunk_count; ++chunk)
                bucket_total += histograms[(size_t)chunk * SG_BUCKET_COUNT + bucket];
            if (below + bucket_total >= rank)
                break;
            below += bucket_total;
        }
        rank -= below;
        pass.prefix      |= (uint64_t)bucket << pass.shift;
        pass.prefix_mask |= (uint64_t)(SG_BUCKET_COUNT - 1) << pass.shift;

        if (pass.shift == 0) {  /* every bit decided: the key itself */
            *result = sg_double_from_key(pass.prefix);
            break;
        }

        /* 3. Compact the bucket's keys once it is clearly smaller than what we read. */
        if (bucket_total <= pass.count / 2 || bucket_total <= SG_FINISH_COUNT) {
            spare = malloc(bucket_total * sizeof *spare);
            if (spare == NULL) {
                status = STATGPU_ERROR_OUT_OF_MEMORY;
                break;
            }
            work.bucket = bucket;
            work.target = spare;
            sg_parallel_for(thread_count, (size_t)chunk_count, sg_compact_chunk, &work);
            free(buffer);
            buffer = spare;
            spare = NULL;
            pass.candidates = buffer;
            pass.count = bucket_total;
            if (bucket_total <= SG_FINISH_COUNT) {
                sg_introselect(buffer, 0, bucket_total, rank - 1);
                *result = sg_double_from_key(buffer[rank - 1]);
                break;
            }
        }
        pass.shift -= SG_DIGIT_BITS;
    }
    free(buffer);
    free(histograms);
    return status;
}

/* ----------------------------------------------------------- window select */

enum {
    /* Keys sampled to place the windows: a 64th of the data, from 256 to
     * this many, or to count^(2/3) where that is more, at most
     * SG_WINDOW_SAMPLE_MOST. The windows hold about 6 / sqrt(m) of the data
     * (3.3% at 2^15, 1.2% at 2^18), and what a window keeps costs more than
     * reading it: at 2^27 doubles on the H100 machine's 16 threads the pass
     * took 11.2-12.4 ms with empty windows, 15.7 with a 2^15 sample's and
     * 12.1 with a 2^18 sample's, and freeing the kept keys 1.6-1.9 against
     * 0.7 ms; sampling 2^18 keys took 0.4 ms and their places (introselect,
     * one thread) 1.6 ms before the sampled rounds. */
    SG_WINDOW_SAMPLE      = 1 << 15,
    SG_WINDOW_SAMPLE_MOST = 1 << 18,
    /* Sample keys a block of the sampling loop. */
    SG_WINDOW_SAMPLE_BLOCK = 1 << 12,
    /* Below this the sample would be most of the data: a copy and introselect. */
    SG_WINDOW_MIN_COUNT   = 1 << 12,
    /* At most this many windows, one a rank (merged where they overlap). */
    SG_WINDOW_MOST        = SG_RADIX_MAX_RANKS
};

/* Where a window select reads its keys: the caller's values (float32 or
 * float64, NaN looked for in the same pass), or the keys a window of an
 * earlier pass kept, one segment a thread, segment s holding positions
 * [offsets[s], offsets[s + 1]). */
typedef struct sg_window_source {
    const void            *data;      /* the values, or NULL for segments */
    statgpu_dtype          dtype;
    const uint64_t *const *segments;  /* segment_count key arrays */
    const size_t          *offsets;   /* segment_count + 1 */
    int                    segment_count;
    size_t                 count;
    int                    level;     /* 0: the caller's values; 1: a window's keys, ... */
} sg_window_source;

/* The segment that holds position i < count: the last with offsets[s] <= i
 * (empty segments come before the one they share an offset with). */
static int sg_segment_of(const sg_window_source *source, size_t i)
{
    int lo = 0, hi = source->segment_count - 1;
    while (lo < hi) {
        const int middle = lo + (hi - lo + 1) / 2;
        if (source->offsets[middle] <= i)
            lo = middle;
        else
            hi = middle - 1;
    }
    return lo;
}

static inline uint64_t sg_source_key(const sg_window_source *source, size_t i)
{
    if (source->data != NULL)
        return sg_key_at(source->data, source->dtype, i);
    const int s = sg_segment_of(source, i);
    return source->segments[s][i - source->offsets[s]];
}

/* A window [low, high] of keys and what one thread found of it. */
typedef struct sg_window_found {
    uint64_t *keys;      /* the keys inside the window */
    size_t    count, capacity;
    size_t    below;     /* keys below low */
    size_t    equal;     /* a single key's window: the keys equal to it, not kept */
} sg_window_found;

typedef struct sg_window_pass {
    const sg_window_source *source;
    int                     windows;
    uint64_t                low[SG_WINDOW_MOST], high[SG_WINDOW_MOST];
    bool                    single[SG_WINDOW_MOST];  /* low == high: counted, not kept */
    int                     team;
    sg_window_found        *found;  /* team x SG_WINDOW_MOST, by slot */
    atomic_int              nan, out_of_memory;
    /* One window over doubles or floats, read four at a time (AVX2) with
     * the window's bounds as doubles: where neither bound is a zero (-0.0
     * and +0.0 compare equal as doubles, not as keys) nor NaN. */
    bool                    vector;
    double                  low_value, high_value;
} sg_window_pass;

typedef struct sg_window_sampling {
    const sg_window_source *source;
    size_t                  m;
    uint64_t               *sample;
} sg_window_sampling;

/* Sample key s is the key at a place hashed from s: the same sample on any
 * team. */
static void sg_window_sample_block(void *context, size_t block, int slot)
{
    (void)slot;
    const sg_window_sampling *sampling = context;
    const size_t begin = block * SG_WINDOW_SAMPLE_BLOCK;
    const size_t end = begin + SG_WINDOW_SAMPLE_BLOCK < sampling->m ? begin + SG_WINDOW_SAMPLE_BLOCK : sampling->m;
    for (size_t s = begin; s < end; ++s)
        sampling->sample[s] = sg_source_key(sampling->source,
                                            sg_hashed_place(0x5E1EC7ull, s, sampling->source->count));
}

/* A source's segments one after another into keys. */
typedef struct sg_window_gather {
    const sg_window_source *source;
    uint64_t               *keys;
} sg_window_gather;

static void sg_window_gather_segment(void *context, size_t s, int slot)
{
    (void)slot;
    const sg_window_gather *gather = context;
    const size_t *offsets = gather->source->offsets;
    /* An empty segment may have no array: its thread's reserve could not be
     * allocated and it kept no key. */
    if (offsets[s + 1] > offsets[s])
        memcpy(gather->keys + offsets[s], gather->source->segments[s],
               (offsets[s + 1] - offsets[s]) * sizeof *gather->keys);
}

static uint64_t *sg_window_gathered(const sg_window_source *source, int thread_count)
{
    uint64_t *keys = malloc((source->count > 0 ? source->count : 1) * sizeof *keys);
    if (keys == NULL)
        return NULL;
    sg_window_gather gather = { source, keys };
    sg_parallel_for(sg_threads_for(thread_count, (size_t)source->segment_count, (double)source->count),
                    (size_t)source->segment_count, sg_window_gather_segment, &gather);
    return keys;
}

/* The ranks' keys of the source by radix select, segments gathered once:
 * for ranks their windows missed, and for windows crowded with equal keys. */
static statgpu_status sg_window_radix_select(const sg_window_source *source, const size_t *ranks,
                                             size_t rank_count, int thread_count, double *results)
{
    if (rank_count == 0)
        return STATGPU_OK;
    uint64_t *keys = NULL;
    if (source->data == NULL && (keys = sg_window_gathered(source, thread_count)) == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    statgpu_status status = STATGPU_OK;
    for (size_t j = 0; j < rank_count && status == STATGPU_OK; ++j)
        status = sg_radix_select(source->data, source->dtype, keys, source->count, ranks[j], thread_count,
                                 &results[j]);
    free(keys);
    return status;
}

static bool sg_window_keep(sg_window_found *found, uint64_t key)
{
    if (found->count == found->capacity) {  /* beyond the expected share: grow */
        size_t capacity = found->capacity ? 2 * found->capacity : SG_PASS_BLOCK / 16;
        uint64_t *keys = realloc(found->keys, capacity * sizeof *keys);
        if (keys == NULL)
            return false;
        found->keys = keys;
        found->capacity = capacity;
    }
    found->keys[found->count++] = key;
    return true;
}

/* How a scan reads element i of its array. */
enum { SG_SCAN_DOUBLES, SG_SCAN_FLOATS, SG_SCAN_KEYS };

static inline __attribute__((always_inline)) uint64_t sg_scan_key(const void *base, size_t i, int form, int *nan)
{
    if (form == SG_SCAN_KEYS)
        return ((const uint64_t *)base)[i];
    const double value = form == SG_SCAN_FLOATS ? (double)((const float *)base)[i] : ((const double *)base)[i];
    *nan |= value != value;
    return sg_key_from_double(value);
}

/* Elements [begin, end) of base against the windows, in one of the scan
 * forms (a constant where it is inlined): NaN, and one window (a median's,
 * the common case) with a compare a key. False when a kept key found no
 * memory. */
static inline __attribute__((always_inline)) bool sg_window_scan(sg_window_pass *pass, sg_window_found *found,
                                                                 const void *base, size_t begin, size_t end,
                                                                 int form, int *nan)
{
    bool kept = true;
    int seen = 0;
    if (pass->windows == 1 && pass->single[0]) {  /* duplicates: counts alone */
        const uint64_t key_of_window = pass->low[0];
        size_t below = 0, equal = 0;
        for (size_t i = begin; i < end; ++i) {
            const uint64_t key = sg_scan_key(base, i, form, &seen);
            below += key < key_of_window;
            equal += key == key_of_window;
        }
        found[0].below += below;
        found[0].equal += equal;
    } else if (pass->windows == 1) {
        const uint64_t low = pass->low[0], span = pass->high[0] - low;
        size_t below = 0;
        for (size_t i = begin; i < end; ++i) {
            const uint64_t key = sg_scan_key(base, i, form, &seen);
            below += key < low;
            if (key - low <= span)  /* low <= key <= high, unsigned */
                kept &= sg_window_keep(&found[0], key);
        }
        found[0].below += below;
    } else {
        for (size_t i = begin; i < end; ++i) {
            const uint64_t key = sg_scan_key(base, i, form, &seen);
            for (int w = 0; w < pass->windows; ++w) {
                if (key < pass->low[w])
                    ++found[w].below;
                else if (pass->single[w])
                    found[w].equal += key == pass->low[w];
                else if (key <= pass->high[w])
                    kept &= sg_window_keep(&found[w], key);
            }
        }
    }
    *nan |= seen;
    return kept;
}

#ifdef SG_WINDOW_AVX2
/* Values i .. i + 3 of doubles or floats (widened: exact), for the AVX2 scan. */
__attribute__((target("avx2"))) static inline __m256d sg_avx2_four(const void *data, size_t i, bool narrow)
{
    return narrow ? _mm256_cvtps_pd(_mm_loadu_ps((const float *)data + i)) : _mm256_loadu_pd((const double *)data + i);
}

/* The one-window scan of doubles or floats [begin, end), four a compare,
 * with the bounds as doubles: the same counts and keys as sg_window_scan's,
 * whose scalar loop took 4-5 cycles a value (200 against 100 ms for 2^27
 * doubles on one thread of the 2-core development machine; a plain sum
 * there reads them in 37 ms), enough to make the 16-thread pass slower than
 * the host's memory. NaN and the values inside the window, about one in
 * 30, are taken one by one. */
__attribute__((target("avx2,bmi"))) static inline __attribute__((always_inline)) bool
sg_window_scan_avx2(sg_window_pass *pass, sg_window_found *found, const void *data, size_t begin, size_t end,
                    bool narrow, int *nan)
{
    const __m256d low = _mm256_set1_pd(pass->low_value), high = _mm256_set1_pd(pass->high_value);
    __m256i below = _mm256_setzero_si256();
    bool kept = true;
    int seen = 0;
    size_t i = begin;
    for (; i + 4 <= end; i += 4) {
        const __m256d value = sg_avx2_four(data, i, narrow);
        below = _mm256_sub_epi64(below, _mm256_castpd_si256(_mm256_cmp_pd(value, low, _CMP_LT_OQ)));
        const __m256d inside = _mm256_and_pd(_mm256_cmp_pd(value, low, _CMP_GE_OQ),
                                             _mm256_cmp_pd(value, high, _CMP_LE_OQ));
        unsigned marked = (unsigned)_mm256_movemask_pd(_mm256_or_pd(inside, _mm256_cmp_pd(value, value, _CMP_UNORD_Q)));
        while (marked != 0) {
            const size_t at = i + (unsigned)__builtin_ctz(marked);
            const double one = narrow ? (double)((const float *)data)[at] : ((const double *)data)[at];
            marked &= marked - 1;
            if (one != one)
                seen = 1;
            else
                kept &= sg_window_keep(&found[0], sg_key_from_double(one));
        }
    }
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)(void *)lanes, below);
    size_t counted = (size_t)(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    for (; i < end; ++i) {
        const double one = narrow ? (double)((const float *)data)[i] : ((const double *)data)[i];
        seen |= one != one;
        counted += one < pass->low_value;
        if (one >= pass->low_value && one <= pass->high_value)
            kept &= sg_window_keep(&found[0], sg_key_from_double(one));
    }
    found[0].below += counted;
    *nan |= seen;
    return kept;
}

/* The scan above for each element type (the form a constant). */
__attribute__((target("avx2,bmi"))) static bool sg_window_scan_avx2_doubles(sg_window_pass *pass,
                                                                            sg_window_found *found, const void *data,
                                                                            size_t begin, size_t end, int *nan)
{
    return sg_window_scan_avx2(pass, found, data, begin, end, false, nan);
}

__attribute__((target("avx2,bmi"))) static bool sg_window_scan_avx2_floats(sg_window_pass *pass,
                                                                           sg_window_found *found, const void *data,
                                                                           size_t begin, size_t end, int *nan)
{
    return sg_window_scan_avx2(pass, found, data, begin, end, true, nan);
}
#endif

/* Whether a pass reads its one window's doubles with sg_window_scan_avx2,
 * and the bounds it compares with. */
static void sg_window_vector_choice(sg_window_pass *pass)
{
    pass->vector = false;
#ifdef SG_WINDOW_AVX2
    const sg_window_source *source = pass->source;
    if (source->data == NULL || pass->windows != 1 || pass->single[0])
        return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi"))
        return;
    /* Key 0 and UINT64_MAX, no bound, are NaN's bits: -inf and +inf. */
    pass->low_value = pass->low[0] == 0 ? -INFINITY : sg_double_from_key(pass->low[0]);
    pass->high_value = pass->high[0] == UINT64_MAX ? INFINITY : sg_double_from_key(pass->high[0]);
    pass->vector = pass->low_value == pass->low_value && pass->high_value == pass->high_value
                   && pass->low_value != 0.0 && pass->high_value != 0.0;
#endif
}

static void sg_window_block(void *context, size_t block, int slot)
{
    sg_window_pass *pass = context;
    const sg_window_source *source = pass->source;
    size_t begin, end;
    sg_pass_range(block, source->count, &begin, &end);
    sg_window_found *found = pass->found + (size_t)slot * SG_WINDOW_MOST;
    int nan = 0;
    bool kept = true;
    if (source->data == NULL) {  /* the block's part of each segment it spans */
        const size_t *offsets = source->offsets;
        for (int s = sg_segment_of(source, begin); s < source->segment_count && offsets[s] < end; ++s) {
            const size_t from = begin > offsets[s] ? begin - offsets[s] : 0;
            const size_t to = (end < offsets[s + 1] ? end : offsets[s + 1]) - offsets[s];
            kept &= sg_window_scan(pass, found, source->segments[s], from, to, SG_SCAN_KEYS, &nan);
        }
#ifdef SG_WINDOW_AVX2
    } else if (pass->vector) {
        kept = source->dtype == STATGPU_DTYPE_FLOAT32
                   ? sg_window_scan_avx2_floats(pass, found, source->data, begin, end, &nan)
                   : sg_window_scan_avx2_doubles(pass, found, source->data, begin, end, &nan);
#endif
    } else if (source->dtype == STATGPU_DTYPE_FLOAT32) {
        kept = sg_window_scan(pass, found, source->data, begin, end, SG_SCAN_FLOATS, &nan);
    } else {
        kept = sg_window_scan(pass, found, source->data, begin, end, SG_SCAN_DOUBLES, &nan);
    }
    if (nan)
        atomic_store_explicit(&pass->nan, 1, memory_order_relaxed);
    if (!kept)
        atomic_store_explicit(&pass->out_of_memory, 1, memory_order_relaxed);
}

static statgpu_status sg_window_select(const sg_window_source *source, const size_t *ranks, size_t rank_count,
                                       double *results, int thread_count);

/* The ranks of one window's kept keys (inside of them, the segments of the
 * pass's threads; ranks 1-based among them, ascending): a window select of
 * its own where they are many and the window did its work (at most a
 * quarter of what the pass read: at 2^27 values the 4.4 million keys of a
 * median's window go down to about 150,000 in a pass over them, where a
 * radix select's 16-bit histograms cost more than the pass), otherwise a
 * copy and radix select (many keys) or introselect. */
static statgpu_status sg_window_finish(const sg_window_pass *pass, int w, size_t inside, const size_t *ranks,
                                       size_t rank_count, double *results, int thread_count)
{
    const uint64_t **segments = malloc((size_t)pass->team * sizeof *segments);
    size_t *offsets = malloc(((size_t)pass->team + 1) * sizeof *offsets);
    uint64_t *keys = NULL;
    statgpu_status status = STATGPU_OK;
    if (segments == NULL || offsets == NULL) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    offsets[0] = 0;
    for (int t = 0; t < pass->team; ++t) {
        const sg_window_found *found = &pass->found[(size_t)t * SG_WINDOW_MOST + (size_t)w];
        segments[t] = found->keys;
        offsets[t + 1] = offsets[t] + found->count;
    }
    const sg_window_source kept = { NULL, STATGPU_DTYPE_FLOAT64, segments, offsets, pass->team, inside,
                                    pass->source->level + 1 };
    if (inside >= SG_RADIX_MIN_COUNT && inside <= pass->source->count / 4) {
        status = sg_window_select(&kept, ranks, rank_count, results, thread_count);
        goto done;
    }
    if (inside >= SG_RADIX_MIN_COUNT) {
        status = sg_window_radix_select(&kept, ranks, rank_count, thread_count, results);
        goto done;
    }
    keys = sg_window_gathered(&kept, thread_count);
    status = keys != NULL ? sg_select_keys(keys, inside, ranks, rank_count, results) : STATGPU_ERROR_OUT_OF_MEMORY;
done:
    free(keys);
    free(offsets);
    free(segments);
    return status;
}

/* The ranks (ascending, distinct, at most SG_WINDOW_MOST) of a source of at
 * least SG_WINDOW_MIN_COUNT keys, and NaN in the caller's values:
 * STATGPU_ERROR_NAN_IN_DATA where they hold one. A rank's window runs from
 * the sample's key 3 sqrt(m) places below the rank's place in the sample (m
 * keys) to the one 3 sqrt(m) above: six standard deviations of the
 * sample's count below the rank's key either side, so that a rank outside
 * its window (selected again, by radix select) comes about once in 5 x 10^8
 * ranks; the windows hold about 6 / sqrt(m) of the keys each (3.3% at m =
 * 2^15), finished by sg_window_finish. The results do not depend on the
 * sample, only the time does. */
static statgpu_status sg_window_select(const sg_window_source *source, const size_t *ranks, size_t rank_count,
                                       double *results, int thread_count)
{
    const double two_thirds = cbrt((double)source->count) * cbrt((double)source->count);
    const size_t most = two_thirds <= SG_WINDOW_SAMPLE        ? SG_WINDOW_SAMPLE
                        : two_thirds >= SG_WINDOW_SAMPLE_MOST ? SG_WINDOW_SAMPLE_MOST
                                                              : (size_t)two_thirds;
    const size_t m = source->count / 64 > most ? most : source->count / 64 < 256 ? 256 : source->count / 64;
    /* STATGPU_SELECT_WINDOW_REACH sets the 3, for tests of the ranks that
     * fall outside their windows (at 0 most do): "r" for every level, "r,s"
     * r for the values and s for the windows' keys. */
    const double reach = sg_asked_reach("STATGPU_SELECT_WINDOW_REACH", source->level > 0, 3.0) * sqrt((double)m);
    uint64_t *sample = malloc(m * sizeof *sample);
    size_t *places = malloc(2 * rank_count * sizeof *places);
    sg_window_pass *pass = calloc(1, sizeof *pass);
    statgpu_status status = STATGPU_OK;
    if (sample == NULL || places == NULL || pass == NULL) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    sg_window_sampling sampling = { source, m, sample };
    const size_t sample_blocks = (m + SG_WINDOW_SAMPLE_BLOCK - 1) / SG_WINDOW_SAMPLE_BLOCK;
    sg_parallel_for(sg_threads_for(thread_count, sample_blocks, 64.0 * (double)m), sample_blocks,
                    sg_window_sample_block, &sampling);
    /* Each rank's two places in the sample (outside it: no bound). */
    uint64_t low[SG_WINDOW_MOST], high[SG_WINDOW_MOST];
    for (size_t j = 0; j < rank_count; ++j) {
        sg_sample_bounds(ranks[j] - 1, source->count, m, reach, &places[2 * j], &places[2 * j + 1]);
    }
    size_t sorted_places[2 * SG_WINDOW_MOST] = { 0 }, place_count = 0;
    for (size_t p = 0; p < 2 * rank_count; ++p) {
        if (places[p] == SIZE_MAX)
            continue;
        size_t at = place_count++;  /* insertion: at most eight places */
        for (; at > 0 && sorted_places[at - 1] > places[p]; --at)
            sorted_places[at] = sorted_places[at - 1];
        sorted_places[at] = places[p];
    }
    sg_multiselect(sample, 0, m, sorted_places, place_count);
    for (size_t j = 0; j < rank_count; ++j) {
        low[j] = places[2 * j] == SIZE_MAX ? 0 : sample[places[2 * j]];
        high[j] = places[2 * j + 1] == SIZE_MAX ? UINT64_MAX : sample[places[2 * j + 1]];
    }
    /* The windows, ascending; overlapping ones merged. window_of[j]: rank j's. */
    int window_of[SG_WINDOW_MOST];
    double ranks_in[SG_WINDOW_MOST] = { 0 };  /* each window's ranks */
    pass->source = source;
    for (size_t j = 0; j < rank_count; ++j) {
        int w = pass->windows - 1;
        if (w >= 0 && low[j] <= pass->high[w]) {
            pass->high[w] = high[j] > pass->high[w] ? high[j] : pass->high[w];
        } else {
            w = pass->windows++;
            pass->low[w] = low[j];
            pass->high[w] = high[j];
        }
        window_of[j] = w;
        ranks_in[w] += 1.0;
    }
    /* A window the sample finds crowded (an eighth of it or more, and twice
     * the sample keys its ranks' reaches span: runs of equal keys around a
     * rank) would keep much of the data: a window of one key is counted
     * instead, any other leaves the ranks to radix select, which reads the
     * data no more than four times. */
    for (int w = 0; w < pass->windows; ++w) {
        size_t crowd = 0;
        for (size_t s = 0; s < m; ++s)
            crowd += sample[s] >= pass->low[w] && sample[s] <= pass->high[w];
        pass->single[w] = pass->low[w] == pass->high[w];
        if (crowd >= m / 8 && (double)crowd > 2.0 * ranks_in[w] * (2.0 * reach + 2.0) && !pass->single[w]) {
            if (source->data != NULL && sg_cpu_has_nan(source->data, source->dtype, source->count, thread_count)) {
                status = STATGPU_ERROR_NAN_IN_DATA;
                goto done;
            }
            status = sg_window_radix_select(source, ranks, rank_count, thread_count, results);
            goto done;
        }
    }
    const size_t blocks = (source->count + SG_PASS_BLOCK - 1) / SG_PASS_BLOCK;
    const int team = sg_threads_for(thread_count, blocks, (double)source->count);
    pass->found = calloc((size_t)team * SG_WINDOW_MOST, sizeof *pass->found);
    if (pass->found == NULL) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    pass->team = team;
    /* Each thread's expected share of each window and a quarter more,
     * reserved once (grown in the pass only beyond that). */
    for (int w = 0; w < pass->windows; ++w) {
        if (pass->single[w])
            continue;
        const double fraction = fmin(1.0, ranks_in[w] * (2.0 * reach + 2.0) / (double)m);
        const size_t capacity = (size_t)(1.25 * fraction * (double)source->count / (double)team) + SG_PASS_BLOCK / 16;
        for (int t = 0; t < team; ++t) {
            sg_window_found *found = &pass->found[(size_t)t * SG_WINDOW_MOST + (size_t)w];
            found->keys = malloc(capacity * sizeof *found->keys);
            found->capacity = found->keys != NULL ? capacity : 0;
        }
    }
    atomic_init(&pass->nan, 0);
    atomic_init(&pass->out_of_memory, 0);
    sg_window_vector_choice(pass);
    sg_parallel_for(team, blocks, sg_window_block, pass);
    if (atomic_load_explicit(&pass->nan, memory_order_relaxed)) {
        status = STATGPU_ERROR_NAN_IN_DATA;
        goto done;
    }
    if (atomic_load_explicit(&pass->out_of_memory, memory_order_relaxed)) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    /* The ranks that missed their windows, selected again together at the end. */
    size_t missed_ranks[SG_WINDOW_MOST], missed_of[SG_WINDOW_MOST], missed_count = 0;
    double missed_results[SG_WINDOW_MOST];
    for (int w = 0; w < pass->windows && status == STATGPU_OK; ++w) {
        size_t below = 0, inside = 0, equal = 0;
        for (int t = 0; t < team; ++t) {
            below += pass->found[(size_t)t * SG_WINDOW_MOST + w].below;
            inside += pass->found[(size_t)t * SG_WINDOW_MOST + w].count;
            equal += pass->found[(size_t)t * SG_WINDOW_MOST + w].equal;
        }
        const size_t held = pass->single[w] ? equal : inside;
        /* The window's ranks among its keys; the others missed it. */
        size_t local_ranks[SG_WINDOW_MOST], local_of[SG_WINDOW_MOST], local_count = 0;
        double local_results[SG_WINDOW_MOST];
        for (size_t j = 0; j < rank_count; ++j) {
            if (window_of[j] != w)
                continue;
            if (ranks[j] > below && ranks[j] <= below + held) {
                local_ranks[local_count] = ranks[j] - below;
                local_of[local_count++] = j;
            } else {
                missed_ranks[missed_count] = ranks[j];
                missed_of[missed_count++] = j;
            }
        }
        if (local_count == 0)
            continue;
        if (pass->single[w]) {
            for (size_t l = 0; l < local_count; ++l)
                local_results[l] = sg_double_from_key(pass->low[w]);
        } else {
            status = sg_window_finish(pass, w, inside, local_ranks, local_count, local_results, thread_count);
        }
        for (size_t l = 0; l < local_count && status == STATGPU_OK; ++l)
            results[local_of[l]] = local_results[l];
    }
    if (status == STATGPU_OK && missed_count > 0) {  /* outside their windows: read the keys again */
        status = sg_window_radix_select(source, missed_ranks, missed_count, thread_count, missed_results);
        for (size_t l = 0; l < missed_count && status == STATGPU_OK; ++l)
            results[missed_of[l]] = missed_results[l];
    }
done:
    if (pass != NULL && pass->found != NULL)
        for (size_t f = 0; f < (size_t)pass->team * SG_WINDOW_MOST; ++f)
            free(pass->found[f].keys);
    free(pass != NULL ? pass->found : NULL);
    free(pass);
    free(places);
    free(sample);
    return status;
}

/* The window select of a caller's values. */
static statgpu_status sg_window_select_values(const void *data, statgpu_dtype dtype, size_t data_count,
                                              const size_t *ranks, size_t rank_count, double *results,
                                              int thread_count)
{
    const sg_window_source source = { data, dtype, NULL, NULL, 0, data_count, 0 };
    return sg_window_select(&source, ranks, rank_count, results, thread_count);
}

/* ---------------------------------------------------------------- dispatch */

/* Window select where it applies: a few ranks of large data (AUTO, from
 * where radix select would run), or CUTTING_PLANE, the CPU's sampled
 * bounds, from SG_WINDOW_MIN_COUNT values. */
static bool sg_window_chosen(statgpu_select_method method, size_t data_count, size_t rank_count)
{
    if (rank_count > SG_WINDOW_MOST)
        return false;
    if (method == STATGPU_SELECT_CUTTING_PLANE)
        return data_count >= SG_WINDOW_MIN_COUNT;
    return method == STATGPU_SELECT_AUTO && data_count >= SG_RADIX_MIN_COUNT;
}

int sg_compare_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The baseline: sort every key, then read the ranks. */
static statgpu_status sg_select_by_sort(const void *data, statgpu_dtype dtype, size_t data_count,
                                        const size_t *ranks, size_t rank_count, double *results)
{
    uint64_t *keys = malloc(data_count * sizeof *keys);
    if (keys == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < data_count; ++i)
        keys[i] = sg_key_at(data, dtype, i);
    qsort(keys, data_count, sizeof *keys, sg_compare_keys);
    for (size_t j = 0; j < rank_count; ++j)
        results[j] = sg_double_from_key(keys[ranks[j] - 1]);
    free(keys);
    return STATGPU_OK;
}

statgpu_status sg_cpu_select_ranks(const void *data, statgpu_dtype dtype, size_t data_count,
                                   const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                   double *results, int thread_count)
{
    if (thread_count < 1)
        thread_count = 1;
    /* Fewer threads for little data (one below about 2^17 values a
     * thread): each radix chunk has its own histogram, and a context of
     * 1024 threads had taken 1.2 s and 700 MB for the median of 5 values.
     * The results do not depend on the team. */
    thread_count = sg_threads_for(thread_count, (size_t)thread_count, (double)data_count);
    if (method == STATGPU_SELECT_SORT)
        return sg_select_by_sort(data, dtype, data_count, ranks, rank_count, results);
    if (sg_window_chosen(method, data_count, rank_count))
        return sg_window_select_values(data, dtype, data_count, ranks, rank_count, results, thread_count);
    bool radix = method == STATGPU_SELECT_RADIX
                 || (data_count >= SG_RADIX_MIN_COUNT && rank_count <= SG_RADIX_MAX_RANKS);
    if (!radix)
        return sg_select_by_copy(data, dtype, data_count, ranks, rank_count, results, thread_count);

    for (size_t j = 0; j < rank_count; ++j) {
        statgpu_status status = sg_radix_select(data, dtype, NULL, data_count, ranks[j], thread_count, &results[j]);
        if (status != STATGPU_OK)
            return status;
    }
    return STATGPU_OK;
}

/* ------------------------------------------------------------ in place */

typedef struct sg_key_in_place {
    double *data;
    size_t  count;
} sg_key_in_place;

/* Each double of the block becomes its key, in its own 8 bytes. */
static void sg_key_in_place_block(void *context, size_t block, int slot)
{
    (void)slot;
    const sg_key_in_place *work = context;
    size_t begin, end;
    sg_pass_range(block, work->count, &begin, &end);
    for (size_t i = begin; i < end; ++i) {
        double value;
        memcpy(&value, &work->data[i], sizeof value);
        uint64_t key = sg_key_from_double(value);
        memcpy(&work->data[i], &key, sizeof key);
    }
}

statgpu_status sg_cpu_select_ranks_in_place(double *data, size_t data_count, const size_t *ranks, size_t rank_count,
                                            statgpu_select_method method, double *results, int thread_count)
{
    if (thread_count < 1)
        thread_count = 1;
    if (method == STATGPU_SELECT_SORT)
        return sg_select_by_sort(data, STATGPU_DTYPE_FLOAT64, data_count, ranks, rank_count, results);
    sg_key_in_place work = { data, data_count };
    sg_parallel_for(thread_count, (data_count + SG_PASS_BLOCK - 1) / SG_PASS_BLOCK, sg_key_in_place_block, &work);
    uint64_t *keys = (uint64_t *)(void *)data;
    bool radix = method == STATGPU_SELECT_RADIX
                 || (data_count >= SG_RADIX_MIN_COUNT && rank_count <= SG_RADIX_MAX_RANKS);
    if (radix) {
        for (size_t j = 0; j < rank_count; ++j) {
            statgpu_status status = sg_radix_select(NULL, STATGPU_DTYPE_FLOAT64, keys, data_count, ranks[j],
                                                    thread_count, &results[j]);
            if (status != STATGPU_OK)
                return status;
        }
        return STATGPU_OK;
    }
    return sg_select_keys(keys, data_count, ranks, rank_count, results);
}

statgpu_status sg_cpu_select_ranks_nan_checked(const void *data, statgpu_dtype dtype, size_t data_count, bool scratch,
                                               const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                               double *results, int thread_count)
{
    if (thread_count < 1)
        thread_count = 1;
    if (sg_window_chosen(method, data_count, rank_count))
        return sg_window_select_values(data, dtype, data_count, ranks, rank_count, results, thread_count);
    if (sg_cpu_has_nan(data, dtype, data_count, thread_count))
        return STATGPU_ERROR_NAN_IN_DATA;
    return scratch && dtype == STATGPU_DTYPE_FLOAT64
               ? sg_cpu_select_ranks_in_place((double *)(uintptr_t)data, data_count, ranks, rank_count, method,
                                              results, thread_count)
               : sg_cpu_select_ranks(data, dtype, data_count, ranks, rank_count, method, results, thread_count);
}
