/* Running user code for `gradleak validate`: its own session and process group, a mount namespace
 * (bubblewrap: read-only filesystem but for its own folders, private /tmp, home folders hidden), PID
 * and network namespaces where the kernel allows them, a pids cgroup where one can be made, rlimits,
 * a scrubbed environment (built by the caller), captured output, and a wall-clock kill of everything
 * it started. */
#ifndef GL_VAL_SANDBOX_H
#define GL_VAL_SANDBOX_H

#include <sys/types.h>
#include "base/base.h"

/* What isolation a run actually got (a bit set): the report says which were missing and why. */
#define VAL_ISO_PIDNS 0x01  /* PID namespace: nothing it starts outlives it, setsid or not */
#define VAL_ISO_NETNS 0x02  /* network namespace: only a down loopback, every connect fails */
#define VAL_ISO_USERNS 0x04 /* the namespaces came through a user namespace (unprivileged) */
#define VAL_ISO_CGROUP 0x08 /* pids cgroup: fork bombs hit pids.max; leftovers are killed from it */
#define VAL_ISO_NPROC 0x10  /* RLIMIT_NPROC applies (not for root, whom the kernel exempts) */
#define VAL_ISO_FS 0x20     /* mount namespace (bubblewrap): read-only but for rw_paths, private /tmp, homes hidden */

/* Called about every 100 ms while the program runs, with the host pid of the program (0 until it
 * is known) and the seconds since the start. Returning true stops the run (memory cap). */
typedef bool (*ValPollFn)(void *ctx, pid_t pid, double elapsed);

typedef struct ValSandboxOpts {
    char *const *argv;        /* argv[0] is looked up in envp's PATH */
    char *const *envp;        /* the child's whole environment */
    const char *cwd;          /* working directory of the child */
    double timeout_s;         /* wall clock; then the whole group is killed (SIGTERM, 0.3 s, SIGKILL) */
    uint64_t cpu_s;           /* RLIMIT_CPU soft limit (hard = soft + 2); 0 = timeout_s + 5 */
    uint64_t fsize_bytes;     /* RLIMIT_FSIZE: largest file it may write; 0 = 256 MiB */
    uint32_t max_procs;       /* pids.max / RLIMIT_NPROC; 0 = 512 */
    bool no_namespaces;       /* tests: exercise the fallbacks */
    bool no_cgroup;           /* tests: the fallback without a pids cgroup */
    bool no_fs_isolation;     /* tests: the fallback without bubblewrap */
    bool gpu;                 /* /dev/nvidia* are usable (bound into the private /dev) */
    const char *const *rw_paths; /* NULL-terminated: what it may write (its copy, HOME, TMPDIR,
                                  * results); NULL = cwd. Everything else is read-only. */
    const char *const *ro_paths; /* NULL-terminated: readable even inside hidden home folders */
    ValPollFn poll;           /* may be NULL */
    void *poll_ctx;
} ValSandboxOpts;

typedef struct ValSandboxResult {
    int exit_code;      /* the program's exit status, or 128 + signal when a signal ended it; -1 unknown */
    int term_signal;    /* the signal that ended it, 0 when it exited */
    bool timed_out;     /* killed at the wall-clock limit */
    bool stopped;       /* killed because poll asked to */
    double wall_s;
    pid_t pid;          /* host pid the program ran as (0 if never started) */
    unsigned isolation; /* VAL_ISO_* it got */
    char *out_tail;     /* last bytes of stdout and stderr (at most 8 KiB each); gl_free */
    char *err_tail;
    char *note;         /* what isolation was unavailable and why, or NULL; gl_free */
} ValSandboxResult;

/* Runs the program and waits for it and everything it started. Returns 0 when it ran (whatever its
 * exit status), or -1 with *why set (gl_free) when it could not be started at all. */
int val_sandbox_run(const ValSandboxOpts *o, ValSandboxResult *r, char **why);
void val_sandbox_result_free(ValSandboxResult *r);

#endif
