/* The release binary (`ninja dist`) runs on glibc 2.31 and later although it is built on Debian 12's
 * glibc 2.36. Only with -DGL_GLIBC_COMPAT (the dist link); the other builds compile this file to
 * nothing.
 *
 * Building against a newer glibc binds the calls to the newest version of each symbol; the ones
 * newer than 2.31 are below. Each is defined here and forwards to the oldest version, which every
 * glibc from 2.2.5 on still exports (as a compatibility symbol in the newer ones):
 * - pthread_* and dl* moved into libc.so.6 in 2.34 (GLIBC_2.34); the GLIBC_2.2.5 versions live in
 *   libpthread.so.0 / libdl.so.2 before 2.34, so the dist link also names those two (on 2.34+ they
 *   are empty stubs).
 * - stat, fstat, lstat and their 64 forms became functions in 2.33; before, <sys/stat.h> turned them
 *   into __xstat(_STAT_VER, ...) calls, which we make ourselves.
 * - __libc_start_main@GLIBC_2.34 (called by crt1's _start) no longer takes the program's init
 *   function; the GLIBC_2.2.5 one runs the init function it is given (on every version), so we pass
 *   one that runs the executable's constructors as libc_nonshared's __libc_csu_init did.
 * The static libraries (SQLite, jansson, tree-sitter) are compiled against 2.36 too; their calls
 * resolve to these definitions at link time. tests/dist checks that the binary asks for no symbol
 * newer than GLIBC_2.31, so a new call that needs a newer one fails the suite, naming it. */
#include <stddef.h>

#ifdef GL_GLIBC_COMPAT
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>

#define GL_OLD(name, ver) __asm__(".symver gl_old_" #name "," #name "@" ver)
/* Hidden: the definitions serve this link only. Exported, ld.so would bind the binary's own
 * versioned references (pthread_once@GLIBC_2.2.5...) back to them: a call to itself. */
#define GL_DEF __attribute__((visibility("hidden")))

/* ---- stat: __xstat(_STAT_VER_LINUX = 1 on x86_64, ...) ---- */
extern int gl_old___xstat(int, const char *, struct stat *);
extern int gl_old___lxstat(int, const char *, struct stat *);
extern int gl_old___fxstat(int, int, struct stat *);
extern int gl_old___xstat64(int, const char *, struct stat64 *);
extern int gl_old___lxstat64(int, const char *, struct stat64 *);
extern int gl_old___fxstat64(int, int, struct stat64 *);
GL_OLD(__xstat, "GLIBC_2.2.5");
GL_OLD(__lxstat, "GLIBC_2.2.5");
GL_OLD(__fxstat, "GLIBC_2.2.5");
GL_OLD(__xstat64, "GLIBC_2.2.5");
GL_OLD(__lxstat64, "GLIBC_2.2.5");
GL_OLD(__fxstat64, "GLIBC_2.2.5");

GL_DEF int stat(const char *restrict path, struct stat *restrict buf) { return gl_old___xstat(1, path, buf); }
GL_DEF int lstat(const char *restrict path, struct stat *restrict buf) { return gl_old___lxstat(1, path, buf); }
GL_DEF int fstat(int fd, struct stat *buf) { return gl_old___fxstat(1, fd, buf); }
GL_DEF int stat64(const char *restrict path, struct stat64 *restrict buf) { return gl_old___xstat64(1, path, buf); }
GL_DEF int lstat64(const char *restrict path, struct stat64 *restrict buf) { return gl_old___lxstat64(1, path, buf); }
GL_DEF int fstat64(int fd, struct stat64 *buf) { return gl_old___fxstat64(1, fd, buf); }

/* ---- pthread_* and dl*: the GLIBC_2.2.5 versions ---- */
extern int gl_old_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
extern int gl_old_pthread_join(pthread_t, void **);
extern int gl_old_pthread_once(pthread_once_t *, void (*)(void));
extern int gl_old_pthread_key_create(pthread_key_t *, void (*)(void *));
extern int gl_old_pthread_setspecific(pthread_key_t, const void *);
extern int gl_old_pthread_mutexattr_init(pthread_mutexattr_t *);
extern int gl_old_pthread_mutexattr_destroy(pthread_mutexattr_t *);
extern int gl_old_pthread_mutexattr_settype(pthread_mutexattr_t *, int);
extern int gl_old_pthread_mutex_trylock(pthread_mutex_t *);
extern void *gl_old_dlopen(const char *, int);
extern void *gl_old_dlsym(void *restrict, const char *restrict);
extern int gl_old_dlclose(void *);
extern char *gl_old_dlerror(void);
GL_OLD(pthread_create, "GLIBC_2.2.5");
GL_OLD(pthread_join, "GLIBC_2.2.5");
GL_OLD(pthread_once, "GLIBC_2.2.5");
GL_OLD(pthread_key_create, "GLIBC_2.2.5");
GL_OLD(pthread_setspecific, "GLIBC_2.2.5");
GL_OLD(pthread_mutexattr_init, "GLIBC_2.2.5");
GL_OLD(pthread_mutexattr_destroy, "GLIBC_2.2.5");
GL_OLD(pthread_mutexattr_settype, "GLIBC_2.2.5");
GL_OLD(pthread_mutex_trylock, "GLIBC_2.2.5");
GL_OLD(dlopen, "GLIBC_2.2.5");
GL_OLD(dlsym, "GLIBC_2.2.5");
GL_OLD(dlclose, "GLIBC_2.2.5");
GL_OLD(dlerror, "GLIBC_2.2.5");

GL_DEF int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict a, void *(*fn)(void *), void *restrict arg)
{
    return gl_old_pthread_create(t, a, fn, arg);
}
GL_DEF int pthread_join(pthread_t t, void **ret) { return gl_old_pthread_join(t, ret); }
GL_DEF int pthread_once(pthread_once_t *o, void (*fn)(void)) { return gl_old_pthread_once(o, fn); }
GL_DEF int pthread_key_create(pthread_key_t *k, void (*d)(void *)) { return gl_old_pthread_key_create(k, d); }
/* (GCC 12 warns "may be used uninitialized" on forwarding a parameter of a function declared with
 * access(none, 2); the pointer is only stored) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
GL_DEF int pthread_setspecific(pthread_key_t k, const void *v) { return gl_old_pthread_setspecific(k, v); }
#pragma GCC diagnostic pop
GL_DEF int pthread_mutexattr_init(pthread_mutexattr_t *a) { return gl_old_pthread_mutexattr_init(a); }
GL_DEF int pthread_mutexattr_destroy(pthread_mutexattr_t *a) { return gl_old_pthread_mutexattr_destroy(a); }
GL_DEF int pthread_mutexattr_settype(pthread_mutexattr_t *a, int k) { return gl_old_pthread_mutexattr_settype(a, k); }
GL_DEF int pthread_mutex_trylock(pthread_mutex_t *m) { return gl_old_pthread_mutex_trylock(m); }
GL_DEF void *dlopen(const char *f, int flags) { return gl_old_dlopen(f, flags); }
GL_DEF void *dlsym(void *restrict h, const char *restrict s) { return gl_old_dlsym(h, s); }
GL_DEF int dlclose(void *h) { return gl_old_dlclose(h); }
GL_DEF char *dlerror(void) { return gl_old_dlerror(); }

/* ---- program start ---- */
typedef int (*GlMain)(int, char **, char **);
typedef void (*GlInit)(int, char **, char **);
extern int gl_old___libc_start_main(GlMain, int, char **, GlInit, void (*)(void), void (*)(void), void *);
GL_OLD(__libc_start_main, "GLIBC_2.2.5");

/* the executable's constructors (the linker defines the bounds; crti.o defines _init) */
extern GlInit __init_array_start[] __attribute__((visibility("hidden")));
extern GlInit __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

static void glibc_compat__init(int argc, char **argv, char **envp)
{
    _init();
    size_t n = (size_t)(__init_array_end - __init_array_start);
    for (size_t i = 0; i < n; i++) __init_array_start[i](argc, argv, envp);
}

GL_DEF int __libc_start_main(GlMain main_fn, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);
GL_DEF int __libc_start_main(GlMain main_fn, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    (void)init;
    (void)fini; /* the fini array is run by ld.so at exit on every version */
    return gl_old___libc_start_main(main_fn, argc, argv, glibc_compat__init, NULL, rtld_fini, stack_end);
}

#else
typedef int glibc_compat_unused; /* an empty translation unit is not ISO C */
#endif
