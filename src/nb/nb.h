/* Jupyter notebooks (.ipynb, nbformat 4): the code cells joined into one Python module with every
 * IPython-only line masked in place, the map from the joined rows back to cells, and edits of the
 * joined code written back into the notebook's JSON text (only the changed `source` strings).
 *
 * The joined source keeps each code cell's bytes at their rows and columns: cell k's text follows
 * cell k-1's, with a '\n' added where a cell does not end in one. Two copies are kept, of equal
 * length and line structure: `text`, the cells as written (code frames show it), and `code`, what
 * is linted, where IPython syntax is replaced byte for byte by Python that does nothing:
 *
 *   %matplotlib inline      ->  0                   (line magic, shell escape, help: a no-op)
 *   %time x = f()           ->  0;    x = f()       (%time/%timeit/%prun keep their statement)
 *   files = !ls             ->  files = 0
 *   %%bash / %%html / ...   ->  the whole cell blank (%%time/%%capture/...: the first line only)
 *
 * Only lines that start a logical line are looked at (not inside brackets, triple-quoted strings
 * or after a backslash), so `"%s" \n % x` inside parentheses stays Python. */
#ifndef GL_NB_H
#define GL_NB_H

#include "base/base.h"
#include "base/strbuf.h"

/* One code cell of a notebook, in the joined source. */
typedef struct NbCell {
    uint32_t index;     /* 1-based position among ALL the notebook's cells (markdown counted), as ruff */
    uint32_t row;       /* its first row in the joined source (0-based) */
    uint32_t start;     /* its first byte in the joined source */
    uint32_t end;       /* one past its last byte, the added '\n' included */
    uint32_t json_line; /* 1-based line of the .ipynb where its source's first string is (0: unknown) */
    bool json_lines;    /* the source is a list with one string per JSON line: row r is json_line + r */
    bool skipped;       /* a cell magic that is not Python (%%bash): blank in code */
    bool added_nl;      /* the cell's source does not end in '\n': the joined source adds one */
} NbCell;

/* What a notebook reads as. */
typedef enum NbStatus {
    NB_OK = 0,
    NB_NOT_PYTHON = 1, /* a notebook of another language: nothing to lint (note in err) */
    NB_ERROR = -1,     /* not a readable nbformat 4 notebook: one line in err */
} NbStatus;

typedef struct Notebook {
    char *code, *text; /* the joined source, masked and as written; len bytes each, NUL-terminated */
    size_t len;
    NbCell *cells;     /* the code cells, in order */
    uint32_t n_cells;
    uint32_t n_all;    /* every cell (markdown and raw too) */
    uint32_t n_masked; /* IPython lines and cells masked */
    char language[32]; /* the kernel's language as the notebook says ("python" when it says nothing) */
} Notebook;

/* Reads json[0..len) as a notebook. NB_OK: *nb filled (free with nb_free). NB_NOT_PYTHON: err names
 * the language, *nb is empty. NB_ERROR: err holds one line ("nbformat 3 is not supported..."). */
NbStatus nb_read(const char *json, size_t len, Notebook *nb, char *err, size_t errsz);
void nb_free(Notebook *nb);

/* Is path a notebook, by its extension (.ipynb)? */
bool nb_is_path(const char *path);

/* The code cell that holds joined row `row` (cells sorted by row); NULL when none (n == 0). */
const NbCell *nb_cell_of_row(const NbCell *cells, uint32_t n, uint32_t row);
/* The code cell that holds joined byte `off`. */
const NbCell *nb_cell_of_byte(const NbCell *cells, uint32_t n, uint32_t off);

/* Masks one cell's text in place (the rules above). cell_text is text[0..len); code receives the
 * masked copy (len bytes). Returns the number of lines or cells masked; *skip is set when the
 * whole cell is a non-Python cell magic. Exposed for the LSP (cells arrive one by one). */
uint32_t nb_mask_cell(const char *text, size_t len, char *code, bool *skip);

/* ---- Passing a read notebook along (check's spill, the cache) ----
 * A notebook travels as one blob: code, text, the cells, and a trailer that says so. */
void nb_blob_encode(const Notebook *nb, StrBuf *out);
/* Points nb at the parts of blob[0..len) (no copies: the blob must outlive nb; do not nb_free it).
 * Returns 0, or -1 when blob is not an encoded notebook. */
int nb_blob_view(const char *blob, size_t len, Notebook *nb);

/* "line 12" in a message about the joined source -> "cell 4, line 3". Returns a gl_malloc'd copy
 * (NULL when s is NULL). */
char *nb_rewrite_lines(const NbCell *cells, uint32_t n, const char *s);


/* ---- Writing edits back ----
 * --fix runs on nb_fix_source: the masked code with a boundary comment line between cells, so that
 * the fixed text splits back into its cells whatever the fixes did to the rows. */
void nb_fix_source(const Notebook *nb, StrBuf *out);
#define NB_FIX_BOUNDARY "# gradleak: cell boundary 6f1c2e\n"
/* The cells' texts after fixed[0..len) (nb_fix_source's text, fixed): split at the boundaries, and
 * the masked IPython lines restored from nb->text. *texts gets nb->n_cells gl_malloc'd strings
 * (free with nb_texts_free), each as the notebook's `source` holds it (no added '\n'). Returns 0,
 * or -1 with err when it cannot be done (a fix that rewrote IPython syntax, a lost boundary). */
int nb_new_texts(const Notebook *nb, const char *fixed, size_t len, char ***texts, char *err, size_t errsz);
/* The text of code cell k as its `source` holds it (gl_malloc'd). */
char *nb_cell_source(const Notebook *nb, uint32_t k);
void nb_texts_free(char **texts, uint32_t n);

/* Writes the notebook json[0..len) (the file nb was read from) into out with code cell k's source
 * replaced by texts[k] where it differs: a list stays a list of lines, a string a string; strings of
 * unchanged lines are kept byte for byte, new ones escaped as the file escapes (\uXXXX only when the
 * file has no raw non-ASCII byte), and every byte outside the changed strings is the file's. The
 * result is read back and checked. Returns the number of cells changed (0: out holds the file as
 * it was), or -1 with err set. */
int nb_write_back(const Notebook *nb, const char *json, size_t len, char *const *texts, StrBuf *out, char *err,
                  size_t errsz);

#endif
