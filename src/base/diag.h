/* Findings about the user's code: spans, diagnostics, related locations and fixes. */
#ifndef GL_DIAG_H
#define GL_DIAG_H

#include "base/base.h"
#include "base/array.h"
#include "base/rule_catalog.h"

/* A source range. Rows are 0-based; columns are 0-based BYTE offsets within the row. Output layers
 * convert columns to what their consumer wants (code points for the CLI and JSON, UTF-16 for LSP). */
typedef struct Span {
    uint32_t start, end;       /* byte offsets into the file */
    uint32_t row, col;         /* start position */
    uint32_t end_row, end_col; /* end position (exclusive column) */
} Span;

/* A location on the dataflow path behind a finding, with what happens there. */
typedef struct Related {
    Span span;
    const char *message;
} Related;

/* One replacement of bytes [start, end) by text. */
typedef struct Edit {
    uint32_t start, end;
    const char *text;
} Edit;

typedef enum FixSafety { FIX_SAFE, FIX_UNSAFE } FixSafety;

typedef struct Fix {
    const char *message; /* "Replace 'loss' with 'loss.item()'" */
    FixSafety safety;
    Edit *edits; /* sorted by start, non-overlapping */
    uint32_t n_edits;
} Fix;

/* Severity class of a growth finding: where the memory goes. */
typedef enum GrowthClass { GROWTH_NONE, GROWTH_DEVICE, GROWTH_HOST } GrowthClass;

typedef struct Diag {
    RuleId rule;
    Severity severity;
    GrowthClass growth;
    Span span;
    const char *message; /* full sentence, in the user's words */
    const char *hint;    /* short fix hint, may be NULL */
    Related *related;
    uint32_t n_related;
    Fix *fix;            /* may be NULL */
    const char *trace;   /* dataflow facts behind the finding (for --trace), may be NULL */
    uint32_t loop_line;  /* 1-based line of the loop the finding is about, 0 if none */
} Diag;

typedef Array(Diag) DiagList;

#endif
