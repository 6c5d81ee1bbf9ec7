/* The project headers a C++ file includes, with a hash of each one's contents: a cached result of
 * the file stands only while they are unchanged (a changed project header lints the file again). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/file.h"
#include "base/strbuf.h"
#include "front/cxx/cx.h"

#define CX_DEPS_MAX 512 /* headers listed per file: a file including more is re-linted from them all */

/* FNV-1a of n bytes (the same hash when listing and when checking). */
static uint64_t cx__deps_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t cx__deps_hash_file(const char *path, bool *ok)
{
    size_t len;
    char *text = gl_read_file(path, GL_READ_ANY_SIZE, &len);
    *ok = text != NULL;
    if (!text) return 0;
    uint64_t h = cx__deps_hash(text, len);
    gl_free(text);
    return h;
}

bool cx_deps_fresh(const char *deps)
{
    const char *p = deps;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 17 && len < 4096 + 17 && p[16] == ' ') {
            char path[4096 + 1];
            memcpy(path, p + 17, len - 17);
            path[len - 17] = 0;
            unsigned long long want = strtoull(p, NULL, 16);
            bool ok;
            uint64_t h = cx__deps_hash_file(path, &ok);
            if (!ok || h != want) return false;
        } else {
            return false; /* damaged: lint again */
        }
        p += len + (nl ? 1 : 0);
    }
    return true;
}

#if GL_HAVE_LIBCLANG
#include "front/cxx/cx_clang.h"

typedef struct DepsCtx {
    const CxApi *A;
    CXTranslationUnit tu;
    StrBuf out;
    const char *const *skip; /* folders of headers that are not the project's */
    uint32_t nskip;
    uint32_t n;
} DepsCtx;

static void cx__deps_visit(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    DepsCtx *c = data;
    if (depth == 0 || c->n >= CX_DEPS_MAX) return; /* the main file itself */
    GL_UNUSED(stack);
    CXString s = c->A->clang_getFileName(file);
    const char *path = c->A->clang_getCString(s);
    bool mine = path && path[0] == '/';
    for (uint32_t i = 0; mine && i < c->nskip; i++) {
        size_t n = strlen(c->skip[i]);
        if (n && !strncmp(path, c->skip[i], n) && (path[n] == '/' || c->skip[i][n - 1] == '/')) mine = false;
    }
    if (mine) {
        size_t size = 0;
        const char *text = c->A->clang_getFileContents(c->tu, file, &size);
        uint64_t h = text ? cx__deps_hash(text, size) : 0;
        sb_printf(&c->out, "%016llx %s\n", (unsigned long long)h, path);
        c->n++;
    }
    c->A->clang_disposeString(s);
}

const char *cx_deps_list(CXTranslationUnit tu, Arena *arena, const char *const *skip, uint32_t nskip)
{
    const char *why;
    DepsCtx c;
    memset(&c, 0, sizeof c);
    c.A = cx_api(&why);
    if (!c.A) return NULL;
    c.tu = tu;
    c.skip = skip;
    c.nskip = nskip;
    sb_init(&c.out);
    c.A->clang_getInclusions(tu, cx__deps_visit, &c);
    const char *r = c.out.len ? arena_strndup(arena, c.out.data, c.out.len) : NULL;
    sb_free(&c.out);
    return r;
}
#endif
