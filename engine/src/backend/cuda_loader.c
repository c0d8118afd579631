/*
 * cuda_loader.c: finds and loads the CUDA backend module at run time.
 *
 * The module is looked for next to the engine library itself (found with
 * dladdr), never in the current or the executable's folder, so the extension
 * behaves the same wherever LibreOffice is started from. The environment
 * variable STATGPU_CUDA_MODULE names another file instead (for tests). Any
 * failure -- no file, no symbol, a version mismatch, no driver, no device --
 * means "CUDA not available", with the reason kept for the backend report.
 * It only loads: each method's calls into the module are in its own
 * methods/<method>_cuda.c, and backend/dispatch.c decides when they run.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SG_CUDA_MODULE_FILE "libstatgpu_cuda.so"

/* The module's integer codes are the public header's enumerators. */
_Static_assert(STATGPU_CUDA_FLOAT64 == (int)STATGPU_DTYPE_FLOAT64 && STATGPU_CUDA_FLOAT32 == (int)STATGPU_DTYPE_FLOAT32,
               "the module's element types are statgpu_dtype's");
_Static_assert(STATGPU_CUDA_HOST_MEMORY == (int)STATGPU_MEMORY_HOST
                   && STATGPU_CUDA_DEVICE_MEMORY == (int)STATGPU_MEMORY_CUDA_DEVICE,
               "the module's memory kinds are statgpu_memory's (HOST_SCRATCH is passed as HOST)");
_Static_assert(STATGPU_CUDA_SELECT_AUTO == (int)STATGPU_SELECT_AUTO
                   && STATGPU_CUDA_SELECT_CUTTING_PLANE == (int)STATGPU_SELECT_CUTTING_PLANE
                   && STATGPU_CUDA_SELECT_RADIX == (int)STATGPU_SELECT_RADIX
                   && STATGPU_CUDA_SELECT_SORT == (int)STATGPU_SELECT_SORT,
               "the module's selection methods are statgpu_select_method's");

static pthread_once_t               g_load_once = PTHREAD_ONCE_INIT;
static const statgpu_cuda_module_i *g_module;
static char                         g_reason[384];

static void sg_cuda_module_load(void)
{
    char path[4096];
    const char *override = getenv("STATGPU_CUDA_MODULE");
    if (override != NULL && override[0] != '\0') {
        snprintf(path, sizeof path, "%s", override);
    } else {
        Dl_info info;
        if (dladdr((void *)&statgpu_version_number, &info) == 0 || info.dli_fname == NULL) {
            snprintf(g_reason, sizeof g_reason, "cannot locate the engine library to find the CUDA module");
            return;
        }
        const char *slash = strrchr(info.dli_fname, '/');
        size_t dir_bytes = slash != NULL ? (size_t)(slash - info.dli_fname) : 0;
        if (slash != NULL)
            snprintf(path, sizeof path, "%.*s/%s", (int)dir_bytes, info.dli_fname, SG_CUDA_MODULE_FILE);
        else
            snprintf(path, sizeof path, "./%s", SG_CUDA_MODULE_FILE);
    }

    if (access(path, R_OK) != 0) {
        /* The usual case on a machine without the CUDA build: say so briefly
         * (GPUINFO shows this text in a cell). */
        snprintf(g_reason, sizeof g_reason, "no CUDA module (%s) beside the engine", SG_CUDA_MODULE_FILE);
        return;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *error = dlerror();
        snprintf(g_reason, sizeof g_reason, "CUDA module not loaded: %s", error != NULL ? error : path);
        return;
    }
    statgpu_cuda_module_init_fn init;
    void *symbol = dlsym(handle, STATGPU_CUDA_MODULE_INIT_SYMBOL);
    memcpy(&init, &symbol, sizeof init);
    if (init == NULL) {
        snprintf(g_reason, sizeof g_reason, "CUDA module has no %s", STATGPU_CUDA_MODULE_INIT_SYMBOL);
        dlclose(handle);
        return;
    }
    const statgpu_cuda_module_i *module = init(STATGPU_CUDA_MODULE_API_VERSION);
    if (module == NULL || module->api_version != STATGPU_CUDA_MODULE_API_VERSION) {
        snprintf(g_reason, sizeof g_reason, "CUDA module API version differs from the engine's (%u)",
                 STATGPU_CUDA_MODULE_API_VERSION);
        dlclose(handle);
        return;
    }
    /* The handle stays open for the life of the process: contexts in other
     * threads may hold device state created by it. */
    g_module = module;
}

const statgpu_cuda_module_i *sg_cuda_module(const char **reason)
{
    pthread_once(&g_load_once, sg_cuda_module_load);
    if (reason != NULL)
        *reason = g_reason;
    return g_module;
}

bool sg_cuda_ensure(statgpu_context *context)
{
    if (context->cuda_probed)
        return context->cuda_state != NULL;
    context->cuda_probed = true;

    const char *reason = NULL;
    const statgpu_cuda_module_i *module = sg_cuda_module(&reason);
    if (module == NULL) {
        snprintf(context->cuda_unavailable, sizeof context->cuda_unavailable, "%s", reason);
        return false;
    }
    char message[256] = "";
    statgpu_cuda_status status = module->state_create(context->params.device, context->cpu_thread_count,
                                                      &context->cuda_state,
                                                      &context->cuda_info, message, sizeof message);
    if (status != STATGPU_CUDA_OK) {
        context->cuda_state = NULL;
        snprintf(context->cuda_unavailable, sizeof context->cuda_unavailable, "%s",
                 message[0] != '\0' ? message : "no usable CUDA device");
        return false;
    }
    return true;
}

void sg_cuda_release(statgpu_context *context)
{
    if (context->cuda_state != NULL) {
        const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
        if (module != NULL)
            module->state_destroy(context->cuda_state);
        context->cuda_state = NULL;
    }
}
