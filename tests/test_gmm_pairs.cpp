/*
 * test_gmm_pairs.cpp: the GPU E-step's pairing of mixture components
 * (kernels/gmm_pairs.h), tested without a GPU: every component in exactly one
 * unit, pairs only within the loss bound (|mean_a - mean_b| ||F_b||_F <=
 * 2^kPairLossBits, the second component the one that loses), the nearest
 * pairs first, NaN never paired, nothing paired when asked not to, and the
 * table within its size at the most components.
 *
 * Standalone (no cmocka, no CUDA): prints one line per failure and a final
 * "N passed, M failed"; exits non-zero on any failure.
 */
#include "gmm_pairs.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

using statgpu_cuda::kPairLossBits;
using statgpu_cuda::kPairMostComponents;
using statgpu_cuda::kPairTableDoubles;
using statgpu_cuda::pair_components;

int g_passed = 0;
int g_failed = 0;

void check(bool ok, const char *what, int line)
{
    if (ok) {
        ++g_passed;
    } else {
        ++g_failed;
        std::printf("FAILED line %d: %s\n", line, what);
    }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

/* A model of k components in d variables: means given (j + k v), factors
 * scale times the identity. */
struct Model {
    int k, d;
    std::vector<double> means, factors;
    Model(int k_, int d_) : k(k_), d(d_), means(static_cast<size_t>(k_) * d_), factors(static_cast<size_t>(k_) * d_ * d_)
    {
        for (int j = 0; j < k; ++j)
            set_scale(j, 1.0);
    }
    void set_scale(int j, double scale)
    {
        for (int e = 0; e < d * d; ++e)
            factors[static_cast<size_t>(j) * d * d + e] = e % (d + 1) == 0 ? scale : 0.0;
    }
};

struct Units {
    int count = 0;
    std::vector<int> a, b;
};

/* Runs pair_components with guard values past the table; checks the table's
 * shape (each component once, the count within k) and returns the units. */
Units pair(const Model &m, bool allowed = true)
{
    std::vector<double> table(kPairTableDoubles + 8, -7.0);
    pair_components(m.k, m.d, m.means.data(), m.factors.data(), allowed, table.data());
    for (int e = kPairTableDoubles; e < kPairTableDoubles + 8; ++e)
        CHECK(table[e] == -7.0);  /* nothing written past the table */
    Units units;
    units.count = static_cast<int>(table[0]);
    CHECK(units.count >= (m.k + 1) / 2 && units.count <= m.k);
    std::vector<int> seen(m.k, 0);
    for (int u = 0; u < units.count; ++u) {
        const int a = static_cast<int>(table[1 + 2 * u]), b = static_cast<int>(table[2 + 2 * u]);
        CHECK(a >= 0 && a < m.k && b >= -1 && b < m.k && a != b);
        if (a >= 0 && a < m.k)
            ++seen[a];
        if (b >= 0 && b < m.k)
            ++seen[b];
        units.a.push_back(a);
        units.b.push_back(b);
    }
    for (int j = 0; j < m.k; ++j)
        CHECK(seen[j] == 1);
    return units;
}

/* rho(b | a) = |mean_a - mean_b| ||F_b||_F */
double rho(const Model &m, int a, int b)
{
    double gap = 0.0, f = 0.0;
    for (int v = 0; v < m.d; ++v) {
        const double delta = m.means[a + static_cast<size_t>(m.k) * v] - m.means[b + static_cast<size_t>(m.k) * v];
        gap += delta * delta;
    }
    for (int e = 0; e < m.d * m.d; ++e)
        f += m.factors[static_cast<size_t>(b) * m.d * m.d + e] * m.factors[static_cast<size_t>(b) * m.d * m.d + e];
    return std::sqrt(gap) * std::sqrt(f);
}

void test_one_component()
{
    Model m(1, 3);
    const Units u = pair(m);
    CHECK(u.count == 1 && u.a[0] == 0 && u.b[0] == -1);
}

void test_near_and_far()
{
    /* One variable, F = 1: components at 0, 1, 1.5 and 1000. (1, 2) is the
     * nearest pair; 0 and 3 are 1000 apart, past 2^8, so alone. */
    Model m(4, 1);
    m.means = { 0.0, 1.0, 1.5, 1000.0 };
    const Units u = pair(m);
    CHECK(u.count == 3);
    CHECK((u.a[0] == 1 && u.b[0] == 2) || (u.a[0] == 2 && u.b[0] == 1));
    CHECK(u.b[1] == -1 && u.b[2] == -1);
    CHECK(u.a[1] == 0 && u.a[2] == 3);  /* the ones alone in index order */
}

void test_threshold()
{
    /* rho exactly 2^8 pairs, the next double above it does not. */
    const double limit = std::ldexp(1.0, kPairLossBits);
    Model m(2, 1);
    m.means = { 0.0, limit };
    CHECK(pair(m).count == 1);
    m.means = { 0.0, std::nextafter(limit, 2 * limit) };
    CHECK(pair(m).count == 2);
}

void test_orientation()
{
    /* The second component is the one whose sums lose bits, so it must be
     * the wider one: b has the smaller ||F_b||. Components 10 apart, F_0 = 40
     * (rho(0 | 1) = 400, past the limit) and F_1 = 2 (rho(1 | 0) = 20). */
    Model m(2, 1);
    m.means = { 0.0, 10.0 };
    m.set_scale(0, 40.0);
    m.set_scale(1, 2.0);
    const Units u = pair(m);
    CHECK(u.count == 1 && u.a[0] == 0 && u.b[0] == 1);
    CHECK(rho(m, u.a[0], u.b[0]) <= std::ldexp(1.0, kPairLossBits));
}

void test_nan_and_not_allowed()
{
    Model m(3, 2);
    m.means = { 0.0, 0.5, std::numeric_limits<double>::quiet_NaN(), 0.0, 0.5, 1.0 };
    Units u = pair(m);
    CHECK(u.count == 2);
    for (int i = 0; i < u.count; ++i)
        if (u.b[i] >= 0)
            CHECK(u.a[i] != 2 && u.b[i] != 2);
    m.means = { 0.0, 0.5, 0.25, 0.0, 0.5, 0.25 };
    CHECK(pair(m).count == 2);
    u = pair(m, false);
    CHECK(u.count == 3);
    for (int i = 0; i < 3; ++i)
        CHECK(u.a[i] == i && u.b[i] == -1);
}

void test_random_models()
{
    /* Random models up to the most components: the table's shape (checked in
     * pair), every pair within the bound, and greedy order: no component left
     * alone could have paired with another left alone. */
    std::mt19937_64 rng(2026);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int trial = 0; trial < 400; ++trial) {
        const int k = 1 + static_cast<int>(rng() % kPairMostComponents), d = 1 + static_cast<int>(rng() % 8);
        Model m(k, d);
        const double spread = std::pow(10.0, 4.0 * uniform(rng) - 1.0);
        for (auto &mean : m.means)
            mean = spread * normal(rng);
        for (int j = 0; j < k; ++j)
            for (int col = 0; col < d; ++col)
                for (int row = 0; row <= col; ++row)
                    m.factors[static_cast<size_t>(j) * d * d + row + d * col] =
                        row == col ? 0.5 + uniform(rng) : 0.3 * normal(rng);
        const Units u = pair(m, true);
        const double limit = std::ldexp(1.0, kPairLossBits);
        std::vector<int> alone;
        for (int i = 0; i < u.count; ++i) {
            if (u.b[i] >= 0)
                CHECK(rho(m, u.a[i], u.b[i]) <= limit);
            else
                alone.push_back(u.a[i]);
        }
        for (size_t x = 0; x < alone.size(); ++x)
            for (size_t y = 0; y < alone.size(); ++y)
                if (x != y)
                    CHECK(rho(m, alone[x], alone[y]) > limit);
    }
}

void test_all_alone_fits()
{
    /* The most components, all far apart: 16 units in the table. */
    Model m(kPairMostComponents, 2);
    for (int j = 0; j < m.k; ++j) {
        m.means[j] = 1e6 * j;
        m.means[j + m.k] = -1e6 * j;
    }
    const Units u = pair(m);
    CHECK(u.count == kPairMostComponents);
}

} /* namespace */

int main()
{
    test_one_component();
    test_near_and_far();
    test_threshold();
    test_orientation();
    test_nan_and_not_allowed();
    test_random_models();
    test_all_alone_fits();
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
