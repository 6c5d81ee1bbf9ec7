/* `check --fix/--unsafe-fixes/--diff`: runs the fix engine per file and writes files or diffs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/fixes.h"
#include "cli/udiff.h"
#include "engine/fix.h"

bool cli_fix_active(const CliFix *cf) { return cf->fix || cf->diff; }

bool cli_fix_flag(CliFix *cf, const char *arg)
{
    if (!strcmp(arg, "--fix")) cf->fix = true;
    else if (!strcmp(arg, "--no-fix")) cf->fix = false;
    else if (!strcmp(arg, "--unsafe-fixes")) cf->unsafe = true;
    else if (!strcmp(arg, "--no-unsafe-fixes")) cf->unsafe = false;
    else if (!strcmp(arg, "--diff")) cf->diff = true;
    else return false;
    return true;
}

static bool cli_fix__has_applicable(const LintResult *res, bool unsafe)
{
    for (uint32_t i = 0; i < res->diags.len; i++)
        if (fix_applicable(res->diags.items[i].fix, unsafe)) return true;
    return false;
}

/* Replaces path's contents by buf[0..len): a temporary file in the same directory, with the
 * original's permissions, renamed over it, so a crash leaves either version, never half of one. */
int cli_fix_write(const char *path, const char *buf, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    size_t n = strlen(path);
    char *tmp = gl_malloc(n + 32);
    snprintf(tmp, n + 32, "%s.gradleak-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        gl_free(tmp);
        return -1;
    }
    int rc = 0;
    if (fchmod(fd, st.st_mode & 07777) != 0) rc = -1;
    for (size_t off = 0; rc == 0 && off < len;) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) rc = -1;
        else off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    int saved = errno;
    if (close(fd) != 0 && rc == 0) rc = -1, saved = errno;
    if (rc == 0 && rename(tmp, path) != 0) rc = -1, saved = errno;
    if (rc != 0) unlink(tmp);
    gl_free(tmp);
    errno = saved;
    return rc;
}

void cli_fix_file(CliFix *cf, const char *path, char **src, size_t *len, LintResult *res, const LintOptions *o,
                  FILE *diff_out)
{
    if (!cli_fix_active(cf) || res->skipped || !cli_fix__has_applicable(res, cf->unsafe)) return;
    FixOptions fo;
    fix_options_default(&fo);
    fo.unsafe = cf->unsafe;
    FixOutcome r;
    if (fix_file(path, *src, *len, engine_lang_of(path), o, &fo, &r) != 0) {
        fprintf(stderr, "gradleak: error: %s: fixing failed: internal error (this is a bug in gradleak " GL_VERSION ")\n",
                path);
        cf->errors++;
        return;
    }
    if (r.reverted) {
        fprintf(stderr, "gradleak: error: %s: %s\n", path, r.error);
        cf->errors++;
        fix_outcome_free(&r);
        return;
    }
    if (r.declined) {
        fprintf(stderr, "gradleak: warning: %s: %s\n", path, r.error);
        fix_outcome_free(&r);
        return;
    }
    if (r.dropped)
        fprintf(stderr, "gradleak: warning: %s: %s%s\n", path, r.error,
                r.dropped > 1 ? arena_printf(&r.lint.arena, " (and %u more)", r.dropped - 1) : "");
    if (r.capped)
        fprintf(stderr, "gradleak: warning: %s: fixes still applied after %d passes; stopped (run again to continue)\n",
                path, FIX_MAX_PASSES);
    if (!r.changed) {
        fix_outcome_free(&r);
        return;
    }
    if (cf->diff) {
        StrBuf d;
        sb_init(&d);
        udiff(&d, path, *src, *len, r.src, r.len, 3);
        if (d.len) fwrite(d.data, 1, d.len, diff_out);
        sb_free(&d);
        cf->fixed += r.applied;
        cf->changed++;
        fix_outcome_free(&r);
        return;
    }
    if (cli_fix_write(path, r.src, r.len) != 0) {
        fprintf(stderr, "gradleak: error: %s: cannot write the fixed file: %s (it is unchanged)\n", path,
                strerror(errno));
        cf->errors++;
        fix_outcome_free(&r);
        return;
    }
    cf->fixed += r.applied;
    cf->changed++;
    /* the caller now shows what is left in the fixed text */
    gl_free(*src);
    lint_result_free(res);
    *src = r.src;
    *len = r.len;
    *res = r.lint;
}
