/* Output formatters: findings of one run as text (full, concise), ruff-style JSON, SARIF 2.1.0 or
 * GitHub Actions workflow commands. */
#ifndef GL_OUT_H
#define GL_OUT_H

#include <stdio.h>
#include "base/diag.h"
#include "base/rule_catalog.h"

typedef enum OutFormat {
    OUT_FULL,    /* `path:line:col: CODE message`, code frame, help and notes, summary (ruff's default) */
    OUT_CONCISE, /* one `path:line:col: CODE message` line per finding, then the summary */
    OUT_JSON,    /* ruff's JSON array, plus severity, growth and related */
    OUT_SARIF,   /* SARIF 2.1.0 for GitHub code scanning */
    OUT_GITHUB,  /* `::error file=...::message` workflow commands */
} OutFormat;

/* One linted file and its findings. Nothing here is owned by the formatters. */
typedef struct OutFile {
    const char *path;   /* as given by the user, relative when possible */
    const char *src;    /* the bytes that were linted; may be NULL (no code frame, byte columns) */
    size_t len;
    const Diag *diags;  /* sorted by position */
    uint32_t n_diags;
    /* A notebook (src/nb): src is its code cells joined, and every position is shown relative to
     * its cell (`nb.ipynb:cell 4:12:5`); NULL for other files. */
    const struct NbCell *cells;
    uint32_t n_cells;
} OutFile;

typedef struct OutOptions {
    bool color;          /* ANSI colors in full/concise/statistics (the CLI decides: isatty, NO_COLOR) */
    bool show_fix_hints; /* full/concise: the "[*] N fixable with the `--fix` option." summary line */
    bool statistics;     /* full/concise: out_statistics instead of findings; json: statistics as JSON;
                          * ignored by sarif and github, whose consumers expect their document */
    bool unsafe_fixes;   /* unsafe fixes count as applicable (--unsafe-fixes) in the fix summary */
    uint32_t fixed;      /* findings already fixed by --fix this run: "Found 3 errors (2 fixed, 1 remaining)." */
    uint32_t not_analysed; /* paths and files given or walked but not linted (skipped, unreadable,
                            * vanished, no C++ front end): the summary counts them, and never says
                            * "All checks passed!" while there are any */
    const char *srcroot; /* SARIF %SRCROOT% (absolute or relative to the cwd); NULL = the cwd */
    /* SARIF only, may be NULL: sarif_props[file][diag] is a JSON object (or NULL) whose members are
     * added to that result's properties (validate's evidence). */
    const char *const *const *sarif_props;
} OutOptions;

/* Writes every finding of files[0..n_files) in the given format. Files come sorted by path and
 * each file's diags by position. o may be NULL (all defaults off). Returns 0, or -1 when the
 * stream reports a write error or a document cannot be built. The same as out_stream_begin, one
 * out_stream_file per file, out_stream_end. */
int out_write(FILE *fp, OutFormat fmt, const OutFile *files, uint32_t n_files, const OutOptions *o);

/* The same output written one file at a time, so that a run never holds every file's findings:
 * out_stream_begin writes what comes before the findings (SARIF's tool and rules, JSON's "["),
 * out_stream_file one file's findings (files in path order, as for out_write), and out_stream_end
 * the rest (the summary line, --statistics, the closing brackets) and frees the stream. The bytes
 * are exactly those of out_write over the same files. The stream keeps counts, not findings: the
 * file's memory can go as soon as out_stream_file returns. o (may be NULL) must outlive the stream;
 * its `fixed` is read by out_stream_end, so --fix can count while it streams. out_stream_end
 * returns 0, or -1 when a write failed or a document could not be built (at any point). */
typedef struct OutStream OutStream;
OutStream *out_stream_begin(FILE *fp, OutFormat fmt, const OutOptions *o);
void out_stream_file(OutStream *s, const OutFile *f);
int out_stream_end(OutStream *s);

/* "full", "concise", "json", "sarif", "github" -> *fmt and 0; anything else -> -1, *fmt unchanged. */
int out_format_parse(const char *name, OutFormat *fmt);
const char *out_format_name(OutFormat fmt);

/* ruff --statistics: one line per rule that fired, most frequent first (ties by code):
 * `count<TAB>code<TAB>[*] name`, `[*] ` when some finding of that rule has a fix, `[ ] ` when some
 * other rule's finding has one, nothing when no finding has a fix. Counts are right-aligned. */
void out_statistics(FILE *fp, const OutFile *files, uint32_t n, bool color);

/* The rows behind out_statistics, in its order; returns how many (at most RULE_COUNT + 1). Findings
 * with an out-of-range rule id are counted under rule = RULE_COUNT (shown as out_rule's placeholder). */
typedef struct OutStat {
    int rule;
    uint32_t count;
    bool fixable; /* some finding of this rule has a fix */
} OutStat;
uint32_t out_statistics_rows(const OutFile *files, uint32_t n, OutStat rows[RULE_COUNT + 1]);

/* ---- Helpers shared by the formatters (and usable by anyone who shows positions like the CLI). ---- */

/* A position as every format shows it: 1-based row, 1-based column counted in Unicode code points
 * (an invalid UTF-8 byte counts as one). CRLF, LF and lone CR files give the same columns. */
typedef struct OutPos {
    uint32_t row, col;
} OutPos;

/* Position of byte offset off, which lies on 0-based row `row`. The line's start is found by scanning
 * back from off for '\n' or '\r'. Without src (or with off past its end) the column is byte_col + 1. */
OutPos out_pos(const char *src, size_t len, uint32_t row, uint32_t off, uint32_t byte_col);
OutPos out_span_start(const OutFile *f, const Span *s);
/* out_pos in f: for a notebook the row is counted from the start of its cell. */
OutPos out_file_pos(const OutFile *f, uint32_t row, uint32_t off, uint32_t byte_col);
/* Notebooks: the 1-based index of the cell that holds 0-based row of src (0 for other files), and the
 * line of the .ipynb file where that row's source string is (row + 1 for other files). */
uint32_t out_cell(const OutFile *f, uint32_t row);
uint32_t out_file_line(const OutFile *f, uint32_t row);
OutPos out_span_end(const OutFile *f, const Span *s); /* exclusive: the column after the last char */

/* The rule's catalog entry (a Diag's rule is always a valid RuleId: the cache codec checks it). */
const RuleInfo *out_rule(RuleId rule);
const char *out_severity_name(Severity s); /* "error", "warning", "info" */

/* Copy of s[0..n) with every invalid UTF-8 sequence replaced by U+FFFD. gl_free the result. */
char *out_utf8_sanitize(const char *s, size_t n);

/* Counts for the summary line. A fix is applicable when safe, or unsafe with unsafe_fixes. */
typedef struct OutCounts {
    uint32_t total, errors, warnings, infos;
    uint32_t fixable;        /* applicable fixes */
    uint32_t unsafe_hidden;  /* unsafe fixes not applicable without --unsafe-fixes */
} OutCounts;
OutCounts out_count(const OutFile *files, uint32_t n, bool unsafe_fixes);

/* Adds one file's findings to c. */
void out_count_add(OutCounts *c, const OutFile *f, bool unsafe_fixes);

#endif
