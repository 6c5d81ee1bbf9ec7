/* Internal errors: the per-thread context (file, stage, rule) and the fatal-signal handler. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include "base/crash.h"

extern char **environ;

static _Thread_local const char *ctx_file;
static _Thread_local const char *ctx_stage;
static _Thread_local const char *ctx_rule;
static _Thread_local bool ctx_altstack; /* this thread has its own signal stack */

static char **crash_argv;
static bool crash_retry;
static bool crash_installed;
static pthread_key_t crash_stack_key;
static volatile sig_atomic_t crash_busy;

#define SKIP_VAR GL_CRASH_SKIP_VAR
#define MAX_RETRIES 32 /* files skipped in one run before giving up on the others */
#define ALT_STACK_SIZE (64 * 1024)

/* ---- async-signal-safe output: write(2) only ----------------------------------------------------- */

static void crash__put(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    while (n) {
        ssize_t w = write(2, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

static const char *crash__signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE (arithmetic error)";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT (abort)";
    default: return "a fatal signal";
    }
}

/* ---- the re-execution that skips the crashing file ---------------------------------------------- */

static char crash_envbuf[64 * 1024];
static char *crash_envp[8192];

/* Copies the environment with SKIP_VAR extended by path; returns false if it does not fit. */
static bool crash__build_env(const char *path, int *n_skipped)
{
    const char *old = NULL;
    size_t ne = 0;
    for (char **e = environ; e && *e; e++) {
        const char *v = *e;
        size_t k = 0;
        while (SKIP_VAR[k] && v[k] == SKIP_VAR[k]) k++;
        if (!SKIP_VAR[k] && v[k] == '=') {
            old = v + k + 1;
            continue;
        }
        if (ne + 2 >= ARRAY_LEN(crash_envp)) return false;
        crash_envp[ne++] = *e;
    }
    size_t at = 0;
    *n_skipped = 1;
    const char *parts[3] = {SKIP_VAR "=", old, path};
    for (int i = 0; i < 3; i++) {
        const char *s = parts[i];
        if (!s) continue;
        if (i == 2 && old && old[0]) {
            if (at + 1 >= sizeof crash_envbuf) return false;
            crash_envbuf[at++] = '\n';
        }
        for (; *s; s++) {
            if (at + 1 >= sizeof crash_envbuf) return false;
            if (*s == '\n' && i == 1) ++*n_skipped;
            crash_envbuf[at++] = *s;
        }
    }
    crash_envbuf[at] = 0;
    crash_envp[ne++] = crash_envbuf;
    crash_envp[ne] = NULL;
    return true;
}

static void crash__handler(int sig)
{
    if (__atomic_exchange_n(&crash_busy, 1, __ATOMIC_SEQ_CST)) {
        for (;;) pause(); /* another thread is reporting; it ends the process */
    }
    crash__put("gradleak: internal error: ");
    crash__put(crash__signame(sig));
    if (ctx_file) {
        crash__put(" while checking ");
        crash__put(ctx_file);
    }
    if (ctx_rule) {
        crash__put(" (rule ");
        crash__put(ctx_rule);
        crash__put(")");
    } else if (ctx_stage) {
        crash__put(" (");
        crash__put(ctx_stage);
        crash__put(")");
    }
    crash__put("\nthis is a bug in gradleak " GL_VERSION ": please report it, with the file if you can share it\n");
    int n_skipped;
    if (crash_retry && ctx_file && crash_argv && crash__build_env(ctx_file, &n_skipped) && n_skipped <= MAX_RETRIES) {
        crash__put("gradleak: checking the other files again without it\n");
        execve("/proc/self/exe", crash_argv, crash_envp);
        execve(crash_argv[0], crash_argv, crash_envp); /* no /proc: works when argv[0] is a path */
    }
    _exit(2);
}

/* ---- per-thread signal stacks (a stack overflow must still reach the handler) ------------------- */

static void crash__free_stack(void *p)
{
    stack_t off;
    memset(&off, 0, sizeof off);
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, NULL);
    gl_free(p);
}

static void crash__thread_stack(void)
{
    if (ctx_altstack || !crash_installed) return;
    ctx_altstack = true;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = gl_malloc(ALT_STACK_SIZE);
    ss.ss_size = ALT_STACK_SIZE;
    if (sigaltstack(&ss, NULL) != 0) {
        gl_free(ss.ss_sp);
        return;
    }
    pthread_setspecific(crash_stack_key, ss.ss_sp); /* freed when the thread exits */
}

/* what the command line read from the environment: the files an earlier execution crashed on
 * (GRADLEAK_SKIP_FILES, one per line) and the test hook's kind (GRADLEAK_TEST_CRASH) */
static const char *crash_skip_list;
static const char *crash_test_kind;

void gl_crash_install(char **argv, bool retry_files, const char *skip_list, const char *test_kind)
{
    if (crash_installed) return;
    crash_skip_list = skip_list;
    crash_test_kind = test_kind;
    crash_argv = argv;
    crash_retry = retry_files;
    pthread_key_create(&crash_stack_key, crash__free_stack);
    crash_installed = true;
    crash__thread_stack();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash__handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK; /* a fault inside the handler is blocked, so the kernel ends the process */
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < ARRAY_LEN(sigs); i++) sigaction(sigs[i], &sa, NULL);
}

void gl_ctx_file(const char *path)
{
    crash__thread_stack();
    ctx_file = path;
    ctx_stage = NULL;
    ctx_rule = NULL;
}

void gl_ctx_stage(const char *stage)
{
    ctx_stage = stage;
    ctx_rule = NULL;
}

void gl_ctx_rule(const char *code) { ctx_rule = code; }

bool gl_crash_skipped(const char *path)
{
    const char *list = crash_skip_list;
    if (!list || !path) return false;
    size_t n = strlen(path);
    for (const char *p = list; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == n && !memcmp(p, path, n)) return true;
        if (!nl) break;
        p = nl + 1;
    }
    return false;
}

void gl_crash_test_hook(const char *src, size_t len)
{
    static const char marker[] = "gradleak-test-crash";
    if (!crash_test_kind || !memmem(src, len, marker, sizeof marker - 1)) return;
    const char *kind = crash_test_kind;
    if (!strcmp(kind, "segv")) {
        raise(SIGSEGV); /* what a wild pointer does, without undefined behaviour in the source */
    } else if (!strcmp(kind, "abort")) {
        abort();
    }
}
