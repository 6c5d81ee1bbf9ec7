/* NVML, loaded with dlopen("libnvidia-ml.so.1") when present: the device memory of a process as
 * nvidia-smi sees it (allocator caches and the CUDA context included), sampled from outside it. */
#ifndef GL_VAL_NVML_H
#define GL_VAL_NVML_H

#include <sys/types.h>
#include "base/base.h"

typedef struct ValNvml ValNvml;

/* NULL when there is no driver library or no device (*why says which; gl_free it). */
ValNvml *val_nvml_open(char **why);
void val_nvml_close(ValNvml *n);
const char *val_nvml_device_name(const ValNvml *n); /* of device 0 */
/* Device memory used by pid over all devices, or -1 when NVML cannot attribute memory to
 * processes (common inside containers): then use val_nvml_used_bytes. */
int64_t val_nvml_process_bytes(ValNvml *n, pid_t pid);
int64_t val_nvml_used_bytes(ValNvml *n); /* used memory summed over all devices, -1 on error */
unsigned val_nvml_count(const ValNvml *n); /* devices NVML sees (PCI bus order, as nvidia-smi -L) */
/* Used memory of device dev (an NVML index), or of all devices when dev < 0; -1 on error. */
int64_t val_nvml_device_used(ValNvml *n, int dev);

#endif
