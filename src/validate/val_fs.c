/* Working copies for validation runs (see val_fs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/array.h"
#include "base/strbuf.h"
#include "validate/val_fs.h"

/* Never copied: history, caches, environments (a virtualenv inside the project is the
 * interpreter's business, not the program's). */
static const char *const skip_names[] = {
    ".git", ".hg", ".svn", "__pycache__", ".gradleak_cache", "node_modules", ".venv", "venv",
    ".mypy_cache", ".pytest_cache", ".tox", ".ruff_cache",
};

static bool fs__skip(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(skip_names); i++)
        if (!strcmp(name, skip_names[i])) return true;
    return false;
}

static char *fs__join(const char *a, const char *b)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s/%s", a, b);
    return sb_take(&sb);
}

static char *fs__err(const char *what, const char *path, int e)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s %s: %s", what, path, strerror(e));
    return sb_take(&sb);
}

static int fs__copy_file(const char *from, const char *to, mode_t mode, uint64_t *budget, char **why)
{
    /* O_NONBLOCK: a file replaced by a FIFO since the lstat is skipped, not waited on */
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (in < 0) {
        if (errno == ENOENT) return 0; /* vanished since the lstat */
        *why = fs__err("cannot read", from, errno);
        return -1;
    }
    struct stat st;
    if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(in);
        return 0;
    }
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode & 0777) | 0600);
    if (out < 0) {
        *why = fs__err("cannot create", to, errno);
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        if ((uint64_t)n > *budget) {
            StrBuf sb;
            sb_init(&sb);
            sb_printf(&sb, "the project is larger than the working-copy limit (stopped at %s); run from a smaller folder",
                      from);
            *why = sb_take(&sb);
            rc = -1;
            break;
        }
        *budget -= (uint64_t)n;
        if (write(out, buf, (size_t)n) != n) {
            *why = fs__err("cannot write", to, errno);
            rc = -1;
            break;
        }
    }
    if (n < 0 && !rc) {
        *why = fs__err("cannot read", from, errno);
        rc = -1;
    }
    close(in);
    close(out);
    return rc;
}

typedef struct FsPair {
    char *from, *to;
} FsPair;

int val_copy_tree(const char *src, const char *dst, uint64_t cap, char **why)
{
    *why = NULL;
    Array(FsPair) stack;
    array_init(&stack);
    if (mkdir(dst, 0700) != 0 && errno != EEXIST) {
        *why = fs__err("cannot create", dst, errno);
        return -1;
    }
    FsPair root = {gl_strdup(src), gl_strdup(dst)};
    array_push(&stack, root);
    uint64_t budget = cap;
    int rc = 0;
    while (stack.len) {
        FsPair p = array_pop(&stack);
        DIR *d = rc ? NULL : opendir(p.from);
        if (!d && !rc) {
            *why = fs__err("cannot read", p.from, errno);
            rc = -1;
        }
        struct dirent *e;
        while (d && !rc && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || fs__skip(e->d_name)) continue;
            char *from = fs__join(p.from, e->d_name), *to = fs__join(p.to, e->d_name);
            struct stat st;
            if (lstat(from, &st) != 0) {
                /* vanished while we looked: not the program's file any more */
            } else if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t n = readlink(from, target, sizeof target - 1);
                if (n >= 0) {
                    target[n] = 0;
                    if (symlink(target, to) != 0) *why = fs__err("cannot create", to, errno), rc = -1;
                }
            } else if (S_ISDIR(st.st_mode)) {
                char cfg[4200];
                snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", from);
                if (access(cfg, F_OK) != 0) {
                    if (mkdir(to, 0700) != 0) {
                        *why = fs__err("cannot create", to, errno);
                        rc = -1;
                    } else {
                        FsPair c = {from, to};
                        array_push(&stack, c);
                        from = to = NULL;
                    }
                }
            } else if (S_ISREG(st.st_mode)) {
                rc = fs__copy_file(from, to, st.st_mode, &budget, why);
            }
            gl_free(from);
            gl_free(to);
        }
        if (d) closedir(d);
        gl_free(p.from);
        gl_free(p.to);
    }
    array_free(&stack);
    return rc;
}

void val_remove_tree(const char *path)
{
    /* Post-order without recursion: a folder is pushed twice, its second visit removes it. */
    typedef struct {
        char *path;
        bool second;
    } Item;
    Array(Item) stack;
    array_init(&stack);
    Item first = {gl_strdup(path), false};
    array_push(&stack, first);
    while (stack.len) {
        Item it = array_pop(&stack);
        struct stat st;
        if (lstat(it.path, &st) != 0) {
            gl_free(it.path);
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            unlink(it.path);
            gl_free(it.path);
            continue;
        }
        if (it.second) {
            rmdir(it.path);
            gl_free(it.path);
            continue;
        }
        chmod(it.path, 0700); /* the program may have made it unwritable */
        Item again = {it.path, true};
        array_push(&stack, again);
        DIR *d = opendir(it.path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            Item c = {fs__join(it.path, e->d_name), false};
            array_push(&stack, c);
        }
        if (d) closedir(d);
    }
    array_free(&stack);
}

int val_write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        off += (size_t)n;
    }
    return close(fd);
}

