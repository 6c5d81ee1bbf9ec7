/* What drives a flagged line: the loop whose iteration reaches it, in any file of the run, found
 * through a call graph of the run's files (calls by name, `self.m()` to the class's own method,
 * `obj.m()` to the methods of that name, `mod.f()` / `from mod import f` to mod.py's function); or,
 * when no loop is visible, the flagged function itself (sampled at each call), or a reason why
 * nothing repeats the line (a __main__ guard, a function called once, a command-line flag, a
 * framework that calls it). */
#ifndef GL_VAL_DRIVE_H
#define GL_VAL_DRIVE_H

#include "base/arena.h"
#include "validate/val_instrument.h"

typedef struct ValSrc {
    const char *path, *src;
    size_t len;
} ValSrc;

/* One call on the path from the sampled loop down to the flagged line. */
typedef struct ValHop {
    uint32_t file, line; /* the call site */
    const char *callee;  /* "Trainer.train_step" */
} ValHop;

typedef enum ValDriveKind {
    VAL_DRIVE_LOOP,  /* ref is a loop: the flagged line's own loop, or one that calls its function */
    VAL_DRIVE_CALLS, /* ref is the flagged function (is_func): sampled at each call */
    VAL_DRIVE_NONE,  /* nothing repeats it: why says what runs it */
} ValDriveKind;

typedef struct ValDrive {
    ValDriveKind kind;
    uint32_t file;         /* of the loop / the wrapped function */
    ValLoopRef ref;
    const char *func;      /* qualname of the function that holds the loop, or of the wrapped one */
    const char *calls;     /* the function the loop calls on the path, NULL when the loop holds the line */
    ValHop *path;          /* from the loop down to the flagged function (arena) */
    uint32_t n_path;
    uint32_t entry;        /* the file whose top level reaches the loop (the program), UINT32_MAX: none */
    bool framework;        /* a framework hook (Lightning training_step, HF compute_loss...) that nothing calls */
    bool backward_seen;    /* a backward() in the loop, on the path or in the flagged function */
    const char *gate;      /* the path runs only when a command-line flag is set: "`if args.sample:` at x.py:40" */
    const char *guard;     /* the entry's call sits under `if __name__ == "__main__":` (line text) */
    const char *why;       /* VAL_DRIVE_NONE: the reason; VAL_DRIVE_CALLS: why no loop was found */
} ValDrive;

typedef struct ValGraph ValGraph;

/* Lowers the files (which must outlive the graph) and indexes their calls. */
ValGraph *val_graph_new(const ValSrc *files, uint32_t n);
void val_graph_free(ValGraph *g);
/* What drives the finding on 1-based line `line` of file `file`; `loop_line` is the rule's own
 * loop (0 when none). Strings and the path go into a. */
void val_graph_drive(ValGraph *g, uint32_t file, uint32_t line, uint32_t loop_line, Arena *a, ValDrive *out);
/* "train.py:88 loop -> train.py:89 Trainer.train_step() -> trainer.py:24": the call path (a). */
const char *val_drive_path_text(const ValDrive *d, const ValSrc *files, Arena *a);

#endif
