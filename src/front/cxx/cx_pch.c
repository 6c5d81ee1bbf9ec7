/* Precompiled headers of the LibTorch (or stub) headers for the C++ front end, kept on disk and shared
 * by every file parsed with the same flags. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "front/cxx/cx_int.h"

#if GL_HAVE_LIBCLANG

/* ---- precompiled headers ----------------------------------------------------------------------
 * Parsing <torch/torch.h> (or the stub, which pulls in the C++ standard headers) is most of a
 * file's time, and every file of a project parses the same headers with the same flags. So the
 * headers are parsed once into a PCH, kept on disk under a name that hashes the flags, the header
 * mode, the real headers' identity and libclang's version, and every file is parsed with
 * -include-pch: the file's own `#include <torch/torch.h>` is then a no-op (include guards and
 * #pragma once are in the PCH). A PCH that cannot be built or read is not used: the file is parsed
 * as before. */

static pthread_mutex_t cx_pch_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t key; bool ok; } cx_pch_seen[16]; /* this process's verdicts, under cx_pch_mu */
static uint32_t cx_pch_nseen;

static bool cx__private_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return false;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 022);
}

/* The folder for PCH files, created if needed, or NULL. */
static const char *cx__pch_dir(Lower *L, const CxConfig *cfg)
{
    const char *off = cx_env()->pch;
    if (off && !strcmp(off, "0")) return NULL;
    if (cfg && cfg->pch_dir) {
        if (mkdir(cfg->pch_dir, 0755) != 0 && errno != EEXIST) return NULL;
        return cfg->pch_dir;
    }
    const char *tmp = cx_env()->tmpdir;
    const char *dir = arena_printf(L->arena, "%s/gradleak-pch-%u", tmp && tmp[0] ? tmp : "/tmp", (unsigned)getuid());
    return cx__private_dir(dir) ? dir : NULL;
}

static uint64_t cx__pch_key(Lower *L, const Args *args, bool real, const char *inc_dir);

/* The PCH folder is capped: at most GRADLEAK_PCH_MAX_MB megabytes (default 1024: eight LibTorch
 * PCHs, a hundred of the stub's) and CX_PCH_MAX_FILES files. After a PCH is built, the least
 * recently used ones (a PCH's mtime is set each time a run first uses it) go until both hold. */
#define CX_PCH_MAX_FILES 16

static void cx__pch_evict(const char *dir, const char *keep)
{
    const char *env = cx_env()->pch_max_mb;
    long long cap = env && atoll(env) > 0 ? atoll(env) << 20 : 1024ll << 20;
    DIR *d = opendir(dir);
    if (!d) return;
    struct { char name[64]; long long size; int64_t mtime; } files[256];
    uint32_t n = 0;
    long long total = 0;
    time_t now = time(NULL);
    char p[PATH_MAX + 80];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        bool tmp = len > 4 && !strcmp(e->d_name + len - 4, ".tmp");
        if (len >= sizeof files[0].name || (!tmp && (len < 5 || strcmp(e->d_name + len - 4, ".pch") != 0))) continue;
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) != 0) continue;
        if (tmp) { /* a build that died: gone after an hour */
            if (now - st.st_mtime > 3600) unlink(p);
            continue;
        }
        if (n >= ARRAY_LEN(files)) continue;
        memcpy(files[n].name, e->d_name, len + 1);
        files[n].size = (long long)st.st_size;
        files[n].mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        total += files[n].size;
        n++;
    }
    closedir(d);
    const char *keep_base = strrchr(keep, '/');
    keep_base = keep_base ? keep_base + 1 : keep;
    while ((total > cap || n > CX_PCH_MAX_FILES) && n > 1) {
        uint32_t old = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(files[i].name, keep_base) != 0 && (old == UINT32_MAX || files[i].mtime < files[old].mtime)) old = i;
        if (old == UINT32_MAX) break;
        snprintf(p, sizeof p, "%s/%s", dir, files[old].name);
        unlink(p);
        total -= files[old].size;
        files[old] = files[--n];
    }
}

/* The path of a PCH for this command line, built now if there is none; NULL: parse without. */
const char *cx_pch(Lower *L, CXIndex idx, const Args *args, bool real, const char *inc_dir,
                           const CxConfig *cfg, struct CXUnsavedFile *stub, uint32_t nstub, uint64_t *key_out)
{
    const char *dir = cx__pch_dir(L, cfg);
    if (!dir) return NULL;
    uint64_t key = cx__pch_key(L, args, real, inc_dir);
    *key_out = key;
    const char *path = arena_printf(L->arena, "%s/%016llx.pch", dir, (unsigned long long)key);
    pthread_mutex_lock(&cx_pch_mu);
    for (uint32_t i = 0; i < cx_pch_nseen; i++)
        if (cx_pch_seen[i].key == key) {
            bool ok = cx_pch_seen[i].ok;
            pthread_mutex_unlock(&cx_pch_mu);
            return ok ? path : NULL;
        }
    bool ok = cx_file_exists(path);
    bool built = false;
    if (ok) utimensat(AT_FDCWD, path, NULL, 0); /* used: the eviction keeps the recently used */
    if (!ok) {
        /* the header the PCH is made of: what a LibTorch file includes first */
        static const char hdr_path[] = CX_STUB_DIR "/gradleak_pch.h";
        const char *hdr = real ? "#include <torch/torch.h>\n" : "#include \"" CX_STUB_DIR "/gradleak_torch_stub.h\"\n";
        struct CXUnsavedFile un[1 + 1 + ARRAY_LEN(cx_stub_names)];
        uint32_t n = 0;
        un[n++] = (struct CXUnsavedFile){hdr_path, hdr, (unsigned long)strlen(hdr)};
        for (uint32_t i = 0; i < nstub && n < ARRAY_LEN(un); i++) un[n++] = stub[i];
        Array(const char *) a;
        array_init(&a);
        for (uint32_t i = 0; i < args->v.len; i++) array_push(&a, args->v.items[i]);
        /* the headers' own template instantiations go into the PCH too, instead of being redone at
         * the end of every file (LibTorch: 6.9 s -> 2.6 s a file, clang 14) */
        array_push(&a, "-fpch-instantiate-templates");
        array_push(&a, "-x");
        array_push(&a, "c++-header");
        CXTranslationUnit tu = NULL;
        enum CXErrorCode ec = cx_parse(idx, hdr_path, a.items, (int)a.len, un, n,
                                                             CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete,
                                                             &tu);
        array_free(&a);
        if (ec == CXError_Success && tu) {
            bool errors = false;
            unsigned nd = cx_A->clang_getNumDiagnostics(tu);
            for (unsigned i = 0; i < nd && !errors; i++) {
                CXDiagnostic dg = cx_A->clang_getDiagnostic(tu, i);
                errors = cx_A->clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error;
                cx_A->clang_disposeDiagnostic(dg);
            }
            /* headers with errors are parsed with each file instead, so the file says what failed */
            if (!errors) {
                const char *tmp = arena_printf(L->arena, "%s.%d.tmp", path, (int)getpid());
                ok = cx_A->clang_saveTranslationUnit(tu, tmp, 0) == 0 && rename(tmp, path) == 0;
                if (!ok) unlink(tmp);
                built = ok;
            }
            cx_A->clang_disposeTranslationUnit(tu);
        }
    }
    if (built) cx__pch_evict(dir, path);
    if (cx_pch_nseen < ARRAY_LEN(cx_pch_seen)) {
        cx_pch_seen[cx_pch_nseen].key = key;
        cx_pch_seen[cx_pch_nseen++].ok = ok;
    }
    pthread_mutex_unlock(&cx_pch_mu);
    return ok ? path : NULL;
}

/* A PCH that libclang rejected (another build of the same name, a header changed under it):
 * not used again by this process, and removed so the next run builds it afresh. */
void cx_pch_reject(uint64_t key, const char *path)
{
    pthread_mutex_lock(&cx_pch_mu);
    for (uint32_t i = 0; i < cx_pch_nseen; i++)
        if (cx_pch_seen[i].key == key) cx_pch_seen[i].ok = false;
    pthread_mutex_unlock(&cx_pch_mu);
    unlink(path);
}

static uint64_t cx__pch_key(Lower *L, const Args *args, bool real, const char *inc_dir)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < args->v.len; i++) {
        /* the project's own include folders (-I, -iquote) do not change a PCH of <torch/torch.h> (the
         * folder of the real headers is hashed below), and clang accepts the PCH with other ones: one
         * PCH serves every target and tutorial folder of a project */
        const char *a = args->v.items[i];
        if (!strcmp(a, "-I") || !strcmp(a, "-iquote")) { i++; continue; }
        if ((!strncmp(a, "-I", 2) || !strncmp(a, "-iquote", 7)) && strcmp(a, "-I" CX_STUB_DIR) != 0) continue;
        h = cx_hash(h, a, strlen(a) + 1);
    }
    h = cx_hash(h, &real, sizeof real);
    /* the stub is built into the binary: a PCH of another version's stub is another PCH */
    if (!real) h = cx_hash(h, gl_libtorch_stub, strlen(gl_libtorch_stub));
    if (real && inc_dir) {
        h = cx_hash_stat(h, inc_dir);
        h = cx_hash_stat(h, arena_printf(L->arena, "%s/torch/torch.h", inc_dir));
        h = cx_hash_stat(h, arena_printf(L->arena, "%s/../../../../ATen/Functions.h", inc_dir));
    } else {
        h = cx_hash(h, gl_libtorch_stub, strlen(gl_libtorch_stub));
    }
    const char *ver = cx_str(L, cx_A->clang_getClangVersion());
    return cx_hash(h, ver, strlen(ver));
}

#endif /* GL_HAVE_LIBCLANG */
