/* What the formatters share inside src/out: a stream's state (out.h, out_stream_begin) and the
 * per-format halves of writing one. */
#ifndef GL_OUT_INT_H
#define GL_OUT_INT_H

#include "out/out.h"

struct OutStream {
    FILE *fp;
    OutFormat fmt;
    const OutOptions *o;
    uint32_t files;                /* files written so far: SARIF's index into o->sarif_props */
    uint32_t items;                /* elements of the JSON/SARIF array written so far (the commas) */
    OutCounts counts;              /* the summary line */
    OutStat stats[RULE_COUNT + 1]; /* --statistics: stats[r] counts rule r (RULE_COUNT: out of range) */
    bool any_fix;                  /* --statistics: some finding has a fix */
    bool failed;                   /* a part of a JSON document could not be built */
    int indent;                    /* JSON/SARIF: the indentation of the array's own line */
    char *root;                    /* SARIF: the absolute %SRCROOT% */
    char *tail;                    /* SARIF: the document after the results array's "[" */
};

/* Writes one element of the stream's JSON array: dump is a value as json_dumps lays it out with
 * JSON_INDENT(2) at depth 0; it is indented to its depth, after a comma when it is not the first. */
void out_json_element(OutStream *s, const char *dump);
/* Closes the array that out_json_element filled: "]", on its own line when it has elements. */
void out_json_close(OutStream *s);

/* --statistics: the rows of what the stream counted, in out_statistics' order. */
uint32_t out_stream_statistics_rows(const OutStream *s, OutStat rows[RULE_COUNT + 1]);

/* The per-format halves of a stream (begin when there is something before the first finding). */
void out_text_file(OutStream *s, const OutFile *f, bool concise);
void out_text_end(OutStream *s);
void out_json_begin(OutStream *s);
void out_json_file(OutStream *s, const OutFile *f);
void out_json_end(OutStream *s);
void out_sarif_begin(OutStream *s);
void out_sarif_file(OutStream *s, const OutFile *f);
void out_sarif_end(OutStream *s);
void out_github_file(OutStream *s, const OutFile *f);

#endif
