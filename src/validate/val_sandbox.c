/* The sandbox `gradleak validate` runs user code in (see val_sandbox.h and docs/validate.md).
 *
 * Process layout:
 *   gradleak ── A (setsid: leader of a new session and process group; unshare(PID|NET))
 *                └─ B (pid 1 of the new PID namespace: reaps, and its exit tears the namespace down)
 *                    └─ C (the program: rlimits, /dev/null stdin, pipes for stdout/stderr, execve)
 * Without a PID namespace B is the program itself. With bubblewrap (val_bwrap.c: the mount, PID,
 * network and user namespaces) A asks for none itself and B execs bwrap, whose child is pid 1 of the
 * new namespace and starts the program. Every process is killed with its parent
 * (PR_SET_PDEATHSIG), and at the end everything left in the process group and in the pids cgroup
 * is SIGKILLed, so a `setsid` grandchild cannot survive even where namespaces are unavailable
 * (the cgroup catches it, and gradleak is the subreaper of every orphan, which it kills at the end). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "validate/val_bwrap.h"
#include "validate/val_sandbox.h"

#define SB_TAIL 8192

extern char **environ;

/* Records children send up the info pipe: one write each, so they arrive whole. */
typedef struct SbMsg {
    char tag; /* 'I' isolation bits, 'P' host pid of the program, 'S' ending signal, 'E' exec errno,
               * 'M' errno of mounting a private /proc (the program sees the host's) */
    int val;
} SbMsg;

static double sb__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sb__send(int fd, char tag, int val)
{
    SbMsg m = {tag, val};
    ssize_t n = write(fd, &m, sizeof m);
    (void)n;
}

static bool sb__write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    return ok;
}

/* ---- pids cgroup (v1 "pids" hierarchy or v2 with the pids controller delegated) ---- */

static int sb__cgroup_seq;

/* Makes a child cgroup with pids.max; dir gets its path. Returns false when none can be made. */
static bool sb__cgroup_create(char *dir, size_t cap, uint32_t max_procs)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return false;
    char line[1024], base[1200] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        const char *ctrl = c1 + 1, *path = c2 + 1;
        char cand[1200];
        if (!strcmp(ctrl, "pids")) snprintf(cand, sizeof cand, "/sys/fs/cgroup/pids%s", path);
        else if (!strcmp(ctrl, "") && line[0] == '0') snprintf(cand, sizeof cand, "/sys/fs/cgroup%s", path);
        else continue;
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(base, sizeof base, "%s", cand);
            if (!strcmp(ctrl, "pids")) break; /* v1 pids wins over the v2 root */
        }
    }
    fclose(f);
    if (!base[0]) return false;
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = 0;
    snprintf(dir, cap, "%s/gradleak-%ld-%d", base, (long)getpid(), ++sb__cgroup_seq);
    if (mkdir(dir, 0755) != 0) return false;
    char p[1500], v[32];
    snprintf(p, sizeof p, "%s/pids.max", dir);
    snprintf(v, sizeof v, "%u", max_procs);
    if (!sb__write_file(p, v)) {
        rmdir(dir);
        return false;
    }
    return true;
}

/* SIGKILLs every process still in the cgroup, until it is empty (at most ~2 s), then removes it. */
static void sb__cgroup_sweep(const char *dir)
{
    char p[1500];
    snprintf(p, sizeof p, "%s/cgroup.procs", dir);
    for (int round = 0; round < 200; round++) {
        FILE *f = fopen(p, "r");
        if (!f) break;
        long pid;
        int n = 0;
        while (fscanf(f, "%ld", &pid) == 1) {
            if (pid > 1) kill((pid_t)pid, SIGKILL);
            n++;
        }
        fclose(f);
        if (!n) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The parent pid of pid from /proc/PID/stat, or -1. */
static long sb__ppid_of(const char *pid)
{
    char p[300], buf[512];
    snprintf(p, sizeof p, "/proc/%s/stat", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')' */
    char *rp = strrchr(buf, ')');
    long ppid = 0;
    char st = 0;
    if (!rp || sscanf(rp + 1, " %c %ld", &st, &ppid) != 2) return -1;
    return ppid;
}

/* The lowest-numbered child of parent, or 0 (bwrap -> its pid 1 -> the program). */
static pid_t sb__child_of(pid_t parent)
{
    pid_t best = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        if (sb__ppid_of(e->d_name) != (long)parent) continue;
        pid_t p = (pid_t)atol(e->d_name);
        if (!best || p < best) best = p;
    }
    if (d) closedir(d);
    return best;
}

/* SIGKILLs and reaps every child of this process that is not `except` (0: none), repeatedly, until
 * none is left (at most ~2 s). With PR_SET_CHILD_SUBREAPER set, orphans of the run (a `setsid` daemon
 * whose parent exited) become our children, so this catches them even without namespaces or cgroup. */
static void sb__kill_adopted(void)
{
    pid_t self = getpid();
    for (int round = 0; round < 200; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
            if (sb__ppid_of(e->d_name) != (long)self) continue;
            found++;
            kill((pid_t)atol(e->d_name), SIGKILL);
        }
        if (d) closedir(d);
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        if (!found) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the children (after fork: system calls only, no allocation) ---- */

static void sb__close_from(int lo, int keep)
{
    /* close_range(2) where the kernel has it (5.9+), a loop otherwise */
    if (keep >= lo) {
        if (keep > lo && syscall(SYS_close_range, (unsigned)lo, (unsigned)keep - 1, 0) != 0)
            for (int fd = lo; fd < keep; fd++) close(fd);
        lo = keep + 1;
    }
    if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) != 0)
        for (int fd = lo; fd < 65536; fd++) close(fd);
}

/* C: becomes the program. Never returns. */
static void sb__exec_program(const ValSandboxOpts *o, char *const *argv, const struct rlimit lim[4], int out_w,
                             int err_w, int info_w, bool pidns)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char self[32];
    ssize_t n = readlink("/proc/self", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        sb__send(info_w, 'P', atoi(self)); /* the pid as the host's /proc sees it (NVML, RSS) */
    }
    /* In a PID namespace the inherited /proc still shows the host's pids, and the CUDA driver fails
     * when /proc/self is not the caller (measured, torch 2.11: cudaGetDeviceCount error 304). A
     * private mount namespace with a /proc of our own fixes that (unshare --mount-proc). */
    if (pidns && unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) sb__send(info_w, 'M', errno);
    } else if (pidns) {
        sb__send(info_w, 'M', errno);
    }
    setrlimit(RLIMIT_CPU, &lim[0]);
    setrlimit(RLIMIT_FSIZE, &lim[1]);
    setrlimit(RLIMIT_CORE, &lim[2]);
    setrlimit(RLIMIT_NPROC, &lim[3]);
    struct rlimit nofile = {4096, 4096};
    setrlimit(RLIMIT_NOFILE, &nofile);
    if (o->cwd && chdir(o->cwd) != 0) {
        sb__send(info_w, 'E', errno);
        _exit(127);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_w, 1);
    dup2(err_w, 2);
    sb__close_from(3, info_w); /* info_w is O_CLOEXEC: it closes at exec, or reports the failure */
    signal(SIGPIPE, SIG_DFL);
    environ = (char **)o->envp;
    execvp(argv[0], argv);
    sb__send(info_w, 'E', errno);
    _exit(127);
}

/* Waits for pid and exits as it did (a signal becomes 128 + signal, and is reported). */
static void sb__wait_and_mirror(pid_t pid, int info_w, bool reap_all)
{
    int st = 0;
    for (;;) {
        pid_t w = wait(&st);
        if (w < 0) {
            if (errno == EINTR) continue;
            _exit(125);
        }
        if (w == pid) break;
        (void)reap_all; /* pid 1 of the namespace reaps orphans as they come */
    }
    if (WIFSIGNALED(st)) {
        sb__send(info_w, 'S', WTERMSIG(st));
        _exit(128 + WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

/* A: session leader; asks for namespaces, then starts B. Never returns. */
static void sb__child_a(const ValSandboxOpts *o, char *const *bargv, const struct rlimit lim[4], int out_w,
                        int err_w, int info_w, int cg_fd, pid_t parent)
{
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    if (cg_fd >= 0) {
        char b[24];
        int len = snprintf(b, sizeof b, "%ld\n", (long)getpid());
        if (write(cg_fd, b, (size_t)len) != len) sb__send(info_w, 'I', -1);
        close(cg_fd);
    }
    unsigned iso = 0;
    if (bargv) {
        /* bubblewrap makes the namespaces (a user namespace where it can, as root too) */
        iso = VAL_ISO_PIDNS | VAL_ISO_NETNS | VAL_ISO_FS | (getuid() ? VAL_ISO_USERNS : 0);
    } else if (!o->no_namespaces) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWPID | CLONE_NEWNET) == 0) {
            iso |= VAL_ISO_PIDNS | VAL_ISO_NETNS;
        } else if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET) == 0) {
            char map[64];
            snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
            sb__write_file("/proc/self/uid_map", map);
            sb__write_file("/proc/self/setgroups", "deny");
            snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
            sb__write_file("/proc/self/gid_map", map);
            iso |= VAL_ISO_USERNS | VAL_ISO_PIDNS | VAL_ISO_NETNS;
        } else if (unshare(CLONE_NEWNET) == 0) {
            iso |= VAL_ISO_NETNS;
        }
    }
    sb__send(info_w, 'I', (int)iso);
    pid_t b = fork();
    if (b < 0) _exit(126);
    if (b == 0) {
        if (bargv) sb__exec_program(o, bargv, lim, out_w, err_w, info_w, false);
        if (!(iso & VAL_ISO_PIDNS)) sb__exec_program(o, o->argv, lim, out_w, err_w, info_w, false);
        /* B: pid 1 of the namespace. When it exits, the kernel kills everything left inside. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pid_t c = fork();
        if (c < 0) _exit(126);
        if (c == 0) sb__exec_program(o, o->argv, lim, out_w, err_w, info_w, true);
        close(out_w);
        close(err_w);
        sb__wait_and_mirror(c, info_w, true);
    }
    close(out_w);
    close(err_w);
    sb__wait_and_mirror(b, info_w, false);
}

/* ---- the parent ---- */

/* Runs `bwrap OPTIONS -- true` with the run's own mount plan: true when bubblewrap can make it here
 * (user namespaces allowed, every path bindable). Otherwise *why gets bwrap's first stderr line. */
static bool sb__bwrap_probe(char *const *pargv, char *const *envp, char **why)
{
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0) {
        *why = gl_strdup(strerror(errno));
        return false;
    }
    pid_t p = fork();
    if (p < 0) {
        close(ep[0]), close(ep[1]);
        *why = gl_strdup(strerror(errno));
        return false;
    }
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) dup2(devnull, 0), dup2(devnull, 1);
        dup2(ep[1], 2);
        execve(pargv[0], pargv, envp);
        _exit(127);
    }
    close(ep[1]);
    char buf[1024];
    size_t got = 0;
    double t0 = sb__now();
    struct pollfd pf = {ep[0], POLLIN, 0};
    while (sb__now() - t0 < 10) {
        if (poll(&pf, 1, 100) <= 0) continue;
        ssize_t n = read(ep[0], buf + got, sizeof buf - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
        if (got >= sizeof buf - 1) break;
    }
    close(ep[0]);
    int st = 0;
    if (waitpid(p, &st, WNOHANG) == 0) {
        kill(p, SIGKILL);
        waitpid(p, &st, 0);
    }
    buf[got] = 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
    buf[strcspn(buf, "\n")] = 0;
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, buf[0] ? buf : WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "cannot be executed" : "failed");
    *why = sb_take(&sb);
    return false;
}

static void sb__tail_append(StrBuf *t, const char *buf, size_t n)
{
    sb_append(t, buf, n);
    if (t->len > 2 * SB_TAIL) {
        size_t drop = t->len - SB_TAIL;
        memmove(t->data, t->data + drop, t->len - drop);
        t->len -= drop;
        t->data[t->len] = 0;
    }
}

static void sb__tail_finish(StrBuf *t)
{
    if (t->len > SB_TAIL) {
        size_t drop = t->len - SB_TAIL;
        memmove(t->data, t->data + drop, t->len - drop);
        t->len -= drop;
        t->data[t->len] = 0;
    }
}

int val_sandbox_run(const ValSandboxOpts *o, ValSandboxResult *r, char **why)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    *why = NULL;
    if (!o->argv || !o->argv[0]) {
        *why = gl_strdup("no command to run");
        return -1;
    }
    uint32_t max_procs = o->max_procs ? o->max_procs : 512;
    uint64_t cpu = o->cpu_s ? o->cpu_s : (uint64_t)o->timeout_s + 5;
    uint64_t fsize = o->fsize_bytes ? o->fsize_bytes : 256ull << 20;
    struct rlimit lim[4] = {
        {(rlim_t)cpu, (rlim_t)cpu + 2},
        {(rlim_t)fsize, (rlim_t)fsize},
        {0, 0},
        {(rlim_t)max_procs, (rlim_t)max_procs},
    };
    bool root = geteuid() == 0;
    if (root) lim[3].rlim_cur = lim[3].rlim_max = RLIM_INFINITY; /* the kernel ignores it for root anyway */

    int out_p[2], err_p[2], info_p[2];
    if (pipe2(out_p, O_CLOEXEC) != 0) goto pipe_fail;
    if (pipe2(err_p, O_CLOEXEC) != 0) {
        close(out_p[0]), close(out_p[1]);
        goto pipe_fail;
    }
    if (pipe2(info_p, O_CLOEXEC) != 0) {
        close(out_p[0]), close(out_p[1]), close(err_p[0]), close(err_p[1]);
        goto pipe_fail;
    }

    char cgdir[1400];
    bool have_cg = !o->no_cgroup && sb__cgroup_create(cgdir, sizeof cgdir, max_procs);
    int cg_fd = -1;
    if (have_cg) {
        char p[1500];
        snprintf(p, sizeof p, "%s/cgroup.procs", cgdir);
        cg_fd = open(p, O_WRONLY | O_CLOEXEC);
        if (cg_fd < 0) {
            rmdir(cgdir);
            have_cg = false;
        }
    }

    /* the filesystem view: bubblewrap when it is here and works, else a note says what is exposed */
    char **bargv = NULL;
    char *fs_note = NULL;
    if (!o->no_namespaces && !o->no_fs_isolation) {
        char *bw = val_bwrap_find();
        if (!bw) {
            fs_note = gl_strdup("no filesystem isolation: bubblewrap (bwrap) is not installed, so the program can "
                                "write and read wherever you can (apt-get install bubblewrap)");
        } else {
            char true_cmd[] = "true";
            char *const probe_cmd[] = {true_cmd, NULL};
            char **pargv = val_bwrap_argv(o, bw, probe_cmd);
            char *pwhy = NULL;
            if (sb__bwrap_probe(pargv, o->envp, &pwhy)) {
                bargv = val_bwrap_argv(o, bw, o->argv);
            } else {
                StrBuf sb;
                sb_init(&sb);
                sb_printf(&sb, "no filesystem isolation: bwrap cannot make its namespaces here (%s; user namespaces "
                               "disabled?), so the program can write and read wherever you can", pwhy);
                fs_note = sb_take(&sb);
            }
            gl_free(pwhy);
            val_bwrap_free(pargv);
            gl_free(bw);
        }
    }

    double t0 = sb__now();
    pid_t parent = getpid();
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of the run come back to us (see sb__kill_adopted) */
    pid_t a = fork();
    if (a < 0) {
        int e = errno;
        close(out_p[0]), close(out_p[1]), close(err_p[0]), close(err_p[1]), close(info_p[0]), close(info_p[1]);
        if (cg_fd >= 0) close(cg_fd);
        if (have_cg) rmdir(cgdir);
        val_bwrap_free(bargv);
        gl_free(fs_note);
        StrBuf sb;
        sb_init(&sb);
        sb_printf(&sb, "fork failed: %s", strerror(e));
        *why = sb_take(&sb);
        return -1;
    }
    if (a == 0) {
        close(out_p[0]), close(err_p[0]), close(info_p[0]);
        sb__child_a(o, bargv, lim, out_p[1], err_p[1], info_p[1], cg_fd, parent);
    }
    val_bwrap_free(bargv);
    close(out_p[1]), close(err_p[1]), close(info_p[1]);
    if (cg_fd >= 0) close(cg_fd);

    StrBuf out, err;
    sb_init(&out);
    sb_init(&err);
    sb_append(&out, "", 0);
    sb_append(&err, "", 0);
    int exec_errno = 0, iso = -2, sig = 0, status = 0, mount_errno = 0;
    bool a_done = false, cg_ok = have_cg, via_bwrap = bargv != NULL;
    pid_t launcher = 0; /* with bwrap: bwrap's pid; the program is its grandchild */
    double kill_at = 0; /* when SIGKILL follows the SIGTERM */
    struct pollfd pf[3] = {{out_p[0], POLLIN, 0}, {err_p[0], POLLIN, 0}, {info_p[0], POLLIN, 0}};
    for (;;) {
        int nfds = 0;
        for (int i = 0; i < 3; i++) nfds += pf[i].fd >= 0;
        if (nfds) {
            int pr = poll(pf, 3, 100);
            if (pr < 0 && errno != EINTR) break;
        } else {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < 3; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            ssize_t n = read(pf[i].fd, buf, i == 2 ? sizeof(SbMsg) : sizeof buf);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                close(pf[i].fd);
                pf[i].fd = -1;
                continue;
            }
            if (i == 0) sb__tail_append(&out, buf, (size_t)n);
            else if (i == 1) sb__tail_append(&err, buf, (size_t)n);
            else if (n == (ssize_t)sizeof(SbMsg)) {
                SbMsg m;
                memcpy(&m, buf, sizeof m);
                if (m.tag == 'I' && m.val >= 0) iso = m.val;
                else if (m.tag == 'I') cg_ok = false;
                else if (m.tag == 'P' && via_bwrap) launcher = (pid_t)m.val;
                else if (m.tag == 'P') r->pid = (pid_t)m.val;
                else if (m.tag == 'S') sig = m.val;
                else if (m.tag == 'E') exec_errno = m.val;
                else if (m.tag == 'M') mount_errno = m.val;
            }
        }
        if (!a_done) {
            pid_t w = waitpid(a, &status, WNOHANG);
            if (w == a) a_done = true;
        }
        if (via_bwrap && launcher && !r->pid) {
            pid_t init = sb__child_of(launcher);
            if (init) r->pid = sb__child_of(init);
        }
        double el = sb__now() - t0;
        /* the program is over when A is: daemons it left may still hold the pipes open */
        if (a_done) {
            if (pf[0].fd < 0 && pf[1].fd < 0 && pf[2].fd < 0) break;
            if (!kill_at) kill_at = sb__now() + 0.2; /* drain what is buffered, briefly */
            else if (sb__now() >= kill_at) break;
            continue;
        }
        if (kill_at) {
            if (sb__now() >= kill_at) {
                kill(-a, SIGKILL);
                kill(a, SIGKILL);
            }
            continue;
        }
        bool stop = o->poll && o->poll(o->poll_ctx, r->pid, el);
        if (stop || el >= o->timeout_s) {
            if (stop) r->stopped = true;
            else r->timed_out = true;
            kill(-a, SIGTERM);
            kill_at = sb__now() + 0.3;
        }
    }
    if (!a_done) {
        kill(-a, SIGKILL);
        kill(a, SIGKILL);
        while (waitpid(a, &status, 0) < 0 && errno == EINTR) {}
    }
    /* whatever is left of the group, and of the cgroup (setsid escapees without a PID namespace) */
    kill(-a, SIGKILL);
    if (have_cg) sb__cgroup_sweep(cgdir);
    sb__kill_adopted();
    for (int i = 0; i < 3; i++)
        if (pf[i].fd >= 0) close(pf[i].fd);
    r->wall_s = sb__now() - t0;
    if (!r->pid) r->pid = launcher;

    if (WIFEXITED(status)) r->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r->exit_code = 128 + WTERMSIG(status), sig = sig ? sig : WTERMSIG(status);
    r->term_signal = sig;
    r->isolation = iso > 0 ? (unsigned)iso : 0;
    if (cg_ok && have_cg) r->isolation |= VAL_ISO_CGROUP;
    if (!root) r->isolation |= VAL_ISO_NPROC;
    sb__tail_finish(&out);
    sb__tail_finish(&err);
    /* bwrap reports a program it cannot start on stderr, with exit status 1 */
    if (via_bwrap && r->exit_code == 1 && !strncmp(err.data, "bwrap: execvp ", 14)) {
        const char *reason = strstr(err.data + 14, ": ");
        StrBuf e2;
        sb_init(&e2);
        sb_printf(&e2, "gradleak: cannot run '%s': ", o->argv[0]);
        if (reason) sb_append(&e2, reason + 2, strcspn(reason + 2, "\n"));
        sb_puts(&e2, "\n");
        sb_free(&err);
        err = e2;
        r->exit_code = 127;
    }
    if (exec_errno) {
        sb_printf(&err, "gradleak: cannot run '%s': %s\n", o->argv[0], strerror(exec_errno));
        r->exit_code = 127;
    }
    r->out_tail = sb_take(&out);
    r->err_tail = sb_take(&err);

    StrBuf note;
    sb_init(&note);
    if (fs_note) sb_printf(&note, "%s; ", fs_note);
    gl_free(fs_note);
    /* without a PID namespace the run's leftovers are killed at its end (process group, cgroup,
     * orphans adopted by gradleak as subreaper), but a setsid daemon lives on when gradleak itself
     * is killed first, until the next validate (val_cli.c, cli__kill_left_in) */
    if (o->no_namespaces)
        sb_puts(&note, "namespaces disabled: a setsid daemon of the program outlives the run if gradleak is killed; ");
    else if (!(r->isolation & VAL_ISO_PIDNS))
        sb_puts(&note, "no PID namespace (unshare refused): leftovers are killed by process group and cgroup at the "
                       "end, but a setsid daemon outlives the run if gradleak itself is killed; ");
    if (mount_errno)
        sb_printf(&note, "no private /proc in the PID namespace (%s): CUDA may fail to initialise; ", strerror(mount_errno));
    if (!o->no_namespaces && !(r->isolation & VAL_ISO_NETNS))
        sb_puts(&note, "no network namespace: the program can reach the network; ");
    if (!(r->isolation & (VAL_ISO_CGROUP | VAL_ISO_NPROC)))
        sb_puts(&note, "no pids cgroup and RLIMIT_NPROC does not bind root: process count bounded only by the wall clock; ");
    r->note = note.len ? sb_take(&note) : (sb_free(&note), NULL);
    return 0;

pipe_fail:;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "cannot create pipes: %s", strerror(errno));
    *why = sb_take(&sb);
    return -1;
}

void val_sandbox_result_free(ValSandboxResult *r)
{
    gl_free(r->out_tail);
    gl_free(r->err_tail);
    gl_free(r->note);
    memset(r, 0, sizeof *r);
}
