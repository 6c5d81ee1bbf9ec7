/* Loads libclang at run time. The binary links nothing of LLVM: a machine without libclang still
 * lints Python, and C++ files get one clear message instead of a loader error at startup. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "front/cxx/cx.h"

/* The environment the command line hands down: kept with or without libclang (a build without the
 * C++ front end still takes it, and says nothing with it). */
static CxEnv cx_env_set;

void cx_set_env(const CxEnv *env)
{
    if (env) cx_env_set = *env;
    else memset(&cx_env_set, 0, sizeof cx_env_set);
}

const CxEnv *cx_env(void) { return &cx_env_set; }

#if GL_HAVE_LIBCLANG
#include "front/cxx/cx_clang.h"

#ifndef GL_LIBCLANG_DIR
#define GL_LIBCLANG_DIR ""
#endif

static CxApi cx_table;
static const CxApi *cx_loaded;
static const char *cx_why = "libclang was not loaded";
static char cx_why_buf[512];

static pthread_once_t cx_once = PTHREAD_ONCE_INIT;

static void cx__load(void)
{
    /* $GRADLEAK_LIBCLANG first, then the folder configure found, then the usual sonames. The C API
     * used here is stable across LLVM releases, so any libclang from 11 on serves. */
    char built[600];
    snprintf(built, sizeof built, "%s%slibclang.so", GL_LIBCLANG_DIR, GL_LIBCLANG_DIR[0] ? "/" : "");
    const char *names[] = {
        cx_env()->libclang, GL_LIBCLANG_DIR[0] ? built : NULL, "libclang.so.1", "libclang.so",
        "libclang-19.so.1", "libclang-18.so.1", "libclang-17.so.1", "libclang-16.so.1", "libclang-15.so.1",
        "libclang-14.so.1", "libclang-13.so.1", "libclang-12.so.1", "libclang-11.so.1",
    };
    void *h = NULL;
    const char *forced = names[0];
    if (forced && forced[0]) {
        /* named: that one or none (so a wrong path is reported, not hidden by a fallback) */
        h = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *err = dlerror();
            snprintf(cx_why_buf, sizeof cx_why_buf, "GRADLEAK_LIBCLANG=%s cannot be loaded (%s): C++ files are not "
                     "linted; point it at a libclang.so from LLVM 11 or later, or unset it", forced, err ? err : "?");
            cx_why = cx_why_buf;
            return;
        }
    }
    for (size_t i = 1; i < ARRAY_LEN(names) && !h; i++)
        if (names[i] && names[i][0]) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        cx_why = "libclang is not installed (C++ files are not linted; install a libclang from LLVM 11 or "
                 "later, e.g. Debian 12's libclang1-14 or Ubuntu 24.04's libclang1-18, or set GRADLEAK_LIBCLANG "
                 "to its path)";
        return;
    }
#define CX_FN(ret, name, params)                                                                    \
    *(void **)(&cx_table.name) = dlsym(h, #name);                                                  \
    if (!cx_table.name) {                                                                           \
        snprintf(cx_why_buf, sizeof cx_why_buf, "the libclang found lacks %s (too old? C++ files are " \
                 "not linted; set GRADLEAK_LIBCLANG to a libclang from LLVM 11 or later)", #name);  \
        cx_why = cx_why_buf;                                                                        \
        dlclose(h);                                                                                 \
        return;                                                                                     \
    }
#include "front/cxx/cx_clang.def"
#undef CX_FN
    cx_loaded = &cx_table; /* the handle stays open for the process's life */
}

const CxApi *cx_api(const char **why)
{
    pthread_once(&cx_once, cx__load);
    if (!cx_loaded && why) *why = cx_why;
    return cx_loaded;
}

bool cx_available(const char **why)
{
    return cx_api(why) != NULL;
}

#else /* built without clang-c headers */

bool cx_available(const char **why)
{
    if (why) *why = "this gradleak was built without libclang-dev (C++ files are not linted; install it and "
                    "re-run ./configure)";
    return false;
}

uint64_t cx_config_key(const char *path, const CxConfig *cfg)
{
    GL_UNUSED(path), GL_UNUSED(cfg);
    return 0;
}

int cx_lower(IrModule *m, const CxConfig *cfg, CxResult *res)
{
    GL_UNUSED(m), GL_UNUSED(cfg);
    memset(res, 0, sizeof *res);
    return -1;
}

#endif

const char *cx_mode_name(CxMode mode)
{
    return mode == CX_MODE_LIBTORCH ? "LibTorch headers" : "gradleak's LibTorch stub header";
}
