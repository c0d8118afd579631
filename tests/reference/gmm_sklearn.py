#!/usr/bin/env python3
"""Reference Gaussian mixtures for statgpu's GMM from scikit-learn's GaussianMixture.

    python3 tests/reference/gmm_sklearn.py      (pip install scikit-learn; 1.9.1 wrote it)

Writes gmm_sklearn.csv next to itself: for Old Faithful (k = 2) and iris
(k = 3), each covariance type (full, tied, diag, spherical), from the same
given initial parameters (weights 1/k, means at rows floor(j n / k),
precisions the inverse of the whole data's covariance, its diagonal or its
mean variance) and reg_covar = 1e-6:
  weights_init, means_init, precisions_init   the initial parameters given
  bounds       lower_bound_ after max_iter = t (tol = 0), t = 1 .. 12: the mean
               per-row log-likelihood of iteration t's E-step
  weights, means (k x d, row-major by component), covariances (per type, row-major
  by component), precisions_cholesky, after 12 iterations
  score        score(X) * n: the total log-likelihood of those parameters
  bic, aic, parameters
and, with the default tol = 1e-3 and max_iter = 100, converged_iterations,
converged_bound. The engine test (tests/test_gmm_reference.c) reads only this
file; it needs no Python.
"""

import csv
import os
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS = 12


def read(name):
    with open(os.path.join(HERE, name), newline="") as source:
        rows = list(csv.reader(source))[1:]
    return np.array([[float(v) for v in row] for row in rows])


def initial(data, k, covariance):
    n, d = data.shape
    weights = np.full(k, 1.0 / k)
    means = np.array([data[j * n // k] for j in range(k)])
    whole = np.cov(data.T, bias=True)
    if covariance == "full":
        precisions = np.array([np.linalg.inv(whole)] * k)
    elif covariance == "tied":
        precisions = np.linalg.inv(whole)
    elif covariance == "diag":
        precisions = np.array([1.0 / np.diag(whole)] * k)
    else:
        precisions = np.full(k, 1.0 / np.mean(np.diag(whole)))
    return weights, means, precisions


def fit(data, k, covariance, max_iter, tol):
    weights, means, precisions = initial(data, k, covariance)
    model = GaussianMixture(n_components=k, covariance_type=covariance, tol=tol, reg_covar=1e-6,
                            max_iter=max_iter, n_init=1, weights_init=weights, means_init=means,
                            precisions_init=precisions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(data)
    return model


def flat(values):
    return " ".join(repr(float(v)) for v in np.asarray(values).ravel())


def main():
    rows = [("case", "quantity", "values")]
    for name, k in (("faithful", 2), ("iris", 3)):
        data = read(name + ".csv")
        n = data.shape[0]
        for covariance in ("full", "tied", "diag", "spherical"):
            case = "%s_%s" % (name, covariance)
            bounds = [fit(data, k, covariance, t, 0.0).lower_bound_ for t in range(1, ITERATIONS + 1)]
            weights, means, precisions = initial(data, k, covariance)
            rows.append((case, "weights_init", flat(weights)))
            rows.append((case, "means_init", flat(means)))
            rows.append((case, "precisions_init", flat(precisions)))
            rows.append((case, "bounds", flat(bounds)))
            model = fit(data, k, covariance, ITERATIONS, 0.0)
            rows.append((case, "weights", flat(model.weights_)))
            rows.append((case, "means", flat(model.means_)))
            rows.append((case, "covariances", flat(model.covariances_)))
            rows.append((case, "precisions_cholesky", flat(model.precisions_cholesky_)))
            rows.append((case, "score", flat([model.score(data) * n])))
            rows.append((case, "bic", flat([model.bic(data)])))
            rows.append((case, "aic", flat([model.aic(data)])))
            rows.append((case, "parameters", flat([model._n_parameters()])))
            converged = fit(data, k, covariance, 100, 1e-3)
            rows.append((case, "converged_iterations", flat([converged.n_iter_])))
            rows.append((case, "converged_bound", flat([converged.lower_bound_])))
    with open(os.path.join(HERE, "gmm_sklearn.csv"), "w", newline="") as out:
        csv.writer(out).writerows(rows)


if __name__ == "__main__":
    main()
