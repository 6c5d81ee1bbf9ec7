/* The environment a validation run gets: an allow-list of the parent's variables (what Python,
 * torch and CUDA need), never tokens or credentials, plus the harness's own settings. */
#ifndef GL_VAL_ENV_H
#define GL_VAL_ENV_H

#include "base/base.h"

typedef struct ValEnvOpts {
    const char *home;        /* HOME and the working directory's scratch space */
    const char *tmpdir;      /* TMPDIR */
    const char *harness_dir; /* first on PYTHONPATH; NULL = none */
    const char *spec_path;   /* GRADLEAK_SPEC; NULL = none */
    bool cuda;               /* false: CUDA_VISIBLE_DEVICES is set empty (CPU run) */
    const char *const *keep; /* extra variable names to pass through (--env NAME) */
    uint32_t n_keep;
    const char *gpu;         /* with cuda: CUDA_VISIBLE_DEVICES for this run (PCI bus order), NULL: as set */
} ValEnvOpts;

/* A NULL-terminated "NAME=value" array built from the current environment; free with
 * val_env_free. */
char **val_env_build(const ValEnvOpts *o);
void val_env_free(char **env);

#endif
