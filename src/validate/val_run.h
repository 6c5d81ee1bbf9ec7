/* The validation runner's data: programs (one interpreter start per variant), the loops probed in
 * them, the samples each run recorded, and the verdict per finding. Shared by the runner
 * (val_cli.c), the result reader (val_results.c) and the HTML report (val_report.c). */
#ifndef GL_VAL_RUN_H
#define GL_VAL_RUN_H

#include <stdio.h>
#include "base/arena.h"
#include "base/array.h"
#include "base/diag.h"
#include "validate/val_drive.h"
#include "validate/val_instrument.h"
#include "validate/val_sandbox.h"

/* Slope below this many bytes per iteration is flat (the "< 4 KB/iteration"). */
#define VAL_FLOOR_BYTES 4096.0
#define VAL_MIN_R2 0.9
/* Host growth (autograd nodes kept after backward) is small: a few hundred bytes per iteration. */
#define VAL_HOST_FLOOR_BYTES 256.0
/* A peak-class finding (GL108: evaluation with grad on) is confirmed when the leaky run's peak is
 * above the fixed run's by at least this much and by VAL_PEAK_RATIO of the fixed peak (on CUDA the
 * peak holds the weights too: the ratio keeps noise on a large model from counting). */
#define VAL_PEAK_FLOOR_BYTES (64.0 * 1024.0)
#define VAL_PEAK_RATIO 0.10

/* How a rule's hazard shows in memory, and so how validate measures it (rules/rules.def). */
typedef enum ValMeasure {
    VAL_MEASURE_NONE,  /* not a growth rule: not validated */
    VAL_MEASURE_SLOPE, /* grows every iteration: bytes per iteration, leaky vs fixed */
    VAL_MEASURE_PEAK,  /* holds more at once without growing: peak bytes, leaky vs fixed */
} ValMeasure;

ValMeasure val_rule_measure(int rule);
/* Is running the loop under torch.no_grad() the rule's documented fix (where no backward runs)? */
bool val_rule_no_grad_fix(int rule);
const char *val_rule_codes(void); /* "GL101-GL105" style list of the validated codes, for messages */

typedef Array(double) DoubleList;

/* One probed loop's samples in one run, in iteration order. */
typedef struct ValSeries {
    DoubleList t, alloc, reserved, rss, heap, saved, peak;
} ValSeries;

typedef enum ValVariant { VAL_LEAKY, VAL_FIXED, VAL_NVARIANTS } ValVariant;

/* One interpreter start. */
typedef struct ValRunOut {
    bool attempted;           /* false: the fixed run was not needed (no fixes) */
    const char *error;        /* could not be started / prepared (then nothing else is set) */
    ValSandboxResult sb;
    bool harness_started;     /* the harness wrote its first record */
    bool torch_seen;          /* the program imported torch before the first probe */
    bool cuda;                /* torch saw a CUDA device */
    const char *torch_version, *device;
    const char *exit_why;     /* the harness's: "sampled", "budget", "memory cap", "program ended"; NULL = killed */
    ValSeries *loops;         /* [group's n_loops] */
    bool nvml;                /* NVML sampled this run */
    int64_t nvml_base, nvml_peak;
    const char *gpu;          /* the GPU it ran on (CUDA_VISIBLE_DEVICES), NULL: not restricted */
    double spawn_wall;        /* wall clock when gradleak started it (s since the epoch) */
    double harness_wall;      /* wall clock when the harness started inside it, 0 unknown */
} ValRunOut;

/* A line fit y = a + slope * x over samples [from, from + n). */
typedef struct ValFit {
    double slope, r2;
    uint32_t from, n;
    bool ok; /* enough samples */
} ValFit;

/* FIX_INCOMPLETE and FIX_CRASHED: the leaky run grew as predicted, but the fixed run still grows
 * (another hazard on the loop?) or crashed because of the fix. */
typedef enum ValVerdict { VAL_CONFIRMED, VAL_NOT_REPRODUCED, VAL_INCONCLUSIVE, VAL_FIX_INCOMPLETE, VAL_FIX_CRASHED } ValVerdict;

typedef struct ValFile {
    const char *path;   /* as the user named it */
    char *src;          /* gl_free */
    size_t len;
    const Diag *diags;  /* all findings of the file (lint result owned by the runner) */
    uint32_t n_diags;
    /* A notebook: src is its code cells joined and masked (src/nb), which is the script that runs;
     * text the cells as written, cells the map back (results are shown in cells). Else NULL. */
    char *text;
    struct NbCell *cells;
    uint32_t n_cells;
} ValFile;

typedef struct ValLoop {
    uint32_t file;      /* index into the runner's files */
    ValLoopRef ref;     /* ref.no_grad: the fixed run applies torch.no_grad() to it */
    ValDrive drive;     /* how it was found (the call path from it to the findings) */
    const char *where;  /* "the loop at train.py:88 that calls train_step", "each call of M.training_step" */
    uint32_t k;         /* probe id in the group's runs */
    bool has_fix;       /* every finding on this loop has a fix: the fixed run applies them together */
    bool fix_seen;
    const char *error;  /* why it cannot be instrumented, or NULL */
    bool static_error;  /* error is a reason found without running (nothing repeats it, a framework) */
} ValLoop;

typedef struct ValFinding {
    uint32_t file;
    const Diag *d;
    uint32_t group, loop;      /* loop: index into the group's loops */
    ValFit fit[VAL_NVARIANTS]; /* of the primary metric */
    ValFit host_fit;           /* leaky run, host memory (C heap in use, else RSS) */
    const char *metric;        /* "memory_allocated" (CUDA) or "saved for backward" */
    ValVerdict verdict;
    const char *reason;        /* inconclusive: why; others: a note or NULL */
    const char *measured;      /* "device", "host", "none" */
    bool class_match;
    double seconds;            /* this finding's share of its program's runs */
    int64_t nvml_growth;       /* leaky run: NVML peak - start, -1 when not sampled */
    ValMeasure measure;        /* slope or peak (the rule's) */
    double peak[VAL_NVARIANTS];/* VAL_MEASURE_PEAK: each run's peak over the loop, above its first sample */
    const char *fix_note;      /* what the fixed run changed for it: "its fix", "torch.no_grad() around the loop" */
} ValFinding;

typedef struct ValGroup {
    const char *label;             /* the command, for the table and progress */
    const char *root;              /* the folder copied as the working copy */
    char **argv;                   /* NULL-terminated, arena */
    Array(uint32_t) files;         /* files served instrumented */
    Array(ValLoop) loops;
    ValRunOut run[VAL_NVARIANTS];
    double seconds;
    uint32_t entry;                /* the file run as the program (no --cmd), or UINT32_MAX */
    uint32_t first, count;         /* its findings' positions in the session (k of n, for progress) */
} ValGroup;

/* Parses a run's results file into out (its loops array has n_loops entries). Strings go into
 * the arena. Lines that are not records are ignored (the program may share the file). */
void val_results_read(const char *path, Arena *a, ValRunOut *out, uint32_t n_loops);
void val_series_free(ValSeries *s);

/* Least-squares line over y[from, n): slope and r² (1 for a flat series). */
ValFit val_fit(const DoubleList *y, uint32_t from);

/* The primary metric of a run: CUDA memory_allocated when the run used CUDA, else the bytes saved
 * for backward (the tensors a kept graph holds, wherever they live). */
const DoubleList *val_primary(const ValRunOut *r, const ValSeries *s, const char **name);

/* "4.2 MB", "358 KB", "0 B" (decimal units, signed). */
void val_fmt_bytes(char *buf, size_t cap, double bytes);
const char *val_verdict_name(ValVerdict v);

/* The whole session, for the report. */
typedef struct ValSession {
    ValFile *files;
    uint32_t n_files;
    ValGroup *groups;
    uint32_t n_groups;
    ValFinding *findings;
    uint32_t n_findings;
    uint32_t iterations;
    const char *device;       /* what ran: device name */
    const char *torch_version;
} ValSession;

/* The seconds of a run spent starting (interpreter, imports, data: up to the first sample), warming
 * up (the first `warm` samples) and in the sampled iterations; false when it has no samples. */
bool val_run_split(const ValRunOut *r, const ValSeries *s, uint32_t warm, double *start, double *warmup, double *sampled);

/* Writes the self-contained HTML report. Returns 0 or -1 (write error). */
int val_report_write(FILE *fp, const ValSession *s);

#endif
