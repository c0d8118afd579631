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
