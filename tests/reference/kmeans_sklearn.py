#!/usr/bin/env python3
"""Reference inertias for statgpu's k-means from scikit-learn's KMeans.

    /usr/bin/python3 tests/reference/kmeans_sklearn.py

(Debian 12: apt-get install python3-sklearn; scikit-learn 1.2.1.) Writes, next
to itself:
  blobs.csv, blobs_overlapping.csv   Gaussian blobs from a generator written out
                                     here (splitmix64 and Box-Muller), so they do
                                     not depend on numpy's random streams
  kmeans_sklearn.csv                 per data set, k and random_state: the inertia
                                     and n_iter_ of KMeans(init="k-means++",
                                     n_init=10, max_iter=300, tol=1e-4,
                                     algorithm="lloyd")
iris.csv comes from kmeans_reference.R (R's iris[, 1:4]). The engine test
(tests/test_kmeans_reference.c) runs statgpu with k-means++ and 10 restarts
for the seeds 0..29 and reads only these committed files.
"""

import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RANDOM_STATES = range(30)
N_INIT = 10

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        """On (0, 1)."""
        return ((self.next() >> 11) + 0.5) * 2.0 ** -53

    def normal(self):
        u, v = self.uniform(), self.uniform()
        return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * v)


def blobs(seed, centres, sizes, spreads):
    """Rows of Gaussian blobs around centres, rounded to 6 decimals so that the
    CSV holds them exactly as generated."""
    rng = SplitMix64(seed)
    rows = []
    for centre, size, spread in zip(centres, sizes, spreads):
        for _ in range(size):
            rows.append([round(c + spread * rng.normal(), 6) for c in centre])
    order = list(range(len(rows)))  # shuffled, so no cluster is a run of rows
    for i in range(len(order) - 1, 0, -1):
        j = rng.next() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return [rows[i] for i in order]


def write_csv(name, header, rows):
    with open(os.path.join(HERE, name), "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def read_csv(name):
    with open(os.path.join(HERE, name), newline="") as source:
        rows = list(csv.reader(source))
    return [[float(value) for value in row] for row in rows[1:]]


def make_data():
    # Six well-separated blobs in 3-D of unequal sizes and spreads.
    separated = blobs(20240501,
                      [(0, 0, 0), (10, 0, 0), (0, 10, 0), (0, 0, 10), (10, 10, 10), (-8, 6, -5)],
                      [300, 150, 400, 80, 250, 320], [1.0, 0.6, 1.5, 0.8, 1.2, 2.0])
    write_csv("blobs.csv", ["x1", "x2", "x3"], separated)
    # Ten overlapping blobs in 2-D: many local minima.
    rng = SplitMix64(7)
    centres = [(rng.uniform() * 20, rng.uniform() * 20) for _ in range(10)]
    overlapping = blobs(99, centres, [200] * 10, [2.0] * 10)
    write_csv("blobs_overlapping.csv", ["x1", "x2"], overlapping)


CASES = [("iris", k) for k in range(2, 9)] + \
        [("blobs", k) for k in range(3, 11)] + \
        [("blobs_overlapping", k) for k in (5, 10, 15)]


def main():
    import numpy
    import sklearn
    from sklearn.cluster import KMeans

    make_data()
    lines = []
    for name, k in CASES:
        x = numpy.array(read_csv(name + ".csv"), dtype=numpy.float64)
        for random_state in RANDOM_STATES:
            fit = KMeans(n_clusters=k, init="k-means++", n_init=N_INIT, max_iter=300, tol=1e-4,
                         algorithm="lloyd", random_state=random_state).fit(x)
            lines.append((name, k, N_INIT, random_state, "%.17g" % fit.inertia_, fit.n_iter_))
        inertias = [float(line[4]) for line in lines[-len(RANDOM_STATES):]]
        print("%-18s k=%2d  inertia best %.10g, mean %.10g" % (name, k, min(inertias),
                                                             sum(inertias) / len(inertias)))
    write_csv("kmeans_sklearn.csv", ["dataset", "k", "n_init", "random_state", "inertia", "n_iter"], lines)
    print("scikit-learn %s: wrote %d fits to kmeans_sklearn.csv" % (sklearn.__version__, len(lines)))


if __name__ == "__main__":
    sys.exit(main())
