/* GitHub Actions workflow commands (`::error file=...::message`), escaped as the Actions toolkit does. */
#include "out/out_int.h"

/* actions/toolkit command.ts: escapeData turns % CR LF into %25 %0D %0A; escapeProperty also turns
 * : and , into %3A and %2C (they delimit the properties). */
static void gh__escape(FILE *fp, const char *s, bool property)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '%': fputs("%25", fp); break;
        case '\r': fputs("%0D", fp); break;
        case '\n': fputs("%0A", fp); break;
        case ':': property ? fputs("%3A", fp) : fputc(':', fp); break;
        case ',': property ? fputs("%2C", fp) : fputc(',', fp); break;
        default: fputc(*s, fp);
        }
    }
}

void out_github_file(OutStream *st, const OutFile *f)
{
    FILE *fp = st->fp;
    for (uint32_t j = 0; j < f->n_diags; j++) {
        const Diag *d = &f->diags[j];
        const RuleInfo *ri = out_rule(d->rule);
        OutPos s = out_span_start(f, &d->span), e = out_span_end(f, &d->span);
        if (f->cells) { /* a notebook: the lines of the .ipynb, and the cell's position in the message */
            s = (OutPos){out_file_line(f, d->span.row), 1};
            e = (OutPos){out_file_line(f, d->span.end_row), 1};
        }
        const char *level = d->severity == SEV_ERROR ? "error" : d->severity == SEV_WARNING ? "warning" : "notice";
        fprintf(fp, "::%s file=", level);
        gh__escape(fp, f->path, true);
        fprintf(fp, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", s.row, s.col, e.row, e.col);
        gh__escape(fp, ri->code, true);
        fputc(' ', fp);
        gh__escape(fp, ri->name, true);
        fputs("::", fp);
        if (f->cells) {
            OutPos c = out_span_start(f, &d->span);
            fprintf(fp, "cell %u, line %u, column %u: ", out_cell(f, d->span.row), c.row, c.col);
        }
        gh__escape(fp, d->message, false);
        fputc('\n', fp);
    }
}
