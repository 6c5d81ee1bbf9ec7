/* The scrubbed environment of a validation run (reliability.md §4: start empty, allow-list). */
#include <stdio.h>
#include "base/strbuf.h"
#include "validate/val_env.h"

extern char **environ;

/* Passed through when set: the interpreter's location and locale, the dynamic loader's path (CUDA
 * libraries), a virtualenv/conda root, thread counts. Nothing that authenticates anyone. */
static const char *const env_allow[] = {
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
};

static void env__push(char ***v, uint32_t *n, uint32_t *cap, char *s)
{
    if (*n + 2 > *cap) {
        *cap = *cap ? *cap * 2 : 32;
        *v = gl_realloc(*v, sizeof(char *) * *cap);
    }
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

static char *env__pair(const char *name, const char *value)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s=%s", name, value);
    return sb_take(&sb);
}

char **val_env_build(const ValEnvOpts *o)
{
    char **v = NULL;
    uint32_t n = 0, cap = 0;
    env__push(&v, &n, &cap, env__pair("PATH", getenv("PATH") ? getenv("PATH") : "/usr/local/bin:/usr/bin:/bin"));
    for (size_t i = 1; i < ARRAY_LEN(env_allow); i++)
        if (getenv(env_allow[i])) env__push(&v, &n, &cap, env__pair(env_allow[i], getenv(env_allow[i])));
    if (o->cuda && o->gpu) {
        /* one GPU per run; the ids are nvidia-smi's (PCI bus order), not CUDA's fastest-first */
        env__push(&v, &n, &cap, env__pair("CUDA_VISIBLE_DEVICES", o->gpu));
        env__push(&v, &n, &cap, env__pair("CUDA_DEVICE_ORDER", "PCI_BUS_ID"));
    } else if (o->cuda) {
        if (getenv("CUDA_VISIBLE_DEVICES")) env__push(&v, &n, &cap, env__pair("CUDA_VISIBLE_DEVICES", getenv("CUDA_VISIBLE_DEVICES")));
    } else {
        env__push(&v, &n, &cap, env__pair("CUDA_VISIBLE_DEVICES", ""));
    }
    if (!o->cuda && !getenv("OMP_NUM_THREADS")) env__push(&v, &n, &cap, env__pair("OMP_NUM_THREADS", "1"));
    for (uint32_t i = 0; i < o->n_keep; i++) {
        const char *val = getenv(o->keep[i]);
        if (!val) continue;
        bool dup = false;
        for (uint32_t k = 0; k < n; k++) {
            size_t ln = strlen(o->keep[i]);
            if (!strncmp(v[k], o->keep[i], ln) && v[k][ln] == '=') dup = true;
        }
        if (!dup) env__push(&v, &n, &cap, env__pair(o->keep[i], val));
    }
    if (!getenv("LANG") && !getenv("LC_ALL")) env__push(&v, &n, &cap, env__pair("LANG", "C.UTF-8"));
    if (o->home) env__push(&v, &n, &cap, env__pair("HOME", o->home));
    if (o->tmpdir) env__push(&v, &n, &cap, env__pair("TMPDIR", o->tmpdir));
    /* bytecode would go into the user's tree (or the copy); the user site dir is the real HOME's */
    env__push(&v, &n, &cap, env__pair("PYTHONDONTWRITEBYTECODE", "1"));
    env__push(&v, &n, &cap, env__pair("PYTHONNOUSERSITE", "1"));
    env__push(&v, &n, &cap, env__pair("PYTHONHASHSEED", "0"));
    env__push(&v, &n, &cap, env__pair("PYTHONUNBUFFERED", "1"));
    if (o->harness_dir) {
        const char *user = getenv("PYTHONPATH");
        StrBuf pp;
        sb_init(&pp);
        sb_printf(&pp, "PYTHONPATH=%s%s%s", o->harness_dir, user && user[0] ? ":" : "", user && user[0] ? user : "");
        env__push(&v, &n, &cap, sb_take(&pp));
    }
    if (o->spec_path) env__push(&v, &n, &cap, env__pair("GRADLEAK_SPEC", o->spec_path));
    return v;
}

void val_env_free(char **env)
{
    if (!env) return;
    for (char **p = env; *p; p++) gl_free(*p);
    gl_free(env);
}
