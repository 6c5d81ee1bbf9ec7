/* A strict reader for the TOML 1.0 subset gradleak's configuration uses (everything but dates/times). */
#ifndef GL_TOML_H
#define GL_TOML_H

#include "base/base.h"

/* The tree is never deeper than this (tables, arrays and inline tables all count one level), so code
 * that walks it may recurse. Deeper input is rejected with an error, not a crash. */
#define TOML_MAX_DEPTH 128

/* What a value holds, and which accessor reads it. */
typedef enum TomlType {
    TOML_TABLE,  /* toml_table_len / toml_table_key_at / toml_table_value_at / toml_table_get */
    TOML_ARRAY,  /* toml_array_len / toml_array_at */
    TOML_STRING, /* toml_as_string / toml_string_len */
    TOML_INT,    /* toml_as_int: 64-bit signed; larger literals are parse errors */
    TOML_FLOAT,  /* toml_as_float */
    TOML_BOOL,   /* toml_as_bool */
} TomlType;

typedef struct TomlValue TomlValue;

/* Where and why parsing failed. Lines and columns are 1-based; the column counts code points, as the
 * CLI's `path:line:col` does. The message is one lowercase sentence without position. */
typedef struct TomlError {
    uint32_t line, col;
    char message[200];
} TomlError;

/* Parses src[0..len) (need not be NUL-terminated). Returns the root table, which the caller owns and
 * releases with toml_free, or NULL with *err filled in. Dates and times are valid TOML but rejected:
 * gradleak's settings have no use for them. */
TomlValue *toml_parse(const char *src, size_t len, TomlError *err);
/* Frees the whole tree; only ever pass the root that toml_parse returned (NULL is fine). */
void toml_free(TomlValue *root);

TomlType toml_type(const TomlValue *v);
const char *toml_type_name(TomlType t); /* "table", "array", "string", "integer", "float", "boolean" */
/* Where the value starts in the source (for a table: its header's key, its first dotted-key use,
 * or its `{`; the root table is 1:1). */
uint32_t toml_line(const TomlValue *v);
uint32_t toml_col(const TomlValue *v);

/* Tables keep their keys in document order. Lookups on a non-table answer 0 / NULL. */
size_t toml_table_len(const TomlValue *t);
const char *toml_table_key_at(const TomlValue *t, size_t i);
size_t toml_table_key_len(const TomlValue *t, size_t i); /* keys may hold "\u0000" */
void toml_table_key_pos(const TomlValue *t, size_t i, uint32_t *line, uint32_t *col);
const TomlValue *toml_table_value_at(const TomlValue *t, size_t i);
const TomlValue *toml_table_get(const TomlValue *t, const char *key);

size_t toml_array_len(const TomlValue *a);
const TomlValue *toml_array_at(const TomlValue *a, size_t i);

/* Scalars. A type mismatch answers NULL / false and leaves *out untouched; integers are not floats.
 * Strings are NUL-terminated but may contain NUL bytes ("\u0000"): toml_string_len gives the length. */
const char *toml_as_string(const TomlValue *v);
size_t toml_string_len(const TomlValue *v);
bool toml_as_int(const TomlValue *v, int64_t *out);
bool toml_as_float(const TomlValue *v, double *out);
bool toml_as_bool(const TomlValue *v, bool *out);

#endif
