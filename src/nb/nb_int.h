/* Inside src/nb: where the `source` strings of a notebook's cells are in its JSON text. */
#ifndef GL_NB_INT_H
#define GL_NB_INT_H

#include "base/array.h"
#include "nb/nb.h"

/* One JSON string token of a `source`: bytes [start, end) of the file, quotes included. */
typedef struct NbPiece {
    uint32_t start, end;
    uint32_t line; /* 1-based line of the file */
} NbPiece;

/* The `source` of one element of the notebook's "cells" array. */
typedef struct NbSrc {
    uint32_t first, n; /* its strings: pieces[first .. first + n) */
    bool has;          /* the cell has a `source` */
    bool list;         /* a list of strings (else one string) */
    uint32_t open;     /* list: the offset of its '[' */
} NbSrc;

/* A cell's "outputs" or "attachments" value: bytes [start, end) of the file. */
typedef struct NbRange {
    uint32_t start, end;
} NbRange;

typedef struct NbScan {
    Array(NbPiece) pieces;
    Array(NbSrc) cells;
    Array(NbRange) skipped; /* outputs and attachments (containers only), in file order */
} NbScan;

/* Finds the cells' sources in a JSON text that jansson accepted. Iterative, any nesting depth.
 * Returns 0, or -1 (out then empty) when the text does not have the shape of a notebook. */
int nb_scan(const char *json, size_t len, NbScan *out);
void nb_scan_free(NbScan *s);
/* Decodes the JSON string token json[start, end) (quotes included) into out. */
void nb_json_unescape(const char *s, uint32_t start, uint32_t end, StrBuf *out);

#endif
