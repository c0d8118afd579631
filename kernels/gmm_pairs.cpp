/*
 * gmm_pairs.cpp: gmm_pairs.h's pairing of components for the GPU E-step.
 */
#include "gmm_pairs.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace statgpu_cuda {

/* Components a and b share an m16n8k8 product where b's sums lose at most
 * kPairLossBits bits. The loss bound: |mean_a - mean_b| / spread_b, the
 * spread b's smallest standard deviation, 1 / sqrt(largest eigenvalue of
 * F_b F_b^T), which ||F_b||_F bounds from above; so rho(b | a) = |mean_a -
 * mean_b| ||F_b||_F, at most 2^kPairLossBits (with every product rounded
 * to 53 bits, b's sums stay within about 2^-45 of a product of their own).
 * Greedy: the pair of least rho (the better of its two orders) first, ties
 * to the lower indices; the rest alone. Measured on the H100, 10^6 x 8,
 * k = 8, 50 iterations, device time: 8.38-8.74 ms with every component
 * alone (STATGPU_CUDA_GMM_PAIRS=0), 7.67-7.89 ms paired (bench/NOTES.md
 * "GMM v9"). */
void pair_components(int k, int d, const double *means, const double *factors, bool pair, double *table)
{
    std::vector<double> spread_inverse(k);
    for (int j = 0; j < k; ++j) {
        double f = 0.0;
        for (int e = 0; e < d * d; ++e)
            f += factors[static_cast<size_t>(j) * d * d + e] * factors[static_cast<size_t>(j) * d * d + e];
        spread_inverse[j] = std::sqrt(f);
    }
    const double limit = std::ldexp(1.0, kPairLossBits);
    std::vector<char> taken(k, 0);
    int units = 0;
    for (;;) {
        int best_a = -1, best_b = -1;
        double best = limit;
        for (int a = 0; pair && a < k; ++a)
            for (int b = 0; b < k; ++b) {
                if (a == b || taken[a] || taken[b])
                    continue;
                double gap = 0.0;
                for (int v = 0; v < d; ++v) {
                    const double delta = means[a + static_cast<size_t>(k) * v] - means[b + static_cast<size_t>(k) * v];
                    gap += delta * delta;
                }
                const double rho = std::sqrt(gap) * spread_inverse[b];
                if (best_a < 0 ? rho <= best : rho < best) {  /* a NaN never pairs */
                    best = rho;
                    best_a = a;
                    best_b = b;
                }
            }
        if (best_a < 0)
            break;
        taken[best_a] = taken[best_b] = 1;
        table[1 + 2 * units] = best_a;
        table[2 + 2 * units] = best_b;
        ++units;
    }
    for (int j = 0; j < k; ++j)
        if (!taken[j]) {
            table[1 + 2 * units] = j;
            table[2 + 2 * units] = -1;
            ++units;
        }
    table[0] = units;
}

} /* namespace statgpu_cuda */
