/* The baseline file (`check --baseline FILE`, `--write-baseline`): findings a team has accepted for
 * now, so that only new ones are reported. JSON, read and written with jansson (kept in src/out/).
 *
 * An entry is keyed by rule code + path + the normalised source of the flagged statement (its lines,
 * without the whitespace that does not separate words), with a count: moving code, adding blank lines or re-indenting keeps it
 * valid; a second identical statement with the same finding is new unless the count says two. */
#ifndef GL_BASELINE_H
#define GL_BASELINE_H

#include "base/array.h"
#include "out/out.h"

typedef struct BaselineEntry {
    char *rule;   /* "GL101" */
    char *path;   /* as the CLI prints it, without a leading "./" */
    char *source; /* normalised source of the flagged statement */
    uint32_t count;
    uint32_t used; /* findings matched so far (baseline_match) */
    bool linted;   /* its file was linted in this run (baseline_linted): a stale entry can be told */
} BaselineEntry;

typedef struct Baseline {
    Array(BaselineEntry) entries;
} Baseline;

/* Reads file into *b. Returns 0, or -1 with a one-line reason in err (unreadable, not JSON, wrong
 * shape: the CLI exits 2). */
int baseline_read(const char *file, Baseline *b, char *err, size_t err_size);
void baseline_free(Baseline *b);

/* The normalised source of the statement at span s of src[0..len): its whole lines, whitespace
 * dropped except one space between two word characters (`return x`, `f(x)` = `f( x )`). gl_free it. */
char *baseline_source(const char *src, size_t len, const Span *s);

/* True when the baseline still covers one more finding with this key (and counts it as used). */
bool baseline_match(Baseline *b, const char *rule, const char *path, const char *source);

/* Marks the entries of path as belonging to a file linted in this run. */
void baseline_linted(Baseline *b, const char *path);

/* Writes every finding of files[0..n) as a baseline (entries sorted by path, rule, source; equal
 * keys counted). Written to a temporary file and renamed. Returns the number of findings written,
 * or -1 with err. */
long baseline_write(const char *file, const OutFile *files, uint32_t n, char *err, size_t err_size);

/* The same, one file at a time (the CLI streams its files): init, add each file (its keys are
 * copied), finish to write, free. */
typedef struct BaselineKey {
    const char *rule; /* the registry's code string */
    char *path;
    char *source;
} BaselineKey;
typedef struct BaselineWriter {
    Array(BaselineKey) keys;
} BaselineWriter;
void baseline_writer_init(BaselineWriter *w);
void baseline_writer_add(BaselineWriter *w, const OutFile *f);
long baseline_writer_finish(BaselineWriter *w, const char *file, char *err, size_t err_size);
void baseline_writer_free(BaselineWriter *w);

#endif
