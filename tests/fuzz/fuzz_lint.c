/* libFuzzer target: Python bytes -> parse -> IR -> dataflow -> every rule -> every output format.
 * Beyond "no crash, no leak, no sanitizer report", it checks what every consumer of a LintResult
 * relies on: spans inside the file, positions consistent with the bytes, findings sorted, rule ids
 * in range. The first input byte's low bit turns on --trace (the dataflow explanations) and colors;
 * bits 1-2 both set add the SARIF writer. */
#include <stdio.h>
#include "engine/engine.h"
#include "out/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

static void fuzz__fail(const char *what, const Diag *d)
{
    fprintf(stderr, "fuzz_lint: invariant broken: %s (rule %d, span %u..%u at %u:%u)\n", what, d ? d->rule : -1,
            d ? d->span.start : 0, d ? d->span.end : 0, d ? d->span.row : 0, d ? d->span.col : 0);
    __builtin_trap();
}

/* Row and byte column of offset off, counting \n, \r\n and lone \r as line ends (as CPython does). */
static void fuzz__row_col(const uint8_t *s, size_t size, size_t off, uint32_t *row, uint32_t *col)
{
    uint32_t r = 0;
    size_t line = 0;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n' || (s[i] == '\r' && (i + 1 >= size || s[i + 1] != '\n'))) {
            r++;
            line = i + 1;
        }
    }
    *row = r;
    *col = (uint32_t)(off - line);
}

static void fuzz__check_span(const uint8_t *data, size_t size, const Span *s, const Diag *d)
{
    if (s->start > s->end || s->end > size) fuzz__fail("span outside the file", d);
    if (s->row > s->end_row) fuzz__fail("span ends on an earlier row", d);
    uint32_t row, col;
    fuzz__row_col(data, size, s->start, &row, &col);
    if (row != s->row) fuzz__fail("span row does not match its byte offset", d);
    /* a BOM on line 1 is not a column (tests/cli case_bom) */
    uint32_t bom = row == 0 && size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF && s->start >= 3 ? 3 : 0;
    if (col != s->col && col - bom != s->col) fuzz__fail("span column does not match its byte offset", d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    LintOptions o;
    lint_options_default(&o);
    o.trace = size && (data[0] & 1);
    LintResult r;
    if (engine_lint("fuzz.py", (const char *)data, size, LANG_PYTHON, &o, &r) == 0) {
        for (uint32_t i = 0; i < r.diags.len; i++) {
            const Diag *d = &r.diags.items[i];
            if (d->rule < 0 || d->rule >= RULE_COUNT) fuzz__fail("rule id out of range", d);
            if (!d->message || !d->message[0]) fuzz__fail("finding without a message", d);
            fuzz__check_span(data, size, &d->span, d);
            for (uint32_t k = 0; k < d->n_related; k++) fuzz__check_span(data, size, &d->related[k].span, d);
            if (i && r.diags.items[i - 1].span.start > d->span.start) fuzz__fail("findings not sorted", d);
            if (d->fix)
                for (uint32_t k = 0; k < d->fix->n_edits; k++)
                    if (d->fix->edits[k].start > d->fix->edits[k].end || d->fix->edits[k].end > size)
                        fuzz__fail("fix edit outside the file", d);
        }
        OutFile f = {"fuzz.py", (const char *)data, size, r.diags.items, r.diags.len, NULL, 0};
        OutOptions oo;
        memset(&oo, 0, sizeof oo);
        oo.color = o.trace;
        oo.show_fix_hints = true;
        const OutFormat fmts[] = {OUT_FULL, OUT_CONCISE, OUT_JSON, OUT_SARIF, OUT_GITHUB};
        /* SARIF embeds every rule's documentation (fixed work that dominated the run time): one input in four */
        bool sarif = size && (data[0] & 6) == 6;
        for (size_t k = 0; k < ARRAY_LEN(fmts); k++)
            if (fmts[k] != OUT_SARIF || sarif) out_write(devnull, fmts[k], &f, 1, &oo);
        oo.statistics = true;
        out_write(devnull, OUT_FULL, &f, 1, &oo);
    }
    lint_result_free(&r);
    return 0;
}
