/*
 * bestsubset.h: the search of best subset regression (bestsubset_search.c),
 * which bestsubset.c runs once on all rows and once per validation fold.
 */
#ifndef STATGPU_METHODS_BESTSUBSET_H
#define STATGPU_METHODS_BESTSUBSET_H

#include "statgpu.h"
#include "backend/cuda_module.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of predictors, bit v for predictor v. */
#define SG_SUBSET_MASK_WORDS ((STATGPU_BESTSUBSET_MAX_VARS + 63) / 64)
typedef struct sg_subset_mask {
    uint64_t word[SG_SUBSET_MASK_WORDS];
} sg_subset_mask;

/* What the search is given: the triangular factor of the tree's columns (the
 * forced ones first, then the free ones) and the response, and what to find. */
typedef struct sg_subset_problem {
    const double *r;          /* (columns + 1)^2, column-major, upper triangle: the
                                 factor of [forced, free, y], y last */
    size_t        columns;    /* forced + free */
    size_t        forced;
    const size_t *vars;       /* columns: the predictor of each column */
    size_t        min_size;   /* sizes to keep, in columns (forced ones included) */
    size_t        max_size;
    size_t        nbest;
    double        margin;     /* RSS within this of a bound are never cut */
} sg_subset_problem;

/* The best subsets found, per size 0 .. columns: count[s] of them (at most
 * nbest), sorted by RSS, then by their predictors. */
typedef struct sg_subset_best {
    size_t          columns, nbest;
    size_t         *count;     /* columns + 1 */
    double         *rss;       /* (columns + 1) x nbest */
    sg_subset_mask *mask;      /* (columns + 1) x nbest */
} sg_subset_best;

/* The GPU's part in a search: asked for by the caller (wanted; the search
 * takes the GPU with nbest = 1 only), and what happened. */
typedef struct sg_subset_device {
    bool                wanted;
    bool                ran;                /* the subtrees were searched on the GPU */
    statgpu_cuda_status status;             /* why not, when wanted and not ran */
    char                message[256];
    double              transfer_seconds, compute_seconds;
} sg_subset_device;

bool sg_subset_best_init(sg_subset_best *best, size_t columns, size_t nbest);
void sg_subset_best_free(sg_subset_best *best);

/* Whether subset a ranks before subset b of the same size: the smaller RSS,
 * or at equal RSS the earliest differing predictor. */
bool sg_subset_before(double rss_a, const sg_subset_mask *a, double rss_b, const sg_subset_mask *b);

/* Fills best with the nbest best subsets of every size in [min_size,
 * max_size]. Progress is reported from progress_from to progress_to of the
 * call. With device->wanted (and nbest = 1) the subtrees below the nodes
 * that are reordered are searched on the GPU, the same tree with the same
 * bits; where the GPU fails the search runs on the CPU (device says why).
 * device may be NULL. Returns STATGPU_OK, STATGPU_ERROR_OUT_OF_MEMORY or
 * STATGPU_ERROR_CANCELLED (the context's message set). */
statgpu_status sg_subset_search(statgpu_context *context, const sg_subset_problem *problem, int thread_count,
                                double progress_from, double progress_to, sg_subset_device *device,
                                sg_subset_best *best, uint64_t *nodes /* in-out: adds the nodes evaluated */);

#endif
