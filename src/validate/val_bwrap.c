/* The filesystem view of a validation run, as a bubblewrap command line (val_bwrap.h).
 *
 * Why bubblewrap and not our own mount code: it is Debian's well-reviewed tool for exactly this
 * (Flatpak's sandbox), it handles the unprivileged (user namespace) and the root cases, covers
 * /proc's writable files (sysrq-trigger, sys/), and a mount plan is easy to get subtly wrong.
 *
 * What the program sees, in the order the mounts are made (later ones cover earlier ones):
 *   /                    the host's, read-only (and nodev, nosuid)
 *   /dev                 a fresh one (null, zero, random, tty, shm, pts); /dev/nvidia* bound in when
 *                        the run may use the GPU (device nodes must stay usable: `--dev-bind`)
 *   /proc                a fresh one for its PID namespace (CUDA needs /proc/self to be the caller)
 *   /tmp                 a private, size-bounded tmpfs: gone with the run
 *   /run, home folders   empty tmpfs: the user's files (~/.ssh, ~/.aws, tokens) and the host's
 *   (/root, /home, $HOME) sockets (docker.sock, agents) are not there
 *   /etc/shadow, ...     unreadable (a nodev device bound over them)
 *   interpreter paths    under a hidden folder, bound back read-only: the Python of PATH and of
 *                        the command, its prefix and venv base, VIRTUAL_ENV, CONDA_PREFIX,
 *                        PYTHONPATH, LD_LIBRARY_PATH, CUDA_HOME entries, and ro_paths
 *   rw_paths             bound back writable: the run's copy, HOME, TMPDIR and results folder
 * Namespaces: user (where it can be made; as root too, so a root program holds no capability
 * outside), PID, network, IPC, UTS; every capability dropped. */
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/array.h"
#include "base/strbuf.h"
#include "validate/val_bwrap.h"

typedef Array(char *) StrVec;

static void bw__push(StrVec *v, const char *s)
{
    array_push(v, gl_strdup(s));
}

static bool bw__is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool bw__is_exec(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

char *val_bwrap_find(void)
{
    const char *env = getenv("GRADLEAK_BWRAP");
    if (env) return env[0] && bw__is_exec(env) ? gl_strdup(env) : NULL;
    if (bw__is_exec("/usr/bin/bwrap")) return gl_strdup("/usr/bin/bwrap");
    if (bw__is_exec("/bin/bwrap")) return gl_strdup("/bin/bwrap");
    const char *path = getenv("PATH");
    if (!path) return NULL;
    char *copy = gl_strdup(path), *save = NULL, *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/') continue;
        StrBuf sb;
        sb_init(&sb);
        sb_printf(&sb, "%s/bwrap", d);
        if (bw__is_exec(sb.data)) found = sb_take(&sb);
        else sb_free(&sb);
    }
    gl_free(copy);
    return found;
}

/* path is root or lies below it */
static bool bw__within(const char *root, const char *path)
{
    size_t n = strlen(root);
    return !strncmp(root, path, n) && (path[n] == '/' || !path[n]);
}

/* Hidden folders: the home folders, as given and resolved. Never / or a system folder (a HOME of
 * /usr would hide the interpreter). */
static void bw__add_mask(StrVec *masks, const char *p)
{
    static const char *const never[] = {"/", "/usr", "/etc", "/opt", "/var", "/bin", "/lib", "/lib64", "/sbin", "/tmp", "/srv", "/mnt", "/dev", "/proc", "/sys"};
    if (!p || p[0] != '/' || !bw__is_dir(p)) return;
    char *real = realpath(p, NULL);
    const char *cand[2] = {p, real};
    for (int c = 0; c < 2; c++) {
        if (!cand[c]) continue;
        bool skip = false;
        for (size_t i = 0; i < ARRAY_LEN(never) && !skip; i++) skip = !strcmp(cand[c], never[i]);
        for (uint32_t i = 0; i < masks->len && !skip; i++) skip = !strcmp(masks->items[i], cand[c]);
        size_t n = strlen(cand[c]);
        if (n > 1 && cand[c][n - 1] == '/') skip = true; /* not normalised: leave it */
        if (!skip) bw__push(masks, cand[c]);
    }
    free(real);
}

static bool bw__masked(const StrVec *masks, const char *p)
{
    for (uint32_t i = 0; i < masks->len; i++)
        if (bw__within(masks->items[i], p) && strcmp(masks->items[i], p)) return true;
    return false;
}

/* A path the program needs that a mask may hide: bound back (read-only or writable), as given and
 * resolved. A hidden folder itself, or a folder holding one, is never bound back whole. */
typedef struct BwBind {
    char *src, *dst;
    bool rw;
} BwBind;
typedef Array(BwBind) BindVec;

static void bw__add_bind(BindVec *binds, const StrVec *masks, const char *p, bool rw, bool always)
{
    if (!p || p[0] != '/') return;
    char *real = realpath(p, NULL);
    if (!real) return;
    const char *dsts[2] = {p, real};
    for (int c = 0; c < 2; c++) {
        if (c == 1 && !strcmp(p, real)) break;
        const char *d = dsts[c];
        bool hidden = bw__masked(masks, d);
        for (uint32_t i = 0; i < masks->len && !always; i++)
            if (bw__within(d, masks->items[i])) hidden = false; /* it holds a hidden folder */
        if (!hidden && !always) continue;
        bool dup = false;
        for (uint32_t i = 0; i < binds->len && !dup; i++)
            dup = !strcmp(binds->items[i].dst, d) && binds->items[i].rw == rw;
        if (dup) continue;
        BwBind b = {gl_strdup(real), gl_strdup(d), rw};
        array_push(binds, b);
    }
    free(real);
}

/* The installation prefix of an executable (…/bin/python -> …), and a venv's base from its
 * pyvenv.cfg ("home = /base/bin"). */
static void bw__add_interpreter(BindVec *binds, const StrVec *masks, const char *exe)
{
    char *real = realpath(exe, NULL);
    const char *cand[2] = {exe, real};
    for (int c = 0; c < 2; c++) {
        if (!cand[c]) continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", cand[c]);
        char *slash = strrchr(dir, '/');
        if (!slash) continue;
        *slash = 0; /* .../bin */
        bw__add_bind(binds, masks, dir, false, false);
        slash = strrchr(dir, '/');
        if (!slash || strcmp(slash, "/bin")) continue;
        *slash = 0; /* the prefix */
        if (!dir[0]) continue;
        bw__add_bind(binds, masks, dir, false, false);
        char cfg[4200], line[4200];
        snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", dir);
        FILE *f = fopen(cfg, "r");
        if (!f) continue;
        for (int k = 0; k < 64 && fgets(line, sizeof line, f); k++) {
            if (strncmp(line, "home", 4)) continue;
            char *eq = strchr(line, '=');
            if (!eq) continue;
            char *v = eq + 1;
            while (*v == ' ' || *v == '\t') v++;
            v[strcspn(v, "\r\n")] = 0;
            bw__add_bind(binds, masks, v, false, false);
            char *s = strrchr(v, '/');
            if (s && !strcmp(s, "/bin") && s > v) {
                *s = 0;
                bw__add_bind(binds, masks, v, false, false);
            }
        }
        fclose(f);
    }
    free(real);
}

static const char *bw__env(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (char *const *e = envp; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

/* Each ':'-separated entry of a variable; with bin_parent, an entry …/bin also gives … */
static void bw__add_list(BindVec *binds, const StrVec *masks, const char *list, bool bin_parent)
{
    if (!list) return;
    char *copy = gl_strdup(list), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        bw__add_bind(binds, masks, d, false, false);
        size_t n = strlen(d);
        if (bin_parent && n > 4 && !strcmp(d + n - 4, "/bin")) {
            d[n - 4] = 0;
            if (bw__masked(masks, d)) bw__add_bind(binds, masks, d, false, false);
        }
    }
    gl_free(copy);
}

/* argv[0] as execvp would find it in envp's PATH (relative to cwd when it has a '/'). */
static char *bw__which(const char *cmd, char *const *envp, const char *cwd)
{
    StrBuf sb;
    sb_init(&sb);
    if (strchr(cmd, '/')) {
        if (cmd[0] == '/' || !cwd) sb_puts(&sb, cmd);
        else sb_printf(&sb, "%s/%s", cwd, cmd);
        return sb_take(&sb);
    }
    const char *path = bw__env(envp, "PATH");
    char *copy = gl_strdup(path ? path : "/usr/local/bin:/usr/bin:/bin"), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        sb_clear(&sb);
        sb_printf(&sb, "%s/%s", d, cmd);
        if (bw__is_exec(sb.data)) {
            gl_free(copy);
            return sb_take(&sb);
        }
    }
    gl_free(copy);
    sb_free(&sb);
    return NULL;
}

char **val_bwrap_argv(const ValSandboxOpts *o, const char *bwrap, char *const *cmd)
{
    StrVec v, masks;
    array_init(&v);
    array_init(&masks);
    BindVec binds;
    array_init(&binds);

    bw__add_mask(&masks, getenv("HOME"));
    struct passwd *pw = getpwuid(getuid());
    if (pw) bw__add_mask(&masks, pw->pw_dir);
    bw__add_mask(&masks, "/root");
    bw__add_mask(&masks, "/home");

    /* what the interpreter needs, where a mask hides it */
    static const char *const dirs[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) bw__add_bind(&binds, &masks, bw__env(o->envp, dirs[i]), false, false);
    bw__add_list(&binds, &masks, bw__env(o->envp, "PATH"), true);
    bw__add_list(&binds, &masks, bw__env(o->envp, "PYTHONPATH"), false);
    bw__add_list(&binds, &masks, bw__env(o->envp, "LD_LIBRARY_PATH"), false);
    if (cmd && cmd[0]) {
        char *exe = bw__which(cmd[0], o->envp, o->cwd);
        if (exe) bw__add_interpreter(&binds, &masks, exe);
        gl_free(exe);
    }
    for (const char *const *p = o->ro_paths; p && *p; p++) bw__add_bind(&binds, &masks, *p, false, true);
    for (const char *const *p = o->rw_paths; p && *p; p++) bw__add_bind(&binds, &masks, *p, true, true);
    if (!o->rw_paths && o->cwd) bw__add_bind(&binds, &masks, o->cwd, true, true);

    bw__push(&v, bwrap);
    static const char *const ns[] = {"--die-with-parent", "--unshare-user-try", "--unshare-pid", "--unshare-net",
                                     "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL",
                                     "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
    for (size_t i = 0; i < ARRAY_LEN(ns); i++) bw__push(&v, ns[i]);
    if (o->gpu) {
        DIR *d = opendir("/dev");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "nvidia", 6)) continue;
            StrBuf sb;
            sb_init(&sb);
            sb_printf(&sb, "/dev/%s", e->d_name);
            bw__push(&v, "--dev-bind");
            bw__push(&v, sb.data);
            bw__push(&v, sb.data);
            sb_free(&sb);
        }
        if (d) closedir(d);
    }
    /* a private /tmp, bounded (tmpfs is memory): four times the largest file the run may write */
    char size[32];
    snprintf(size, sizeof size, "%llu", (unsigned long long)(o->fsize_bytes ? o->fsize_bytes : 256ull << 20) * 4);
    bw__push(&v, "--perms"), bw__push(&v, "1777"), bw__push(&v, "--size"), bw__push(&v, size);
    bw__push(&v, "--tmpfs"), bw__push(&v, "/tmp");
    /* shared memory of DataLoader workers: world-writable as on the host */
    bw__push(&v, "--perms"), bw__push(&v, "1777"), bw__push(&v, "--size"), bw__push(&v, size);
    bw__push(&v, "--tmpfs"), bw__push(&v, "/dev/shm");
    /* the host's sockets (docker.sock, agents, D-Bus), and /var/run where it is no link to /run */
    bw__push(&v, "--tmpfs"), bw__push(&v, "/run");
    struct stat st;
    if (lstat("/var/run", &st) == 0 && S_ISDIR(st.st_mode)) bw__push(&v, "--tmpfs"), bw__push(&v, "/var/run");
    if (o->gpu && bw__is_dir("/run/nvidia-persistenced")) {
        bw__push(&v, "--ro-bind"), bw__push(&v, "/run/nvidia-persistenced"), bw__push(&v, "/run/nvidia-persistenced");
    }
    for (uint32_t i = 0; i < masks.len; i++) bw__push(&v, "--tmpfs"), bw__push(&v, masks.items[i]);
    static const char *const secret_files[] = {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers"};
    for (size_t i = 0; i < ARRAY_LEN(secret_files); i++)
        if (lstat(secret_files[i], &st) == 0 && S_ISREG(st.st_mode))
            bw__push(&v, "--ro-bind"), bw__push(&v, "/dev/null"), bw__push(&v, secret_files[i]);
    static const char *const secret_dirs[] = {"/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d"};
    for (size_t i = 0; i < ARRAY_LEN(secret_dirs); i++)
        if (lstat(secret_dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) bw__push(&v, "--tmpfs"), bw__push(&v, secret_dirs[i]);
    /* read-only binds first, writable ones last: a writable folder inside a read-only one stays writable */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < binds.len; i++) {
            if (binds.items[i].rw != (pass == 1)) continue;
            bw__push(&v, binds.items[i].rw ? "--bind" : "--ro-bind");
            bw__push(&v, binds.items[i].src);
            bw__push(&v, binds.items[i].dst);
        }
    /* hidden folders read-only once their binds are in: a write there fails instead of vanishing */
    for (uint32_t i = 0; i < masks.len; i++) bw__push(&v, "--remount-ro"), bw__push(&v, masks.items[i]);
    bw__push(&v, "--remount-ro"), bw__push(&v, "/run");
    if (o->cwd) bw__push(&v, "--chdir"), bw__push(&v, o->cwd);
    bw__push(&v, "--");
    for (char *const *p = cmd; p && *p; p++) bw__push(&v, *p);

    for (uint32_t i = 0; i < masks.len; i++) gl_free(masks.items[i]);
    array_free(&masks);
    for (uint32_t i = 0; i < binds.len; i++) gl_free(binds.items[i].src), gl_free(binds.items[i].dst);
    array_free(&binds);
    char **out = gl_malloc(sizeof(char *) * (v.len + 1));
    for (uint32_t i = 0; i < v.len; i++) out[i] = v.items[i];
    out[v.len] = NULL;
    array_free(&v);
    return out;
}

void val_bwrap_free(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++) gl_free(*p);
    gl_free(v);
}
