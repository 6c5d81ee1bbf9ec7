/* NVML through dlopen: no build-time dependency on the CUDA toolkit, and absent = skipped. The
 * few types used are declared here with the layouts of nvml.h (CUDA 11-13). */
#include <dlfcn.h>
#include <stdio.h>
#include "base/strbuf.h"
#include "validate/val_nvml.h"

typedef int nvmlReturn_t; /* 0 = NVML_SUCCESS */
typedef struct nvmlDevice *nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;
} NvmlMemory;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} NvmlProcessInfo; /* nvmlProcessInfo_t / nvmlProcessInfo_v2_t */

#define NVML_MAX_DEVICES 16

struct ValNvml {
    void *lib;
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*mem_info)(nvmlDevice_t, NvmlMemory *);
    nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *, NvmlProcessInfo *);
    nvmlDevice_t dev[NVML_MAX_DEVICES];
    unsigned ndev;
    char name[96];
};

static char *nvml__why(const char *fmt, const char *arg)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, fmt, arg);
    return sb_take(&sb);
}

ValNvml *val_nvml_open(char **why)
{
    *why = NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        *why = nvml__why("%s", "libnvidia-ml.so.1 not found (no NVIDIA driver)");
        return NULL;
    }
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))dlsym(lib, "nvmlInit_v2");
    nvmlReturn_t (*count)(unsigned *) = (nvmlReturn_t(*)(unsigned *))dlsym(lib, "nvmlDeviceGetCount_v2");
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *) =
        (nvmlReturn_t(*)(unsigned, nvmlDevice_t *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned) =
        (nvmlReturn_t(*)(nvmlDevice_t, char *, unsigned))dlsym(lib, "nvmlDeviceGetName");
    ValNvml *n = gl_calloc(1, sizeof *n);
    n->lib = lib;
    n->shutdown = (nvmlReturn_t(*)(void))dlsym(lib, "nvmlShutdown");
    n->mem_info = (nvmlReturn_t(*)(nvmlDevice_t, NvmlMemory *))dlsym(lib, "nvmlDeviceGetMemoryInfo");
    n->procs = (nvmlReturn_t(*)(nvmlDevice_t, unsigned *, NvmlProcessInfo *))dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!n->procs)
        n->procs = (nvmlReturn_t(*)(nvmlDevice_t, unsigned *, NvmlProcessInfo *))dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
    unsigned cnt = 0;
    if (!init || !count || !handle || !n->mem_info || init() != 0) {
        *why = nvml__why("%s", "libnvidia-ml.so.1 could not be initialised");
        dlclose(lib);
        gl_free(n);
        return NULL;
    }
    if (count(&cnt) != 0 || cnt == 0) {
        *why = nvml__why("%s", "NVML sees no device");
        val_nvml_close(n);
        return NULL;
    }
    for (unsigned i = 0; i < cnt && n->ndev < NVML_MAX_DEVICES; i++)
        if (handle(i, &n->dev[n->ndev]) == 0) n->ndev++;
    if (name && n->ndev) name(n->dev[0], n->name, sizeof n->name);
    return n;
}

void val_nvml_close(ValNvml *n)
{
    if (!n) return;
    if (n->shutdown) n->shutdown();
    dlclose(n->lib);
    gl_free(n);
}

const char *val_nvml_device_name(const ValNvml *n) { return n && n->name[0] ? n->name : "unknown GPU"; }

int64_t val_nvml_process_bytes(ValNvml *n, pid_t pid)
{
    if (!n || !n->procs || pid <= 0) return -1;
    int64_t total = 0;
    bool seen = false;
    for (unsigned d = 0; d < n->ndev; d++) {
        NvmlProcessInfo info[64];
        unsigned cnt = ARRAY_LEN(info);
        if (n->procs(n->dev[d], &cnt, info) != 0) continue;
        for (unsigned i = 0; i < cnt && i < ARRAY_LEN(info); i++)
            if ((pid_t)info[i].pid == pid) {
                seen = true;
                /* NVML_VALUE_NOT_AVAILABLE (all ones) when the driver cannot say */
                if (info[i].usedGpuMemory != ~0ull) total += (int64_t)info[i].usedGpuMemory;
            }
    }
    return seen ? total : -1;
}

unsigned val_nvml_count(const ValNvml *n) { return n ? n->ndev : 0; }

int64_t val_nvml_device_used(ValNvml *n, int dev)
{
    if (!n) return -1;
    if (dev < 0 || (unsigned)dev >= n->ndev) return val_nvml_used_bytes(n);
    NvmlMemory m;
    return n->mem_info(n->dev[dev], &m) == 0 ? (int64_t)m.used : -1;
}

int64_t val_nvml_used_bytes(ValNvml *n)
{
    if (!n) return -1;
    int64_t total = 0;
    for (unsigned d = 0; d < n->ndev; d++) {
        NvmlMemory m;
        if (n->mem_info(n->dev[d], &m) != 0) return -1;
        total += (int64_t)m.used;
    }
    return total;
}
