/*
 * gmm_pairs.h: which components of a Gaussian mixture share the GPU E-step's
 * m16n8k8 products of sums (gmm.cu's PairSums, 8 padded variables). Plain
 * C++, no CUDA, so that it is tested without a GPU (tests/test_gmm_pairs.cpp).
 */
#ifndef STATGPU_KERNELS_GMM_PAIRS_H
#define STATGPU_KERNELS_GMM_PAIRS_H

namespace statgpu_cuda {

/* The most components the paired E-step takes, and its table's size: the
 * count of units, then a and b per unit (b = -1 where a is alone). */
constexpr int kPairMostComponents = 16;
constexpr int kPairTableDoubles = 1 + 2 * kPairMostComponents;

/* A pair's second component may lose at most this many bits of its sums. */
constexpr int kPairLossBits = 8;

/* The units of one model into table (kPairTableDoubles): means k x d
 * (component j's variable v at j + k v), factors the precisions' upper
 * Cholesky factors F_j (d x d each, column-major, j d^2 + row + d col), so
 * that the Mahalanobis distance is |F_j^T (x - mean_j)|. With pair false,
 * every component alone. 1 <= k <= kPairMostComponents. */
void pair_components(int k, int d, const double *means, const double *factors, bool pair, double *table);

} /* namespace statgpu_cuda */

#endif
