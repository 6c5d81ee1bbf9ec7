/* Running the leaky and fixed variants of each program: one worker process per run, at most one
 * run per GPU at a time (--gpus), each run seeing only its GPU (CUDA_VISIBLE_DEVICES); the parent
 * draws the progress and collects what each worker left in its run folder. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "engine/fix.h"
#include "validate/val_cli.h"
#include "validate/val_env.h"
#include "validate/val_fs.h"

static double exec__now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

typedef struct PollCtx {
    Cli *c;
    ValGroup *g;
    ValRunOut *r;
    const char *results;
    const char *variant;
    off_t off;
    uint32_t samples;
    int64_t nvml_base;
    bool nvml_per_process;
    int dev; /* the NVML device of the run's GPU, -1: all */
} PollCtx;

static int64_t exec__rss(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/statm", (long)pid);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    long size = 0, res = 0;
    int n = fscanf(f, "%ld %ld", &size, &res);
    fclose(f);
    return n == 2 ? (int64_t)res * sysconf(_SC_PAGESIZE) : -1;
}

static bool exec__poll(void *ctx, pid_t pid, double elapsed)
{
    PollCtx *p = ctx;
    Cli *c = p->c;
    (void)elapsed;
    bool stop = false;
    if (c->nvml && pid > 0) {
        int64_t b = val_nvml_process_bytes(c->nvml, pid);
        if (b >= 0) p->nvml_per_process = true;
        else if (!p->nvml_per_process) {
            int64_t u = val_nvml_device_used(c->nvml, p->dev);
            b = u >= 0 ? u - p->nvml_base : -1;
        }
        if (b >= 0) {
            p->r->nvml = true;
            if (b > p->r->nvml_peak) p->r->nvml_peak = b;
            if ((uint64_t)b > c->mem_cap) stop = true;
        }
    }
    if (pid > 0) {
        int64_t rss = exec__rss(pid);
        if (rss > 0 && (uint64_t)rss > c->mem_cap) stop = true;
    }
    return stop;
}

/* realpath of path; NULL when it does not exist. arena copy. */
const char *val_exec_real(Arena *a, const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) return NULL;
    const char *out = arena_strdup(a, r);
    free(r);
    return out;
}

/* path relative to root when it lies under root, else NULL */
static const char *exec__under(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (!strncmp(root, path, n) && path[n] == '/') return path + n + 1;
    if (!strcmp(root, "/")) return path + 1;
    return NULL;
}

/* In the worker: prepares the working copy and the served sources, runs the program, and leaves
 * the sandbox's result in r (the caller writes it to run.json for the parent). */
static void exec__run_variant(Cli *c, ValGroup *g, uint32_t gi, ValVariant v, const char *gpu)
{
    ValRunOut *r = &g->run[v];
    Arena *a = &c->arena;
    const char *vname = v == VAL_LEAKY ? "leaky" : "fixed";
    const char *dir = arena_printf(a, "%s/g%u-%s", c->tmp, gi, vname);
    const char *work = arena_printf(a, "%s/work", dir);
    const char *gl = arena_printf(a, "%s/gl", dir);
    const char *home = arena_printf(a, "%s/home", dir);
    const char *tmpd = arena_printf(a, "%s/tmp", dir);
    const char *results = arena_printf(a, "%s/results.jsonl", gl);
    const char *specp = arena_printf(a, "%s/spec.json", gl);
    if (mkdir(dir, 0700) != 0 || mkdir(gl, 0700) != 0 || mkdir(home, 0700) != 0 || mkdir(tmpd, 0700) != 0) {
        r->error = arena_printf(a, "cannot create %s: %s", dir, strerror(errno));
        return;
    }
    char *why = NULL;
    if (val_copy_tree(g->root, work, 512ull << 20, &why) != 0) {
        r->error = arena_strdup(a, why);
        gl_free(why);
        return;
    }
    const char *root_real = val_exec_real(a, g->root);
    const char *work_real = val_exec_real(a, work);
    json_t *files = json_object();
    for (uint32_t fi = 0; fi < g->files.len && !r->error; fi++) {
        uint32_t f = g->files.items[fi];
        ValFile *vf = &c->files[f];
        const char *src = vf->src;
        size_t len = vf->len;
        StrBuf fixed;
        sb_init(&fixed);
        if (v == VAL_FIXED) {
            /* A loop's fixes go in together, and only when every finding on it has one: fixing half
             * (dropping retain_graph=True but not detaching the carried state) breaks the program. */
            const Fix **fx = gl_calloc(c->findings.len + 1, sizeof *fx);
            uint32_t nfx = 0;
            for (uint32_t k = 0; k < c->findings.len; k++) {
                const ValFinding *fd = &c->findings.items[k];
                if (fd->group == gi && fd->file == f && fd->d->fix && fd->loop != UINT32_MAX &&
                    g->loops.items[fd->loop].has_fix)
                    fx[nfx++] = fd->d->fix;
            }
            sb_append(&fixed, "", 0);
            fix_apply(vf->src, vf->len, fx, nfx, &fixed);
            gl_free(fx);
            src = fixed.data, len = fixed.len;
        }
        ValLoopRef *refs = gl_calloc(g->loops.len + 1, sizeof *refs);
        uint32_t *ks = gl_calloc(g->loops.len + 1, sizeof *ks);
        uint32_t nr = 0;
        for (uint32_t l = 0; l < g->loops.len; l++) {
            ValLoop *lp = &g->loops.items[l];
            if (lp->file != f || lp->error) continue;
            refs[nr] = lp->ref, ks[nr] = lp->k;
            /* torch.no_grad() around the loop is the fixed run's fix only */
            refs[nr].no_grad = v == VAL_FIXED && lp->ref.no_grad && lp->has_fix;
            nr++;
        }
        StrBuf ins;
        sb_init(&ins);
        const char *iwhy = NULL;
        if (val_instrument(vf->path, src, len, refs, ks, nr, &ins, &iwhy) != 0) {
            r->error = arena_printf(a, "%s: cannot instrument the %s source: %s", vf->path, vname, iwhy);
        } else {
            const char *served = arena_printf(a, "%s/src%u.py", gl, fi);
            if (val_write_file(served, ins.data ? ins.data : "", ins.len) != 0)
                r->error = arena_printf(a, "cannot write %s: %s", served, strerror(errno));
            const char *real = val_exec_real(a, vf->path);
            const char *rel = real && root_real ? exec__under(root_real, real) : NULL;
            if (rel && work_real) json_object_set_new(files, arena_printf(a, "%s/%s", work_real, rel), json_string(served));
            if (real) json_object_set_new(files, real, json_string(served));
        }
        sb_free(&ins);
        sb_free(&fixed);
        gl_free(refs);
        gl_free(ks);
    }
    if (r->error) {
        json_decref(files);
        return;
    }
    json_t *spec = json_object();
    json_object_set_new(spec, "results", json_string(results));
    json_object_set_new(spec, "iterations", json_integer(c->iterations));
    json_object_set_new(spec, "budget_s", json_real(c->timeout > 4 ? c->timeout - 2.5 : c->timeout * 0.6));
    json_object_set_new(spec, "max_growth", json_integer((json_int_t)c->mem_cap));
    json_object_set_new(spec, "files", files);
    json_t *loops = json_array();
    for (uint32_t l = 0; l < g->loops.len; l++)
        if (!g->loops.items[l].error) json_array_append_new(loops, json_integer(g->loops.items[l].k));
    json_object_set_new(spec, "loops", loops);
    char *spec_text = json_dumps(spec, JSON_INDENT(1));
    json_decref(spec);
    int wrc = spec_text ? val_write_file(specp, spec_text, strlen(spec_text)) : -1;
    free(spec_text);
    if (wrc != 0) {
        r->error = arena_printf(a, "cannot write %s", specp);
        return;
    }
    ValEnvOpts eo = {home, tmpd, c->harness, specp, c->cuda, c->keep_env.items, c->keep_env.len, gpu};
    char **env = val_env_build(&eo);
    ValSandboxOpts so;
    memset(&so, 0, sizeof so);
    so.argv = g->argv;
    so.envp = env;
    so.cwd = work;
    so.timeout_s = c->timeout;
    /* writable: this run's folder (copy, HOME, TMPDIR, results); readable too: --allow-read, the harness */
    const char *rw[2] = {dir, NULL};
    so.rw_paths = rw;
    so.ro_paths = c->allow_read.items;
    so.gpu = c->cuda;
    PollCtx pc;
    memset(&pc, 0, sizeof pc);
    pc.c = c, pc.g = g, pc.r = r, pc.results = results, pc.variant = vname;
    pc.dev = gpu && c->cuda ? atoi(gpu) : -1;
    if (c->nvml) {
        int64_t u = val_nvml_device_used(c->nvml, pc.dev);
        pc.nvml_base = u > 0 ? u : 0;
        r->nvml_base = 0;
    }
    so.poll = exec__poll;
    so.poll_ctx = &pc;
    char *swhy = NULL;
    r->spawn_wall = exec__now();
    if (val_sandbox_run(&so, &r->sb, &swhy) != 0) {
        r->error = arena_strdup(a, swhy);
        gl_free(swhy);
    }
    val_env_free(env);
    if (!c->keep_temp) val_remove_tree(work);
}


/* ---- the workers ---- */

static json_t *exec__str(const char *s) { return s ? json_string(s) : json_null(); }

/* The worker's result for the parent: the sandbox's account of the run. */
static void exec__write_run(const char *path, const ValRunOut *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "error", exec__str(r->error));
    json_object_set_new(o, "exit_code", json_integer(r->sb.exit_code));
    json_object_set_new(o, "term_signal", json_integer(r->sb.term_signal));
    json_object_set_new(o, "timed_out", json_boolean(r->sb.timed_out));
    json_object_set_new(o, "stopped", json_boolean(r->sb.stopped));
    json_object_set_new(o, "wall_s", json_real(r->sb.wall_s));
    json_object_set_new(o, "pid", json_integer(r->sb.pid));
    json_object_set_new(o, "isolation", json_integer(r->sb.isolation));
    json_object_set_new(o, "out_tail", exec__str(r->sb.out_tail));
    json_object_set_new(o, "err_tail", exec__str(r->sb.err_tail));
    json_object_set_new(o, "note", exec__str(r->sb.note));
    json_object_set_new(o, "nvml", json_boolean(r->nvml));
    json_object_set_new(o, "nvml_peak", json_integer(r->nvml_peak));
    json_object_set_new(o, "spawn_wall", json_real(r->spawn_wall));
    json_dump_file(o, path, JSON_COMPACT);
    json_decref(o);
}

static char *exec__dup(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? gl_strdup(s) : NULL;
}

static void exec__read_run(Cli *c, const char *path, ValRunOut *r, int status)
{
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!json_is_object(o)) {
        r->error = arena_printf(&c->arena, "the run's worker ended without a result (status %d): this is a bug in gradleak",
                                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        json_decref(o);
        return;
    }
    const char *e = json_string_value(json_object_get(o, "error"));
    if (e) r->error = arena_strdup(&c->arena, e);
    r->sb.exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
    r->sb.term_signal = (int)json_integer_value(json_object_get(o, "term_signal"));
    r->sb.timed_out = json_is_true(json_object_get(o, "timed_out"));
    r->sb.stopped = json_is_true(json_object_get(o, "stopped"));
    r->sb.wall_s = json_number_value(json_object_get(o, "wall_s"));
    r->sb.pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
    r->sb.isolation = (unsigned)json_integer_value(json_object_get(o, "isolation"));
    r->sb.out_tail = exec__dup(o, "out_tail");
    r->sb.err_tail = exec__dup(o, "err_tail");
    r->sb.note = exec__dup(o, "note");
    r->nvml = json_is_true(json_object_get(o, "nvml"));
    r->nvml_peak = json_integer_value(json_object_get(o, "nvml_peak"));
    r->spawn_wall = json_number_value(json_object_get(o, "spawn_wall"));
    json_decref(o);
}

/* Is the fixed run worth its time: did a loop with fixes grow steadily in the leaky run, or does a
 * finding on one compare peaks (which needs the fixed run whatever the slope)? */
static bool exec__want_fixed(Cli *c, uint32_t gi)
{
    const ValGroup *g = &c->groups.items[gi];
    const ValRunOut *r = &g->run[VAL_LEAKY];
    uint32_t warm = GL_MAX(2u, c->iterations / 5);
    for (uint32_t i = 0; i < c->findings.len; i++) {
        const ValFinding *f = &c->findings.items[i];
        if (f->group != gi || f->loop == UINT32_MAX) continue;
        const ValLoop *lp = &g->loops.items[f->loop];
        if (!lp->has_fix || lp->error || !r->loops || r->loops[lp->k].t.len < warm + 5) continue;
        if (f->measure == VAL_MEASURE_PEAK) return true;
        const char *name;
        ValFit fit = val_fit(val_primary(r, &r->loops[lp->k], &name), warm);
        if (fit.slope >= VAL_FLOOR_BYTES && fit.r2 >= VAL_MIN_R2) return true;
        ValFit host = val_fit(r->loops[lp->k].heap.len && r->loops[lp->k].heap.items[0] > 0 ? &r->loops[lp->k].heap
                                                                                           : &r->loops[lp->k].rss, warm);
        if (f->d->growth == GROWTH_HOST && host.slope >= VAL_HOST_FLOOR_BYTES && host.r2 >= VAL_MIN_R2) return true;
    }
    return false;
}

typedef struct Slot {
    pid_t pid;      /* 0: free */
    uint32_t group;
    ValVariant v;
    double started;
} Slot;

static const char *exec__dir(Cli *c, uint32_t gi, ValVariant v)
{
    return arena_printf(&c->arena, "%s/g%u-%s", c->tmp, gi, v == VAL_LEAKY ? "leaky" : "fixed");
}

/* Samples in a run's results file so far (progress only). */
static uint32_t exec__samples(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[8192];
    ssize_t n;
    uint32_t count = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i + 4 < n; i++) count += !memcmp(buf + i, "{\"k\":", 5);
    close(fd);
    return count;
}

static void exec__draw(Cli *c, const Slot *slots, uint32_t n, double now)
{
    StrBuf sb;
    sb_init(&sb);
    for (uint32_t s = 0; s < n; s++) {
        if (!slots[s].pid) continue;
        const ValGroup *g = &c->groups.items[slots[s].group];
        uint32_t probes = 0;
        for (uint32_t l = 0; l < g->loops.len; l++) probes += !g->loops.items[l].error;
        const char *res = arena_printf(&c->arena, "%s/gl/results.jsonl", exec__dir(c, slots[s].group, slots[s].v));
        uint32_t done = exec__samples(res);
        if (sb.len) sb_puts(&sb, " | ");
        if (g->count > 1) sb_printf(&sb, "findings %u-%u of %u", g->first + 1, g->first + g->count, c->findings.len);
        else sb_printf(&sb, "finding %u of %u", g->first + 1, c->findings.len);
        sb_printf(&sb, ": %s run, iteration %u of %u", slots[s].v == VAL_LEAKY ? "leaky" : "fixed",
                  probes ? GL_MIN(done / probes, c->iterations) : 0, c->iterations);
        if (c->gpus.items[s]) sb_printf(&sb, " (GPU %s)", c->gpus.items[s]);
        sb_printf(&sb, ", %.0f s", now - slots[s].started);
    }
    /* one terminal line: keep it under the usual width */
    if (sb.len > 150) sb.data[150] = 0;
    fprintf(stderr, "\r\033[K%s", sb.data ? sb.data : "");
    fflush(stderr);
    sb_free(&sb);
}

void val_exec_all(Cli *c)
{
    uint32_t n = c->gpus.len ? c->gpus.len : 1;
    Slot *slots = gl_calloc(n, sizeof *slots);
    Array(uint64_t) queue; /* group << 1 | variant */
    array_init(&queue);
    for (uint32_t g = 0; g < c->groups.len; g++) {
        bool any_loop = false;
        for (uint32_t l = 0; l < c->groups.items[g].loops.len; l++) any_loop |= !c->groups.items[g].loops.items[l].error;
        if (any_loop) array_push(&queue, (uint64_t)g << 1 | VAL_LEAKY);
    }
    uint32_t head = 0, running = 0, runs = 0;
    double t0 = exec__now(), last_draw = 0;
    fflush(stdout);
    fflush(stderr);
    while (head < queue.len || running) {
        for (uint32_t s = 0; s < n && head < queue.len; s++) {
            if (slots[s].pid) continue;
            uint32_t gi = (uint32_t)(queue.items[head] >> 1);
            ValVariant v = (ValVariant)(queue.items[head] & 1);
            head++;
            ValGroup *g = &c->groups.items[gi];
            ValRunOut *r = &g->run[v];
            r->attempted = true;
            r->gpu = c->gpus.items[s];
            r->loops = ARENA_NEW_N(&c->arena, ValSeries, g->loops.len ? g->loops.len : 1);
            pid_t session = getpid();
            pid_t pid = fork();
            if (pid == 0) {
                /* the worker: one run, its account in run.json; _exit, never back into the session.
                 * It dies with the session (a SIGKILLed gradleak), and the sandbox's processes with it. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != session) _exit(1);
                c->tty = false;
                exec__run_variant(c, g, gi, v, c->gpus.items[s]);
                const char *dir = exec__dir(c, gi, v);
                exec__write_run(arena_printf(&c->arena, "%s/run.json", dir), r);
                _exit(0);
            }
            if (pid < 0) {
                r->error = arena_printf(&c->arena, "cannot start a worker: %s", strerror(errno));
                continue;
            }
            slots[s].pid = pid, slots[s].group = gi, slots[s].v = v, slots[s].started = exec__now();
            running++, runs++;
        }
        int status = 0;
        pid_t done = waitpid(-1, &status, WNOHANG);
        if (done <= 0) {
            if (done < 0 && errno != EINTR && errno != ECHILD) break;
            if (done < 0 && errno == ECHILD) running = 0;
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            double now = exec__now();
            if (c->tty && now - last_draw >= 0.2) last_draw = now, exec__draw(c, slots, n, now);
            continue;
        }
        for (uint32_t s = 0; s < n; s++) {
            if (slots[s].pid != done) continue;
            slots[s].pid = 0;
            running--;
            uint32_t gi = slots[s].group;
            ValVariant v = slots[s].v;
            ValGroup *g = &c->groups.items[gi];
            const char *dir = exec__dir(c, gi, v);
            exec__read_run(c, arena_printf(&c->arena, "%s/run.json", dir), &g->run[v], status);
            if (!g->run[v].error) val_results_read(arena_printf(&c->arena, "%s/gl/results.jsonl", dir), &c->arena, &g->run[v], g->loops.len);
            if (v == VAL_LEAKY) {
                bool any_fix = false;
                for (uint32_t l = 0; l < g->loops.len; l++) any_fix |= g->loops.items[l].has_fix && !g->loops.items[l].error;
                if (any_fix && exec__want_fixed(c, gi)) array_push(&queue, (uint64_t)gi << 1 | VAL_FIXED);
            }
            g->seconds = g->run[VAL_LEAKY].sb.wall_s + g->run[VAL_FIXED].sb.wall_s;
        }
    }
    c->wall_s = exec__now() - t0;
    if (c->tty) fprintf(stderr, "\r\033[K");
    if (runs) {
        StrBuf on;
        sb_init(&on);
        if (n > 1 || c->gpus.items[0]) {
            sb_printf(&on, " on %u GPU%s (", n, n == 1 ? "" : "s");
            for (uint32_t s = 0; s < n; s++) sb_printf(&on, "%s%s", s ? "," : "", c->gpus.items[s] ? c->gpus.items[s] : "-");
            sb_puts(&on, ")");
        }
        fprintf(stderr, "gradleak validate: %u run%s of %u program%s%s in %.1f s\n", runs, runs == 1 ? "" : "s",
                c->groups.len, c->groups.len == 1 ? "" : "s", on.data ? on.data : "", c->wall_s);
        sb_free(&on);
    }
    array_free(&queue);
    gl_free(slots);
}
