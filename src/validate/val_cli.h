/* The validation session shared by the runner's files: val_cli.c (options, linting, grouping,
 * verdicts), val_exec.c (running the variants, one per GPU at a time, with progress) and
 * val_output.c (table, JSON, SARIF, history). Private to src/validate/. */
#ifndef GL_VAL_CLI_H
#define GL_VAL_CLI_H

#include <stdio.h>
#include "engine/engine.h"
#include "out/out.h"
#include "validate/val_nvml.h"
#include "validate/val_run.h"

typedef enum FailOn { FAIL_CONFIRMED, FAIL_FINDING, FAIL_NEVER } FailOn;

typedef struct Cli {
    Arena arena;
    const char *cmd;
    const char *python;
    const char *device;     /* auto, cuda, cpu */
    uint32_t iterations;
    double timeout;
    uint64_t mem_cap;
    RuleSet select;
    FailOn fail_on;
    OutFormat fmt;
    const char *report;
    Array(const char *) keep_env;
    Array(const char *) allow_read; /* --allow-read, then the harness; NULL-terminated when run */
    bool keep_temp, no_history, color, tty, plan;
    char *harness;          /* gl_free */
    char *tmp;              /* session temp folder, gl_free */
    ValNvml *nvml;
    bool cuda;              /* runs get the GPUs */
    const char *gpus_arg;   /* --gpus as given ("all" when not) */
    Array(const char *) gpus; /* the GPUs runs are spread over (CUDA ids); one NULL entry: no restriction */
    ValFile *files;
    LintResult *lints;
    uint32_t n_files;
    ValGraph *graph;
    ValSrc *srcs;           /* the files as the call graph sees them (paths for call paths) */
    Array(ValGroup) groups;
    Array(ValFinding) findings;
    double wall_s;          /* the whole set of runs */
} Cli;

/* val_exec.c: runs every group's leaky variant, and its fixed one when a loop with fixes grew,
 * up to one run per GPU at a time (each in a worker process of its own). */
void val_exec_all(Cli *c);
const char *val_exec_real(Arena *a, const char *path);

/* val_output.c */
void val_out_table(Cli *c, FILE *fp);
void val_out_measure(const ValFinding *f, ValVariant v, bool with_r2, char *buf, size_t cap);
int val_out_json(Cli *c, FILE *fp);
int val_out_sarif(Cli *c, FILE *fp);
void val_out_history(Cli *c);

#endif
