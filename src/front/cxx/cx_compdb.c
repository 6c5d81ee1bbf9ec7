/* The command line a C++ file is parsed with: its entry in compile_commands.json, or a C++17 default,
 * and the LibTorch headers (the project's, $LIBTORCH's, the system's, or gradleak's stub). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/file.h"
#include "front/cxx/cx_int.h"

#if GL_HAVE_LIBCLANG

/* ---- compile commands and the stub ----------------------------------------------------------- */

void cx_args_add(Args *a, const char *s) { array_push(&a->v, arena_strdup(a->arena, s)); }

bool cx_file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Finds compile_commands.json: in -p DIR, else in the file's folder or above (also DIR/build/). */
static CXCompilationDatabase cx__find_db(Lower *L, const char *abs_path, const char *dir_hint)
{
    CXCompilationDatabase_Error err;
    if (dir_hint) {
        CXCompilationDatabase db = cx_A->clang_CompilationDatabase_fromDirectory(dir_hint, &err);
        return err == CXCompilationDatabase_NoError ? db : NULL;
    }
    char dir[PATH_MAX];
    size_t an = strlen(abs_path);
    if (an >= sizeof dir) return NULL;
    memcpy(dir, abs_path, an + 1);
    for (int guard = 0; guard < 64; guard++) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = 0;
        const char *d = dir[0] ? dir : "/";
        for (int b = 0; b < 2; b++) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s%s/compile_commands.json", d, b ? "/build" : "");
            if (!cx_file_exists(path)) continue;
            char folder[PATH_MAX + 16];
            snprintf(folder, sizeof folder, "%s%s", d, b ? "/build" : "");
            CXCompilationDatabase db = cx_A->clang_CompilationDatabase_fromDirectory(folder, &err);
            if (err == CXCompilationDatabase_NoError) return db;
        }
        if (!dir[0]) break;
    }
    GL_UNUSED(L);
    return NULL;
}

/* A flag of a compile command that does not change how the file parses (warnings, debug info,
 * optimisation, code generation, dependency files): dropped, so that the files of a project share
 * one precompiled header, and so that -Werror cannot turn a warning into a lost statement. `-O`
 * defines __OPTIMIZE__ and -fPIC __PIC__: a PCH would be refused for those, so they go from the
 * file's command too. */
static bool cx__flag_irrelevant(const char *a)
{
    static const char *const prefixes[] = {
        "-W", "-g", "-O", "-fPIC", "-fpic", "-fPIE", "-fpie", "-pipe", "-fdiagnostics", "-fcolor-diagnostics",
        "-fno-color-diagnostics", "-fno-omit-frame-pointer", "-fomit-frame-pointer", "-fstack-protector",
        "-flto", "-ffunction-sections", "-fdata-sections", "-fvisibility", "-pedantic", "-fsanitize",
        "-fno-sanitize", "-fprofile", "-fcoverage", "--coverage", "-ftest-coverage", "-fexceptions",
        "-fno-exceptions", "-fdebug-prefix-map", "-ffile-prefix-map", "-fmacro-prefix-map", "-save-temps",
        "-fno-strict-aliasing", "-fstrict-aliasing", "-frecord-gcc-switches",
    };
    if (!strncmp(a, "-Wl,", 4) || !strncmp(a, "-Wp,", 4)) return true;
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
        if (!strncmp(a, prefixes[i], strlen(prefixes[i]))) return true;
    return false;
}

/* Flags whose value is a path (joined "-Idir" or separate "-I dir"): made absolute against the
 * command's folder, so that no -working-directory is needed. libclang 14's driver applies
 * -working-directory by changing the process's working folder, which breaks every relative path
 * used afterwards (the next file of the run, the cache, --fix's writes). */
static const char *const cx_path_flags[] = {
    "-isystem", "-iquote", "-idirafter", "-imacros", "-include", "-isysroot", "-iprefix", "--sysroot=", "-I", "-F",
};

static const char *cx__abs_in(Lower *L, const char *dir, const char *p)
{
    if (!p[0] || p[0] == '/' || !dir[0]) return p;
    return arena_printf(L->arena, "%s/%s", dir, p);
}

/* Flags of the file's compile command, without the compiler, -c/-o, the file itself and the flags
 * that do not change the parse; relative paths made absolute against the command's folder. */
static bool cx__db_args(Lower *L, CXCompilationDatabase db, const char *abs_path, Args *out)
{
    CXCompileCommands cmds = cx_A->clang_CompilationDatabase_getCompileCommands(db, abs_path);
    if (!cmds) return false;
    bool ok = false;
    if (cx_A->clang_CompileCommands_getSize(cmds) > 0) {
        CXCompileCommand cmd = cx_A->clang_CompileCommands_getCommand(cmds, 0);
        unsigned n = cx_A->clang_CompileCommand_getNumArgs(cmd);
        const char *dir = cx_str(L, cx_A->clang_CompileCommand_getDirectory(cmd));
        for (unsigned i = 1; i < n; i++) {
            const char *a = cx_str(L, cx_A->clang_CompileCommand_getArg(cmd, i));
            if (!strcmp(a, "-c")) continue;
            if (!strcmp(a, "-o") || !strcmp(a, "-MF") || !strcmp(a, "-MT") || !strcmp(a, "-MQ") ||
                !strcmp(a, "-include-pch") || !strcmp(a, "-Xclang")) { i++; continue; }
            if (!strncmp(a, "-M", 2) || !strcmp(a, "--") || !strncmp(a, "-working-directory", 18)) continue;
            if (cx__flag_irrelevant(a)) continue;
            const char *base = strrchr(a, '/');
            base = base ? base + 1 : a;
            const char *fbase = strrchr(abs_path, '/');
            fbase = fbase ? fbase + 1 : abs_path;
            if (a[0] != '-' && !strcmp(base, fbase)) continue; /* the source file itself */
            bool done = false;
            for (size_t k = 0; k < ARRAY_LEN(cx_path_flags) && !done; k++) {
                size_t fl = strlen(cx_path_flags[k]);
                if (strncmp(a, cx_path_flags[k], fl) != 0) continue;
                done = true;
                if (!a[fl] && i + 1 < n && cx_path_flags[k][fl - 1] != '=') { /* "-I dir" */
                    cx_args_add(out, a);
                    cx_args_add(out, cx__abs_in(L, dir, cx_str(L, cx_A->clang_CompileCommand_getArg(cmd, ++i))));
                } else {
                    cx_args_add(out, arena_printf(L->arena, "%.*s%s", (int)fl, a, cx__abs_in(L, dir, a + fl)));
                }
            }
            if (!done) cx_args_add(out, a);
        }
        ok = true;
    }
    cx_A->clang_CompileCommands_dispose(cmds);
    return ok;
}

static bool cx__has_torch_header(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/torch/torch.h", dir);
    return cx_file_exists(p);
}

/* Include folders of real LibTorch headers: $LIBTORCH, then the system (Debian libtorch-dev).
 * *dir gets the folder that holds torch/torch.h. */
static bool cx__find_libtorch(Lower *L, Args *out, const char **dir)
{
    const char *roots[3] = {cx_env()->libtorch, "/usr/local", "/usr"};
    for (int i = 0; i < 3; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        const char *api = arena_printf(L->arena, "%s/include/torch/csrc/api/include", roots[i]);
        if (!cx__has_torch_header(api)) continue;
        *dir = api;
        cx_args_add(out, "-isystem");
        cx_args_add(out, api);
        /* /usr/include is a system folder already: naming it again breaks libstdc++'s #include_next */
        if (strcmp(roots[i], "/usr") != 0) {
            cx_args_add(out, "-isystem");
            cx_args_add(out, arena_printf(L->arena, "%s/include", roots[i]));
        }
        return true;
    }
    return false;
}

/* Names that lead to the stub when the real headers are absent. */
const char *const cx_stub_names[CX_N_STUB_NAMES] = {
    "torch/torch.h", "torch/script.h", "torch/all.h", "torch/extension.h", "torch/nn.h", "torch/optim.h",
    "torch/data.h", "torch/cuda.h", "torch/autograd.h", "torch/types.h", "torch/serialize.h",
    "torch/nn/module.h", "torch/nn/functional.h", "torch/nn/modules.h", "torch/utils.h", "torch/jit.h",
    "ATen/ATen.h", "c10/cuda/CUDACachingAllocator.h", "c10/cuda/CUDAFunctions.h", "c10/core/GradMode.h",
    "c10/core/InferenceMode.h", "torch/csrc/autograd/grad_mode.h",
};

/* The file's path as clang sees it: absolute, so compile_commands.json entries match. */
void cx_abs_path(const char *path, char *out, size_t cap)
{
    StrBuf b;
    sb_init(&b);
    if (path[0] == '/') {
        sb_puts(&b, path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) memcpy(cwd, ".", 2);
        sb_printf(&b, "%s/%s", cwd, path);
    }
    size_t pn = b.len < cap - 1 ? b.len : cap - 1;
    memcpy(out, b.data, pn);
    out[pn] = 0;
    sb_free(&b);
}

/* The CUDA toolkit's headers (the c10/cuda headers include cuda_runtime_api.h): $CUDA_HOME, then
 * /usr/local/cuda. Without them a file that includes a c10/cuda header loses whole statements. */
static const char *cx__cuda_include(Lower *L)
{
    const char *roots[2] = {cx_env()->cuda_home, "/usr/local/cuda"};
    for (int i = 0; i < 2; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        const char *inc = arena_printf(L->arena, "%s/include", roots[i]);
        if (cx_file_exists(arena_printf(L->arena, "%s/cuda_runtime_api.h", inc))) return inc;
    }
    return NULL;
}

/* Without a compile command, the folders a file's includes are written from (`#include
 * "util/models/net.h"` in src/util/models/net.cpp, built with `-Isrc`; `<net/layers.h>` from the
 * project's include/): for each one not found beside the file, the nearest folder above it (six
 * at most) that holds the path, or whose include/ does.
 * Reads the file's first 256 KiB; at most 8 folders. */
static void cx__include_roots(Lower *L, const char *abs_path, Args *args)
{
    size_t len = 0;
    char *src = gl_read_file(abs_path, GL_READ_ANY_SIZE, &len);
    if (!src) return;
    const char *roots[8];
    int nroots = 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", abs_path);
    char *cut = strrchr(dir, '/');
    if (cut) *cut = 0;
    size_t scan = len < 256 * 1024 ? len : 256 * 1024;
    for (size_t i = 0; i < scan && nroots < 8;) {
        size_t eol = i;
        while (eol < scan && src[eol] != '\n') eol++;
        const char *p = src + i, *end = src + eol;
        i = eol + 1;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p == end || *p != '#') continue;
        p++;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (end - p < 8 || strncmp(p, "include", 7) != 0) continue;
        p += 7;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p == end || (*p != '"' && *p != '<')) continue;
        char close = *p == '<' ? '>' : '"';
        const char *name = ++p;
        while (p < end && *p != close) p++;
        if (p == end || p == name || *name == '/' || p - name > 512) continue;
        const char *rel = arena_strndup(L->arena, name, (size_t)(p - name));
        if (cx_file_exists(arena_printf(L->arena, "%s/%s", dir, rel))) continue;
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s", dir);
        for (int k = 0; k < 6; k++) {
            char *slash = strrchr(up, '/');
            if (!slash || slash == up) break;
            *slash = 0;
            const char *root = cx_file_exists(arena_printf(L->arena, "%s/%s", up, rel)) ? arena_strdup(L->arena, up)
                             : cx_file_exists(arena_printf(L->arena, "%s/include/%s", up, rel))
                                 ? arena_printf(L->arena, "%s/include", up) : NULL;
            if (!root) continue;
            bool seen = false;
            for (int r = 0; r < nroots && !seen; r++) seen = !strcmp(roots[r], root);
            if (!seen) {
                roots[nroots++] = root;
                cx_args_add(args, arena_printf(L->arena, "-I%s", root));
            }
            break;
        }
    }
    gl_free(src);
}

/* The command line a file is parsed with: its compile command (compile_commands.json) or a C++17
 * default, then the LibTorch headers (the command's, $LIBTORCH's or the system's) or the stub.
 * Sets res->from_compdb and res->mode, and *inc_dir to the real headers' folder. Returns whether
 * the real headers are used. */
bool cx_command(Lower *L, const char *abs_path, const CxConfig *cfg, Args *args, CxResult *res,
                        const char **inc_dir)
{
    size_t plen = strlen(abs_path);
    bool cuda = plen > 3 && !strcmp(abs_path + plen - 3, ".cu");
    CXCompilationDatabase db = cx__find_db(L, abs_path, cfg ? cfg->compdb_dir : NULL);
    if (db) {
        res->from_compdb = cx__db_args(L, db, abs_path, args);
        cx_A->clang_CompilationDatabase_dispose(db);
    }
    if (!res->from_compdb) {
        if (cuda) {
            /* CUDA files: the host code, with the CUDA keywords defined away */
            static const char *const cu[] = {"-x", "c++", "-std=c++17", "-D__global__=", "-D__device__=",
                                             "-D__host__=", "-D__shared__=", "-D__constant__=",
                                             "-D__forceinline__=inline", "-D__CUDACC__"};
            for (size_t i = 0; i < ARRAY_LEN(cu); i++) cx_args_add(args, cu[i]);
        } else {
            cx_args_add(args, "-x");
            cx_args_add(args, "c++");
            cx_args_add(args, "-std=c++17");
        }
        /* no compile command: the project's include folders as CMake projects lay them out (an
         * `include/` beside the file or up to three folders above it) */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", abs_path);
        for (int up = 0; up < 4; up++) {
            char *slash = strrchr(dir, '/');
            if (!slash || slash == dir) break;
            *slash = 0;
            const char *inc = arena_printf(L->arena, "%s/include", dir);
            struct stat st;
            if (stat(inc, &st) == 0 && S_ISDIR(st.st_mode)) cx_args_add(args, arena_printf(L->arena, "-I%s", inc));
        }
        cx__include_roots(L, abs_path, args);
    }
    /* real headers: the compile command's include folders, else $LIBTORCH or the system */
    bool real = false;
    const char *force = cx_env()->headers;
    if (!(force && !strcmp(force, "stub"))) {
        for (uint32_t i = 0; i < args->v.len && !real; i++) {
            const char *a = args->v.items[i];
            const char *dir = NULL;
            if ((!strcmp(a, "-I") || !strcmp(a, "-isystem")) && i + 1 < args->v.len) dir = args->v.items[i + 1];
            else if (!strncmp(a, "-I", 2)) dir = a + 2;
            else if (!strncmp(a, "-isystem", 8)) dir = a + 8;
            if (dir && dir[0] && cx__has_torch_header(dir)) real = true, *inc_dir = dir;
        }
        if (!real && cx__find_libtorch(L, args, inc_dir)) {
            real = true;
            const char *cu = cx__cuda_include(L);
            if (cu) cx_args_add(args, "-isystem"), cx_args_add(args, cu);
        }
    }
    res->mode = real ? CX_MODE_LIBTORCH : CX_MODE_STUB;
    if (!real) cx_args_add(args, "-I" CX_STUB_DIR);
    else cx_args_add(args, "-idirafter"), cx_args_add(args, CX_COMPAT_DIR);
    /* errors about unknown warnings options in foreign compile commands are noise; and clang's
     * default of 20 errors would end the parse (and the AST) at the 20th */
    cx_args_add(args, "-Wno-unknown-warning-option");
    cx_args_add(args, "-ferror-limit=0");
    return real;
}

/* clang_parseTranslationUnit2, leaving the process's working folder as it was: libclang 14's
 * driver changes it for a -working-directory flag (gradleak passes none, but a compile command's
 * stray one, or a later libclang, must not make the next relative path resolve elsewhere). */
enum CXErrorCode cx_parse(CXIndex idx, const char *path, const char *const *args, int nargs,
                                  struct CXUnsavedFile *un, unsigned nun, unsigned opts, CXTranslationUnit *tu)
{
    char before[PATH_MAX], after[PATH_MAX];
    bool have = getcwd(before, sizeof before) != NULL;
    enum CXErrorCode ec = cx_A->clang_parseTranslationUnit2(idx, path, args, nargs, un, nun, opts, tu);
    if (have && (!getcwd(after, sizeof after) || strcmp(before, after) != 0) && chdir(before) != 0) {
        /* nothing better to do: every path gradleak uses after this point is absolute */
    }
    return ec;
}

/* FNV-1a of n bytes into h. */
uint64_t cx_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

uint64_t cx_hash_stat(uint64_t h, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return cx_hash(h, "-", 1);
    int64_t v[4] = {(int64_t)st.st_dev, (int64_t)st.st_ino, (int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
    return cx_hash(h, v, sizeof v);
}

uint64_t cx_config_key(const char *path, const CxConfig *cfg)
{
    const char *why;
    cx_A = cx_api(&why);
    if (!cx_A) return 0;
    Arena arena;
    arena_init(&arena);
    Lower L;
    memset(&L, 0, sizeof L);
    L.arena = &arena;
    char abs_path[PATH_MAX + 8];
    cx_abs_path(path, abs_path, sizeof abs_path);
    Args args;
    array_init(&args.v);
    args.arena = &arena;
    CxResult res;
    memset(&res, 0, sizeof res);
    const char *inc = NULL;
    bool real = cx_command(&L, abs_path, cfg, &args, &res, &inc);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < args.v.len; i++) h = cx_hash(h, args.v.items[i], strlen(args.v.items[i]) + 1);
    h = cx_hash(h, &real, sizeof real);
    if (real && inc) {
        /* the headers' identity: a reinstalled or upgraded LibTorch changes these */
        h = cx_hash_stat(h, inc);
        h = cx_hash_stat(h, arena_printf(&arena, "%s/torch/torch.h", inc));
        h = cx_hash_stat(h, arena_printf(&arena, "%s/../../../../ATen/Functions.h", inc));
    }
    const char *ver = cx_str(&L, cx_A->clang_getClangVersion());
    h = cx_hash(h, ver, strlen(ver));
    array_free(&args.v);
    arena_free(&arena);
    return h ? h : 1;
}

#endif /* GL_HAVE_LIBCLANG */
