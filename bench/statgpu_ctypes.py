"""ctypes binding of the statgpu engine's public API (engine/include/statgpu.h),
for the benchmarks: it lets one Python process time statgpu and its peers on
the very same device buffers."""
import ctypes
import os

BACKEND = {"auto": 0, "cpu": 1, "cuda": 2}
METHOD = {"auto": 0, "cutting_plane": 1, "radix": 2, "sort": 3}
DTYPE = {"float64": 0, "float32": 1}
MEMORY = {"host": 0, "device": 1}


class ContextParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("backend", ctypes.c_int),
        ("device", ctypes.c_int),
        ("thread_count", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("progress", ctypes.c_void_p),
        ("progress_user_data", ctypes.c_void_p),
        ("select_method", ctypes.c_int),
    ]


class BackendReport(ctypes.Structure):
    _fields_ = [
        ("requested", ctypes.c_int),
        ("last_used", ctypes.c_int),
        ("cuda_available", ctypes.c_int),
        ("cuda_device", ctypes.c_int),
        ("cuda_runtime_version", ctypes.c_int),
        ("cuda_driver_version", ctypes.c_int),
        ("cpu_thread_count", ctypes.c_int),
        ("device_name", ctypes.c_char * 128),
        ("note", ctypes.c_char * 256),
        ("last_transfer_seconds", ctypes.c_double),
        ("last_compute_seconds", ctypes.c_double),
    ]


class Vector(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("count", ctypes.c_size_t),
        ("dtype", ctypes.c_int),
        ("memory", ctypes.c_int),
    ]


class StatgpuError(RuntimeError):
    pass


class Engine:
    def __init__(self, library_path):
        self.lib = ctypes.CDLL(os.path.abspath(library_path))
        lib = self.lib
        lib.statgpu_context_params_init.argtypes = [ctypes.POINTER(ContextParams)]
        lib.statgpu_context_create.argtypes = [ctypes.POINTER(ContextParams), ctypes.POINTER(ctypes.c_void_p)]
        lib.statgpu_context_destroy.argtypes = [ctypes.c_void_p]
        lib.statgpu_context_last_error.argtypes = [ctypes.c_void_p]
        lib.statgpu_context_last_error.restype = ctypes.c_char_p
        lib.statgpu_context_backend_report.argtypes = [ctypes.c_void_p, ctypes.POINTER(BackendReport)]
        lib.statgpu_vector_select.argtypes = [ctypes.c_void_p, ctypes.POINTER(Vector), ctypes.POINTER(ctypes.c_size_t),
                                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_double)]
        lib.statgpu_vector_median.argtypes = [ctypes.c_void_p, ctypes.POINTER(Vector), ctypes.POINTER(ctypes.c_double)]
        lib.statgpu_vector_quantiles.argtypes = [ctypes.c_void_p, ctypes.POINTER(Vector), ctypes.POINTER(ctypes.c_double),
                                                 ctypes.c_size_t, ctypes.POINTER(ctypes.c_double)]
        lib.statgpu_version_string.restype = ctypes.c_char_p

    def context(self, backend="auto", method="auto", threads=0, device=0):
        return Context(self, backend, method, threads, device)


class Context:
    def __init__(self, engine, backend, method, threads, device):
        self.engine = engine
        params = ContextParams()
        engine.lib.statgpu_context_params_init(ctypes.byref(params))
        params.backend = BACKEND[backend]
        params.select_method = METHOD[method]
        params.thread_count = threads
        params.device = device
        self.handle = ctypes.c_void_p()
        status = engine.lib.statgpu_context_create(ctypes.byref(params), ctypes.byref(self.handle))
        if status != 0:
            raise StatgpuError(f"statgpu_context_create failed with status {status}")

    def close(self):
        if self.handle:
            self.engine.lib.statgpu_context_destroy(self.handle)
            self.handle = ctypes.c_void_p()

    def _check(self, status):
        if status != 0:
            message = self.engine.lib.statgpu_context_last_error(self.handle).decode()
            raise StatgpuError(f"status {status}: {message}")

    def report(self):
        report = BackendReport()
        self._check(self.engine.lib.statgpu_context_backend_report(self.handle, ctypes.byref(report)))
        return report

    @staticmethod
    def vector(pointer, count, dtype, memory):
        return Vector(pointer, count, DTYPE[dtype], MEMORY[memory])

    def select(self, vector, ranks):
        ranks_array = (ctypes.c_size_t * len(ranks))(*ranks)
        results = (ctypes.c_double * len(ranks))()
        self._check(self.engine.lib.statgpu_vector_select(self.handle, ctypes.byref(vector), ranks_array,
                                                           len(ranks), results))
        return list(results)

    def median(self, vector):
        result = ctypes.c_double()
        self._check(self.engine.lib.statgpu_vector_median(self.handle, ctypes.byref(vector), ctypes.byref(result)))
        return result.value

    def quantiles(self, vector, probabilities):
        p = (ctypes.c_double * len(probabilities))(*probabilities)
        results = (ctypes.c_double * len(probabilities))()
        self._check(self.engine.lib.statgpu_vector_quantiles(self.handle, ctypes.byref(vector), p, len(probabilities),
                                                              results))
        return list(results)


# ----- k-means -----

KMEANS_INIT = {"auto": 0, "plus_plus": 1, "parallel": 2, "given": 3}


class KmeansParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("restart_count", ctypes.c_size_t),
        ("max_iterations", ctypes.c_size_t),
        ("tolerance", ctypes.c_double),
        ("init", ctypes.c_int),
        ("initial_centroids", ctypes.c_void_p),
        ("seed", ctypes.c_uint64),
    ]


class KmeansResult(ctypes.Structure):
    _fields_ = [
        ("k", ctypes.c_size_t),
        ("n_obs", ctypes.c_size_t),
        ("n_vars", ctypes.c_size_t),
        ("centroids", ctypes.POINTER(ctypes.c_double)),
        ("labels", ctypes.POINTER(ctypes.c_int32)),
        ("cluster_sizes", ctypes.POINTER(ctypes.c_size_t)),
        ("within_ss", ctypes.POINTER(ctypes.c_double)),
        ("inertia", ctypes.c_double),
        ("total_ss", ctypes.c_double),
        ("iterations", ctypes.c_size_t),
        ("converged", ctypes.c_int),
        ("best_restart", ctypes.c_size_t),
        ("restart_count", ctypes.c_size_t),
        ("reseed_count", ctypes.c_size_t),
        ("init", ctypes.c_int),
    ]


def kmeans(context, data, k, initial_centroids=None, max_iterations=300, tolerance=1e-4, restarts=10, init="auto",
           seed=0, want_labels=False):
    """k-means of data (n x d float64 numpy array in column-major order,
    numpy order='F'); initial_centroids (k x d, order='F') selects INIT_GIVEN.
    Returns a dict: inertia, iterations, converged, centroids (k x d nested
    lists), labels (a list, when want_labels)."""
    lib = context.engine.lib
    lib.statgpu_kmeans_params_init.argtypes = [ctypes.POINTER(KmeansParams)]
    lib.statgpu_kmeans.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                   ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(KmeansParams),
                                   ctypes.POINTER(ctypes.POINTER(KmeansResult))]
    lib.statgpu_kmeans_result_destroy.argtypes = [ctypes.POINTER(KmeansResult)]
    if not data.flags["F_CONTIGUOUS"] or str(data.dtype) != "float64":
        raise ValueError("data must be a float64 array in column-major order (numpy order='F')")
    params = KmeansParams()
    lib.statgpu_kmeans_params_init(ctypes.byref(params))
    params.max_iterations = max_iterations
    params.tolerance = tolerance
    params.restart_count = restarts
    params.seed = seed
    params.init = KMEANS_INIT[init]
    if initial_centroids is not None:
        if not initial_centroids.flags["F_CONTIGUOUS"] or initial_centroids.shape != (k, data.shape[1]):
            raise ValueError("initial_centroids must be k x d in column-major order")
        params.init = KMEANS_INIT["given"]
        params.initial_centroids = initial_centroids.ctypes.data
    n, d = data.shape
    result = ctypes.POINTER(KmeansResult)()
    context._check(lib.statgpu_kmeans(context.handle, data.ctypes.data, n, d, n, k, ctypes.byref(params),
                                      ctypes.byref(result)))
    try:
        r = result.contents
        out = {"inertia": r.inertia, "iterations": r.iterations, "converged": bool(r.converged),
               "centroids": [[r.centroids[j + k * v] for v in range(d)] for j in range(k)]}
        if want_labels:
            out["labels"] = r.labels[:n]
        return out
    finally:
        lib.statgpu_kmeans_result_destroy(result)


# ----- least trimmed squares -----

class LtsParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("alpha", ctypes.c_double),
        ("intercept", ctypes.c_int),
        ("criterion", ctypes.c_int),
        ("start_count", ctypes.c_size_t),
        ("best_count", ctypes.c_size_t),
        ("max_steps", ctypes.c_size_t),
        ("seed", ctypes.c_uint64),
    ]


class LtsResult(ctypes.Structure):
    _fields_ = [
        ("n_obs", ctypes.c_size_t),
        ("n_vars", ctypes.c_size_t),
        ("p", ctypes.c_size_t),
        ("intercept", ctypes.c_int),
        ("criterion", ctypes.c_int),
        ("h", ctypes.c_size_t),
        ("alpha", ctypes.c_double),
        ("raw_coefficients", ctypes.POINTER(ctypes.c_double)),
        ("raw_scale", ctypes.c_double),
        ("raw_consistency_factor", ctypes.c_double),
        ("raw_correction_factor", ctypes.c_double),
        ("coefficients", ctypes.POINTER(ctypes.c_double)),
        ("scale", ctypes.c_double),
        ("consistency_factor", ctypes.c_double),
        ("correction_factor", ctypes.c_double),
        ("objective", ctypes.c_double),
        ("raw_weights", ctypes.POINTER(ctypes.c_int32)),
        ("weights", ctypes.POINTER(ctypes.c_int32)),
        ("residuals", ctypes.POINTER(ctypes.c_double)),
        ("best_subset", ctypes.POINTER(ctypes.c_size_t)),
        ("outlier_count", ctypes.c_size_t),
        ("exact_fit", ctypes.c_int),
        ("starts_evaluated", ctypes.c_size_t),
        ("c_steps", ctypes.c_size_t),
    ]


def lts(context, y, x, intercept=True, alpha=0.5, seed=0, lms=False):
    """LTS of y (n doubles) on x (n x p, column-major float64 numpy array,
    i.e. numpy order='F'). Returns (raw coefficients, objective, h)."""
    lib = context.engine.lib
    lib.statgpu_lts_params_init.argtypes = [ctypes.POINTER(LtsParams)]
    lib.statgpu_lts.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                ctypes.c_size_t, ctypes.POINTER(LtsParams), ctypes.POINTER(ctypes.POINTER(LtsResult))]
    lib.statgpu_lts_result_destroy.argtypes = [ctypes.POINTER(LtsResult)]
    params = LtsParams()
    lib.statgpu_lts_params_init(ctypes.byref(params))
    params.intercept = 1 if intercept else 0
    params.alpha = alpha
    params.seed = seed
    params.criterion = 1 if lms else 0
    n, p = x.shape
    result = ctypes.POINTER(LtsResult)()
    context._check(lib.statgpu_lts(context.handle, y.ctypes.data, x.ctypes.data, n, p, n, ctypes.byref(params),
                                   ctypes.byref(result)))
    try:
        r = result.contents
        coefficients = [r.raw_coefficients[i] for i in range(r.p)]
        return coefficients, r.objective, r.h
    finally:
        lib.statgpu_lts_result_destroy(result)


# ----- Gaussian mixtures -----

GMM_COVARIANCE = {"full": 0, "tied": 1, "diag": 2, "spherical": 3}
GMM_INIT = {"kmeans": 0, "given": 1}


class GmmParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("covariance", ctypes.c_int),
        ("reg_covar", ctypes.c_double),
        ("tolerance", ctypes.c_double),
        ("max_iterations", ctypes.c_size_t),
        ("restart_count", ctypes.c_size_t),
        ("init", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("initial_weights", ctypes.c_void_p),
        ("initial_means", ctypes.c_void_p),
        ("initial_precisions", ctypes.c_void_p),
        ("reg_covar_relative", ctypes.c_int),
    ]


class GmmResult(ctypes.Structure):
    _fields_ = [
        ("k", ctypes.c_size_t),
        ("n_obs", ctypes.c_size_t),
        ("n_vars", ctypes.c_size_t),
        ("covariance", ctypes.c_int),
        ("weights", ctypes.POINTER(ctypes.c_double)),
        ("means", ctypes.POINTER(ctypes.c_double)),
        ("covariances", ctypes.POINTER(ctypes.c_double)),
        ("precisions_cholesky", ctypes.POINTER(ctypes.c_double)),
        ("responsibilities", ctypes.POINTER(ctypes.c_double)),
        ("row_log_likelihood", ctypes.POINTER(ctypes.c_double)),
        ("labels", ctypes.POINTER(ctypes.c_int32)),
        ("log_likelihood", ctypes.c_double),
        ("lower_bound", ctypes.c_double),
        ("iterations", ctypes.c_size_t),
        ("converged", ctypes.c_int),
        ("parameter_count", ctypes.c_size_t),
        ("bic", ctypes.c_double),
        ("aic", ctypes.c_double),
        ("best_restart", ctypes.c_size_t),
        ("restart_count", ctypes.c_size_t),
        ("regularised_count", ctypes.c_size_t),
        ("candidate_count", ctypes.c_size_t),
        ("candidates", ctypes.c_void_p),
        ("best_candidate", ctypes.c_size_t),
    ]


def _gmm_call(context, data):
    """The library, the data's shape and default parameters for a mixture
    call on data (n x d float64, order='F')."""
    lib = context.engine.lib
    lib.statgpu_gmm_params_init.argtypes = [ctypes.POINTER(GmmParams)]
    lib.statgpu_gmm_result_destroy.argtypes = [ctypes.POINTER(GmmResult)]
    if not data.flags["F_CONTIGUOUS"] or str(data.dtype) != "float64":
        raise ValueError("data must be a float64 array in column-major order (numpy order='F')")
    n, d = data.shape
    params = GmmParams()
    lib.statgpu_gmm_params_init(ctypes.byref(params))
    return lib, n, d, params


def gmm(context, data, k, initial_weights=None, initial_means=None, initial_precisions=None, max_iterations=100,
        tolerance=1e-3, reg_covar=1e-6, covariance="full", restarts=1, seed=0):
    """Gaussian mixture of data (n x d float64 numpy array in column-major
    order, numpy order='F'). Given initial_weights (k), initial_means (k x d,
    order='F') and initial_precisions (full: k x d x d; tied: d x d; diag:
    k x d; spherical: k) select INIT_GIVEN; otherwise k-means starts.
    Returns a dict: lower_bound (mean log-likelihood of the last iteration's
    E-step),
    log_likelihood and mean_log_likelihood (of the returned parameters),
    iterations, converged, regularised_count, weights (a list), means (k x d
    nested lists)."""
    import numpy as np
    lib, n, d, params = _gmm_call(context, data)
    lib.statgpu_gmm.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                                ctypes.c_size_t, ctypes.POINTER(GmmParams), ctypes.POINTER(ctypes.POINTER(GmmResult))]
    params.covariance = GMM_COVARIANCE[covariance]
    params.reg_covar = reg_covar
    params.tolerance = tolerance
    params.max_iterations = max_iterations
    params.restart_count = restarts
    params.seed = seed
    given = (initial_weights, initial_means, initial_precisions)
    if any(array is not None for array in given):
        if any(array is None for array in given):
            raise ValueError("give initial_weights, initial_means and initial_precisions together")
        weights = np.ascontiguousarray(initial_weights, dtype=np.float64)
        means = np.asfortranarray(initial_means, dtype=np.float64)
        precisions = np.asarray(initial_precisions, dtype=np.float64)
        if covariance == "full":  # k blocks, each column-major
            precisions = np.ascontiguousarray(precisions.transpose(0, 2, 1))
        else:  # tied d x d, diag k x d, spherical k: column-major
            precisions = np.asfortranarray(precisions)
        if weights.shape != (k,) or means.shape != (k, d):
            raise ValueError("initial_weights must hold k values and initial_means be k x d")
        params.init = GMM_INIT["given"]
        params.initial_weights = weights.ctypes.data
        params.initial_means = means.ctypes.data
        params.initial_precisions = precisions.ctypes.data
    result = ctypes.POINTER(GmmResult)()
    context._check(lib.statgpu_gmm(context.handle, data.ctypes.data, n, d, n, k, ctypes.byref(params),
                                   ctypes.byref(result)))
    try:
        r = result.contents
        return {"lower_bound": r.lower_bound, "log_likelihood": r.log_likelihood,
                "mean_log_likelihood": r.log_likelihood / n, "iterations": r.iterations,
                "converged": bool(r.converged), "regularised_count": r.regularised_count,
                "weights": r.weights[:k], "means": [[r.means[j + k * v] for v in range(d)] for j in range(k)]}
    finally:
        lib.statgpu_gmm_result_destroy(result)


def gmm_select(context, data, k_values, covariances=("full", "tied", "diag", "spherical"), restarts=1, seed=0):
    """Model choice (statgpu_gmm_select) over every k of k_values and every
    covariance type named: returns the chosen k, its type's name, its BIC
    and the candidates' BICs in order (NaN where a candidate was not fitted)."""
    lib, n, d, params = _gmm_call(context, data)
    lib.statgpu_gmm_select.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                       ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t,
                                       ctypes.POINTER(ctypes.c_int), ctypes.c_size_t, ctypes.POINTER(GmmParams),
                                       ctypes.POINTER(ctypes.POINTER(GmmResult))]
    params.restart_count = restarts
    params.seed = seed
    ks = (ctypes.c_size_t * len(k_values))(*k_values)
    types = (ctypes.c_int * len(covariances))(*[GMM_COVARIANCE[c] for c in covariances])
    result = ctypes.POINTER(GmmResult)()
    context._check(lib.statgpu_gmm_select(context.handle, data.ctypes.data, n, d, n, ks, len(k_values), types,
                                          len(covariances), ctypes.byref(params), ctypes.byref(result)))
    try:
        r = result.contents
        names = {value: name for name, value in GMM_COVARIANCE.items()}
        return {"k": r.k, "covariance": names[r.covariance], "bic": r.bic, "candidate_count": r.candidate_count}
    finally:
        lib.statgpu_gmm_result_destroy(result)


# ----- inverse Gaussian mixtures -----

class IgmmParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("start_count", ctypes.c_size_t),
        ("max_iterations", ctypes.c_size_t),
        ("tolerance", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("initial_alpha", ctypes.c_void_p),
        ("initial_mu", ctypes.c_void_p),
        ("initial_lambda", ctypes.c_void_p),
        ("keep_responsibilities", ctypes.c_int),
    ]


class IgmmResult(ctypes.Structure):
    _fields_ = [
        ("set_count", ctypes.c_size_t),
        ("k", ctypes.c_size_t),
        ("lengths", ctypes.POINTER(ctypes.c_size_t)),
        ("status", ctypes.POINTER(ctypes.c_int32)),
        ("alpha", ctypes.POINTER(ctypes.c_double)),
        ("mu", ctypes.POINTER(ctypes.c_double)),
        ("lambda_", ctypes.POINTER(ctypes.c_double)),
        ("log_likelihood", ctypes.POINTER(ctypes.c_double)),
        ("iterations", ctypes.POINTER(ctypes.c_size_t)),
        ("converged", ctypes.POINTER(ctypes.c_int32)),
        ("best_start", ctypes.POINTER(ctypes.c_size_t)),
        ("reseed_count", ctypes.POINTER(ctypes.c_size_t)),
        ("labels", ctypes.POINTER(ctypes.c_int32)),
        ("offsets", ctypes.POINTER(ctypes.c_size_t)),
        ("responsibilities", ctypes.POINTER(ctypes.c_double)),
        ("start_count", ctypes.c_size_t),
    ]


def igmm(context, sets, k, initial_alpha=None, initial_mu=None, initial_lambda=None, starts=10, max_iterations=100,
         tolerance=1e-6, seed=0):
    """Mixtures of k inverse Gaussians, one per row of sets (a 2-D float64
    numpy array in row-major order, every data set of the same length).
    initial_alpha, initial_mu and initial_lambda (k values each) give one
    start shared by every data set (starts is then 1); otherwise bulkem's
    random starts. Returns a dict of numpy arrays: log_likelihood, status,
    iterations, best_start, reseed_count (one per data set) and alpha, mu,
    lambda (data sets x k)."""
    import numpy as np
    lib = context.engine.lib
    lib.statgpu_igmm_params_init.argtypes = [ctypes.POINTER(IgmmParams)]
    lib.statgpu_igmm.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                 ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(IgmmParams),
                                 ctypes.POINTER(ctypes.POINTER(IgmmResult))]
    lib.statgpu_igmm_result_destroy.argtypes = [ctypes.POINTER(IgmmResult)]
    if sets.ndim != 2 or not sets.flags["C_CONTIGUOUS"] or str(sets.dtype) != "float64":
        raise ValueError("sets must be a 2-D float64 array in row-major order, a data set a row")
    set_count, length = sets.shape
    # Built by numpy (a Python loop over 40,000 data sets took 80 ms of a call).
    addresses = sets.ctypes.data + np.arange(set_count, dtype=np.uint64) * np.uint64(length * 8)
    pointers = (ctypes.c_void_p * set_count).from_buffer(addresses)
    lengths = (ctypes.c_size_t * set_count).from_buffer(np.full(set_count, length, dtype=np.uint64))
    params = IgmmParams()
    lib.statgpu_igmm_params_init(ctypes.byref(params))
    params.start_count = starts
    params.max_iterations = max_iterations
    params.tolerance = tolerance
    params.seed = seed
    given = (initial_alpha, initial_mu, initial_lambda)
    if any(array is not None for array in given):
        if any(array is None for array in given):
            raise ValueError("give initial_alpha, initial_mu and initial_lambda together")
        given = [np.ascontiguousarray(array, dtype=np.float64) for array in given]
        if any(array.shape != (k,) for array in given):
            raise ValueError("initial_alpha, initial_mu and initial_lambda must hold k values each")
        params.initial_alpha, params.initial_mu, params.initial_lambda = (array.ctypes.data for array in given)
    result = ctypes.POINTER(IgmmResult)()
    context._check(lib.statgpu_igmm(context.handle, pointers, lengths, set_count, k, ctypes.byref(params),
                                    ctypes.byref(result)))
    try:
        r = result.contents

        def copy(pointer, count):
            return np.ctypeslib.as_array(pointer, shape=(count,)).copy()
        return {"log_likelihood": copy(r.log_likelihood, set_count), "status": copy(r.status, set_count),
                "iterations": copy(r.iterations, set_count), "best_start": copy(r.best_start, set_count),
                "reseed_count": copy(r.reseed_count, set_count),
                "alpha": copy(r.alpha, set_count * k).reshape(set_count, k),
                "mu": copy(r.mu, set_count * k).reshape(set_count, k),
                "lambda": copy(r.lambda_, set_count * k).reshape(set_count, k)}
    finally:
        lib.statgpu_igmm_result_destroy(result)
