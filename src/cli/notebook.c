/* `check` on Jupyter notebooks (see notebook.h). */
#include <errno.h>
#include <stdio.h>
#include "base/file.h"
#include "cli/notebook.h"
#include "cli/udiff.h"
#include "engine/run.h"
#include "engine/fix.h"


void cli_fix_notebook(CliFix *cf, const char *path, char **blob, size_t *len, LintResult *res, const LintOptions *o,
                      FILE *diff_out)
{
    if (!cli_fix_active(cf) || res->skipped) return;
    bool any = false;
    for (uint32_t i = 0; i < res->diags.len && !any; i++) any = fix_applicable(res->diags.items[i].fix, cf->unsafe);
    if (!any) return;
    Notebook linted;
    if (nb_blob_view(*blob, *len, &linted) < 0) return;
    size_t jlen;
    char *json = gl_read_file(path, GL_READ_ANY_SIZE, &jlen);
    if (!json) {
        fprintf(stderr, "gradleak: error: %s: cannot read it again to fix it: %s\n", path, strerror(errno));
        cf->errors++;
        return;
    }
    char err[512];
    Notebook nb;
    if (nb_read(json, jlen, &nb, err, sizeof err) != NB_OK || nb.len != linted.len ||
        memcmp(nb.code, linted.code, nb.len) != 0) {
        if (nb.code) nb_free(&nb);
        fprintf(stderr, "gradleak: error: %s: the notebook changed while it was linted: not fixed\n", path);
        cf->errors++;
        gl_free(json);
        return;
    }
    StrBuf fs;
    sb_init(&fs);
    nb_fix_source(&nb, &fs);
    FixOptions fo;
    fix_options_default(&fo);
    fo.unsafe = cf->unsafe;
    fo.lint = nb_fix_lint; /* a cell's last expression is displayed, not discarded */
    FixOutcome r;
    char **texts = NULL;
    StrBuf out;
    sb_init(&out);
    if (fix_file(path, fs.data, fs.len, LANG_PYTHON, o, &fo, &r) != 0) {
        fprintf(stderr, "gradleak: error: %s: fixing failed: internal error (this is a bug in gradleak " GL_VERSION ")\n",
                path);
        cf->errors++;
        goto done_nofix;
    }
    if (r.reverted) {
        fprintf(stderr, "gradleak: error: %s: %s\n", path, r.error);
        cf->errors++;
        goto done;
    }
    if (r.declined) {
        fprintf(stderr, "gradleak: warning: %s: %s\n", path, r.error);
        goto done;
    }
    if (r.capped)
        fprintf(stderr, "gradleak: warning: %s: fixes still applied after %d passes; stopped (run again to continue)\n",
                path, FIX_MAX_PASSES);
    if (!r.changed) goto done;
    if (nb_new_texts(&nb, r.src, r.len, &texts, err, sizeof err) < 0) {
        fprintf(stderr, "gradleak: error: %s: %s\n", path, err);
        cf->errors++;
        goto done;
    }
    if (cf->diff) {
        StrBuf d;
        sb_init(&d);
        for (uint32_t k = 0; k < nb.n_cells; k++) {
            char *old = nb_cell_source(&nb, k);
            if (strcmp(old, texts[k]) != 0) {
                char name[4096];
                snprintf(name, sizeof name, "%s:cell %u", path, nb.cells[k].index);
                udiff(&d, name, old, strlen(old), texts[k], strlen(texts[k]), 3);
            }
            gl_free(old);
        }
        if (d.len) fwrite(d.data, 1, d.len, diff_out);
        sb_free(&d);
        cf->fixed += r.applied;
        cf->changed++;
        goto done;
    }
    int n = nb_write_back(&nb, json, jlen, texts, &out, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "gradleak: error: %s: %s\n", path, err);
        cf->errors++;
        goto done;
    }
    if (n == 0) goto done;
    if (cli_fix_write(path, out.data, out.len) != 0) {
        fprintf(stderr, "gradleak: error: %s: cannot write the fixed notebook: %s (it is unchanged)\n", path,
                strerror(errno));
        cf->errors++;
        goto done;
    }
    cf->fixed += r.applied;
    cf->changed++;
    /* what is left: the new notebook, linted */
    char *nblob = gl_strndup(out.data, out.len);
    size_t nlen = out.len;
    Notebook nv;
    LintResult left;
    memset(&left, 0, sizeof left);
    if (run_nb_load(&nblob, &nlen, err, sizeof err) == NB_OK && nb_blob_view(nblob, nlen, &nv) == 0 &&
        engine_lint(path, nv.code, nv.len, LANG_PYTHON, o, &left) == 0) {
        nb_lint_displayed(&left, nv.code, nv.len, nv.cells, nv.n_cells);
        gl_free(*blob);
        lint_result_free(res);
        *blob = nblob;
        *len = nlen;
        *res = left;
    } else {
        lint_result_free(&left);
        gl_free(nblob);
    }
done:
    fix_outcome_free(&r);
done_nofix:
    nb_texts_free(texts, nb.n_cells);
    sb_free(&out);
    sb_free(&fs);
    nb_free(&nb);
    gl_free(json);
}
