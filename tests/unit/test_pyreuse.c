/* Differential test of the LSP's statement reuse (src/front/py/py_chunk.c): thousands of random
 * edits to a training file (characters, lines, imports, definitions, syntax errors, non-ASCII text,
 * CR line ends, moved and duplicated blocks), and after each one the IR that py_lower_reuse builds
 * from its kept tree and kept statements must equal a fresh py_lower of the same text in every
 * field: ops, spans (bytes, rows, columns), variables, loops, functions, classes, comments, syntax
 * error spans. The same edits also go through LintDoc, whose findings must equal a fresh lint's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "base/strbuf.h"
#include "engine/engine.h"
#include "front/py/py.h"

/* ---- an exhaustive dump of an IrModule ---- */

static void dump_span(StrBuf *sb, Span s)
{
    sb_printf(sb, "[%u-%u %u:%u-%u:%u]", s.start, s.end, s.row, s.col, s.end_row, s.end_col);
}

static void dump_str(StrBuf *sb, const char *s) { sb_printf(sb, s ? "'%s'" : "-", s); }

static char *ir_dump_all(const IrModule *m)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "funcs %u classes %u nodes %u\n", m->funcs.len, m->classes.len, m->n_nodes);
    for (uint32_t i = 0; i < m->error_spans.len; i++) sb_puts(&sb, "error "), dump_span(&sb, m->error_spans.items[i]), sb_puts(&sb, "\n");
    for (uint32_t i = 0; i < m->comments.len; i++) sb_puts(&sb, "comment "), dump_span(&sb, m->comments.items[i]), sb_puts(&sb, "\n");
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        sb_printf(&sb, "func %u ", fi);
        dump_str(&sb, f->name), sb_puts(&sb, " "), dump_str(&sb, f->qualname);
        sb_printf(&sb, " index %u parent %u cls %u mode %u async %u lambda %u nparams %u ", f->index, f->parent, f->cls,
                  f->base_mode, f->is_async, f->is_lambda, f->nparams);
        dump_span(&sb, f->span);
        sb_puts(&sb, "\n");
        for (uint32_t i = 0; i < f->decorators.len; i++) sb_puts(&sb, "  decorator "), dump_str(&sb, f->decorators.items[i]), sb_puts(&sb, "\n");
        uint32_t plain = 0;
        for (uint32_t i = 0; i < f->vars.len; i++) {
            const IrVar *v = &f->vars.items[i];
            sb_printf(&sb, "  var %u ", i);
            dump_str(&sb, v->name);
            sb_printf(&sb, " base %u global %u param %u", v->base, v->is_global, v->is_param);
            if (v->base == IR_NONE) {
                plain++;
                sb_printf(&sb, " index %u", strmap_get(&f->var_index, v->name, strlen(v->name)));
            }
            sb_puts(&sb, "\n");
        }
        sb_printf(&sb, "  var_index %u of %u plain\n", f->var_index.len, plain);
        for (uint32_t i = 0; i < f->loops.len; i++) {
            const IrLoop *l = &f->loops.items[i];
            sb_printf(&sb, "  loop %u op %u end %u parent %u iter %u while %u kind %u %u%u%u%u%u fb %u ", i, l->op, l->end,
                      l->parent, l->iter, l->is_while, l->kind, l->has_backward, l->has_opt_step, l->has_model_call,
                      l->has_feedback, l->in_module_method, l->feedback_call);
            dump_span(&sb, l->span);
            sb_puts(&sb, "\n");
        }
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            sb_printf(&sb, "  %%%u %s mode %u flags %u pad %u aux %u a %u b %u c %u var %u args %u+%u ", i,
                      ir_op_names[o->kind], o->mode, o->flags, o->pad, o->aux, o->a, o->b, o->c, o->var, o->args,
                      o->nargs);
            dump_str(&sb, o->name), sb_puts(&sb, " "), dump_str(&sb, o->qual), sb_puts(&sb, " ");
            dump_span(&sb, o->span);
            sb_puts(&sb, "\n");
        }
        for (uint32_t i = 0; i < f->args.len; i++) {
            sb_printf(&sb, "  arg %u %%%u ", i, f->args.items[i]);
            dump_str(&sb, f->kw.items[i]);
            sb_puts(&sb, "\n");
        }
        if (f->kw.len != f->args.len) sb_printf(&sb, "  kw %u\n", f->kw.len);
    }
    for (uint32_t ci = 0; ci < m->classes.len; ci++) {
        const IrClass *c = m->classes.items[ci];
        sb_printf(&sb, "class %u ", ci);
        dump_str(&sb, c->name);
        sb_printf(&sb, " index %u init %u forward %u module %u ", c->index, c->init, c->forward, c->is_module);
        dump_span(&sb, c->span);
        for (uint32_t i = 0; i < c->bases.len; i++) sb_puts(&sb, " base "), dump_str(&sb, c->bases.items[i]);
        for (uint32_t i = 0; i < c->methods.len; i++) sb_printf(&sb, " method %u", c->methods.items[i]);
        sb_puts(&sb, "\n");
    }
    return sb_take(&sb);
}

/* The first line where a and b differ, with what each says there. */
static void report_diff(const char *what, const char *a, const char *b)
{
    uint32_t line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') line++, la = a + 1, lb = b + 1;
        a++, b++;
    }
    print_error("%s: line %u of the dumps differs\n  reused: %.*s\n  fresh:  %.*s\n", what, line,
                (int)(strchr(la, '\n') ? strchr(la, '\n') - la : (long)strlen(la)), la,
                (int)(strchr(lb, '\n') ? strchr(lb, '\n') - lb : (long)strlen(lb)), lb);
}

/* ---- the document and its random edits ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return n ? (uint32_t)(rng_state % n) : 0;
}

static const char *const snippets[] = {
    "import numpy as np\n",
    "from torch import nn\n",
    "import torch.nn as nn\n",
    "import torch\n",
    "from .utils import helper as step\n",
    "torch = None\n",
    "nn = torch\n",
    "def helper(x):\n    import torch\n    return x * 2\n",
    "class M(nn.Module):\n    hidden = None\n    def forward(self, x):\n        self.h = x\n        return x\n",
    "class Trainer:\n    def step(self, loss):\n        self.total += loss\n",
    "x = (\n",
    ")\n",
    "global total\n",
    "for i in range(3):\n    total += loss\n",
    "for x, y in loader:\n    out = model(x)\n    loss = out.sum()\n    loss.backward()\n    losses.append(loss)\n",
    "    pass\n",
    "if True:\n",
    "else:\n",
    "@torch.no_grad()\n",
    "@staticmethod\n",
    "f = lambda: 0\n",
    "x = 1; y = 2\n",
    "# comment é\n",
    "# noqa: GL101\n",
    "'''doc\n",
    "'''\n",
    "async def f():\n    await g()\n",
    "with torch.no_grad():\n    y = model(x)\n",
    "with torch.set_grad_enabled(train) as g:\n    y = model(x)\n",
    "del x\n",
    "try:\n    pass\nexcept E as e:\n    oom = True\nfinally:\n    pass\n",
    "match x:\n    case 1:\n        pass\n",
    "while (n := n - 1):\n    break\n",
    "self.a.b = model(x)\n",
    "total += loss\n",
    "h = [p for p in model.parameters() if p.grad]\n",
    "s = \"é😀\"; x.cuda()\n",
    "\r\n",
    "\r",
    "\t",
    "\xff\n", /* not UTF-8 */
};

static const char *const chars[] = {"a", "x", "(", ")", ":", "\n", " ", "    ", "#", "\"", "'", ",", ".", "=",
                                    "+", "é", "😀", "\t", "\\", "[", "]", "@", "0"};

typedef struct Doc {
    char *text;
    size_t len;
} Doc;

/* The kept trees: A reuses statements (the LSP), B only the syntax tree (the LSP before reuse), both
 * parsed incrementally; the LintDoc is A's path through the engine. */
typedef struct Kept {
    PyTree *a, *b;
    LintDoc *ld;
} Kept;

/* Edits made, for undo (typing is mostly typing and taking it back). */
typedef struct Undo {
    uint32_t start, n; /* [start, start + n) replaced removed */
    char *removed;
    size_t removed_len;
} Undo;
static Undo undo_stack[4096];
static uint32_t n_undo;

static void undo_clear(void)
{
    while (n_undo) free(undo_stack[--n_undo].removed);
}

static void doc_apply(Doc *d, Kept *k, uint32_t start, uint32_t end, const char *ins, size_t n, bool record)
{
    if (start > d->len) start = (uint32_t)d->len;
    if (end > d->len) end = (uint32_t)d->len;
    if (end < start) end = start;
    if (record) {
        if (n_undo == sizeof undo_stack / sizeof undo_stack[0]) undo_clear();
        Undo u = {start, (uint32_t)n, strndup(d->text + start, end - start), end - start};
        undo_stack[n_undo++] = u;
    }
    py_tree_edit(k->a, d->text, d->len, start, end, ins, n);
    py_tree_edit(k->b, d->text, d->len, start, end, ins, n);
    lint_doc_edit(k->ld, d->text, d->len, start, end, ins, n);
    size_t len = d->len - (end - start) + n;
    char *t = malloc(len + 1);
    memcpy(t, d->text, start);
    memcpy(t + start, ins, n);
    memcpy(t + start + n, d->text + end, d->len - end);
    t[len] = 0;
    free(d->text);
    d->text = t, d->len = len;
}

static void doc_replace(Doc *d, Kept *k, uint32_t start, uint32_t end, const char *ins, size_t n)
{
    doc_apply(d, k, start, end, ins, n, true);
}

static void doc_undo(Doc *d, Kept *k)
{
    Undo u = undo_stack[--n_undo];
    doc_apply(d, k, u.start, u.start + u.n, u.removed, u.removed_len, false);
    free(u.removed);
}

/* Byte offset of the start of line k (clamped to the end). */
static uint32_t line_start(const Doc *d, uint32_t k)
{
    uint32_t off = 0;
    while (k-- > 0) {
        const char *nl = memchr(d->text + off, '\n', d->len - off);
        if (!nl) return (uint32_t)d->len;
        off = (uint32_t)(nl - d->text) + 1;
    }
    return off;
}

static uint32_t line_count(const Doc *d)
{
    uint32_t n = 1;
    for (size_t i = 0; i < d->len; i++) n += d->text[i] == '\n';
    return n;
}

/* One random edit, as typing and editing do it. */
static void random_edit(Doc *d, Kept *kt)
{
    uint32_t lines = line_count(d);
    uint32_t kind = rnd(100);
    if (kind < 30) { /* a character */
        const char *c = chars[rnd(sizeof chars / sizeof chars[0])];
        uint32_t at = rnd((uint32_t)d->len + 1);
        doc_replace(d, kt, at, at, c, strlen(c));
    } else if (kind < 50) { /* delete a few bytes (may split a UTF-8 sequence) */
        uint32_t at = rnd((uint32_t)d->len + 1);
        doc_replace(d, kt, at, at + 1 + rnd(8), "", 0);
    } else if (kind < 68) { /* a snippet at a line start, or indented */
        const char *s = snippets[rnd(sizeof snippets / sizeof snippets[0])];
        uint32_t at = line_start(d, rnd(lines));
        if (rnd(4) == 0) doc_replace(d, kt, at, at, "    ", 4), at += 4;
        doc_replace(d, kt, at, at, s, strlen(s));
    } else if (kind < 78) { /* delete whole lines */
        uint32_t k = rnd(lines);
        doc_replace(d, kt, line_start(d, k), line_start(d, k + 1 + rnd(4)), "", 0);
    } else if (kind < 86) { /* move a block of lines */
        uint32_t k = rnd(lines), n = 1 + rnd(30);
        uint32_t s = line_start(d, k), e = line_start(d, k + n);
        char *block = strndup(d->text + s, e - s);
        doc_replace(d, kt, s, e, "", 0);
        uint32_t to = line_start(d, rnd(line_count(d)));
        doc_replace(d, kt, to, to, block, strlen(block));
        free(block);
    } else if (kind < 92) { /* duplicate a block of lines */
        uint32_t k = rnd(lines), n = 1 + rnd(30);
        uint32_t s = line_start(d, k), e = line_start(d, k + n);
        char *block = strndup(d->text + s, e - s);
        doc_replace(d, kt, e, e, block, strlen(block));
        free(block);
    } else if (kind < 97) { /* indent or dedent a line */
        uint32_t at = line_start(d, rnd(lines));
        if (rnd(2) && d->len - at >= 4 && !memcmp(d->text + at, "    ", 4)) doc_replace(d, kt, at, at + 4, "", 0);
        else doc_replace(d, kt, at, at, "    ", 4);
    } else { /* a line ending changed */
        uint32_t at = line_start(d, 1 + rnd(lines));
        if (at > 0 && at <= d->len) doc_replace(d, kt, at - 1, at, rnd(2) ? "\r\n" : "\n\n", 2);
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, fp);
    buf[*len] = 0;
    fclose(fp);
    return buf;
}

static const char *const extra_src =
    "import torch\n"
    "from torch import nn\n"
    "x = 1; y = 2\n"
    "total = 0\n"
    "class Model(nn.Module):\n"
    "    size = 4\n"
    "    '''doc'''\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.rnn = nn.LSTM(4, 4)\n"
    "        self.hidden = None\n"
    "    @torch.no_grad()\n"
    "    def forward(self, x):  # é😀\n"
    "        out, self.hidden = self.rnn(x, self.hidden)\n"
    "        return out\n"
    "    class Inner:\n"
    "        pass\n"
    "model = Model()\n"
    "for step, (x, y) in enumerate(loader):\n"
    "    with torch.set_grad_enabled(True):\n"
    "        loss = model(x).sum()\n"
    "        if step % 10 == 0:\n"
    "            print(loss)\n"
    "        elif step == 3:\n"
    "            break\n"
    "    total += loss\n"
    "    try:\n"
    "        loss.backward()\n"
    "    except RuntimeError as e:\n"
    "        oom = True\n"
    "model.hidden.state = total\n"
    "def outer(a, b=2, *args, c: torch.Tensor = None, **kw):\n"
    "    global total\n"
    "    def inner():\n"
    "        nonlocal a\n"
    "        return [x for x in a if x]\n"
    "    return inner\n";

/* The base document: the example training scripts (as the benchmark builds its file) and a block
 * with the constructs the lowering treats specially. */
static Doc base_doc(void)
{
    static const char *const files[] = {"fixtures/examples/train.py", "fixtures/examples/train_bptt.py",
                                        "fixtures/examples/charlm/model.py", "fixtures/examples/charlm/evaluate.py"};
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t n = 0;
        char *t = slurp(files[i], &n);
        if (!t) fail_msg("cannot read %s (run from the repository root)", files[i]);
        sb_append(&sb, t, n);
        sb_puts(&sb, "\n");
        free(t);
        if (i == 1) sb_puts(&sb, extra_src);
    }
    Doc d = {NULL, sb.len};
    d.text = malloc(sb.len + 1);
    memcpy(d.text, sb.data, sb.len + 1);
    sb_free(&sb);
    return d;
}

static char *diag_dump(const LintResult *r)
{
    StrBuf sb;
    sb_init(&sb);
    for (uint32_t i = 0; i < r->diags.len; i++) {
        const Diag *d = &r->diags.items[i];
        sb_printf(&sb, "%d [%u-%u %u:%u-%u:%u] %s\n", d->rule, d->span.start, d->span.end, d->span.row, d->span.col,
                  d->span.end_row, d->span.end_col, d->message);
    }
    sb_printf(&sb, "notes %s\n", r->notes ? r->notes : "-");
    return sb_take(&sb);
}

/* One lowering, kept alive for comparison: a compact binary key of every field (fast to compare),
 * and the module itself for a readable dump when keys differ. */
typedef struct Lowered {
    Arena arena;
    IrModule m;
    StrBuf key;
} Lowered;

static void key_u32s(StrBuf *k, const uint32_t *v, size_t n) { sb_append(k, (const char *)v, n * sizeof *v); }

static void key_str(StrBuf *k, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
    key_u32s(k, &n, 1);
    if (s) sb_append(k, s, n);
}

static void key_span(StrBuf *k, Span s)
{
    uint32_t v[6] = {s.start, s.end, s.row, s.col, s.end_row, s.end_col};
    key_u32s(k, v, 6);
}

static void ir_key(const IrModule *m, StrBuf *k)
{
    uint32_t hdr[5] = {m->funcs.len, m->classes.len, m->n_nodes, m->error_spans.len, m->comments.len};
    key_u32s(k, hdr, 5);
    for (uint32_t i = 0; i < m->error_spans.len; i++) key_span(k, m->error_spans.items[i]);
    for (uint32_t i = 0; i < m->comments.len; i++) key_span(k, m->comments.items[i]);
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        key_str(k, f->name), key_str(k, f->qualname);
        uint32_t fh[13] = {f->index, f->parent, f->cls, f->base_mode, f->is_async, f->is_lambda, f->nparams,
                           f->ops.len, f->args.len, f->kw.len, f->vars.len, f->loops.len, f->decorators.len};
        key_u32s(k, fh, 13);
        key_span(k, f->span);
        for (uint32_t i = 0; i < f->decorators.len; i++) key_str(k, f->decorators.items[i]);
        uint32_t plain = 0;
        for (uint32_t i = 0; i < f->vars.len; i++) {
            const IrVar *v = &f->vars.items[i];
            key_str(k, v->name);
            uint32_t vh[4] = {v->base, v->is_global, v->is_param, 0};
            if (v->base == IR_NONE) plain++, vh[3] = strmap_get(&f->var_index, v->name, strlen(v->name));
            key_u32s(k, vh, 4);
        }
        uint32_t vi[2] = {f->var_index.len, plain};
        key_u32s(k, vi, 2);
        for (uint32_t i = 0; i < f->loops.len; i++) {
            const IrLoop *l = &f->loops.items[i];
            uint32_t lh[12] = {l->op, l->end, l->parent, l->iter, l->is_while, l->kind, l->has_backward,
                               l->has_opt_step, l->has_model_call, l->has_feedback, l->in_module_method, l->feedback_call};
            key_u32s(k, lh, 12);
            key_span(k, l->span);
        }
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            uint32_t oh[11] = {o->kind, o->mode, o->flags, o->pad, o->aux, o->a, o->b, o->c, o->var, o->args, o->nargs};
            key_u32s(k, oh, 11);
            key_str(k, o->name), key_str(k, o->qual);
            key_span(k, o->span);
        }
        key_u32s(k, f->args.items, f->args.len);
        for (uint32_t i = 0; i < f->kw.len; i++) key_str(k, f->kw.items[i]);
    }
    for (uint32_t ci = 0; ci < m->classes.len; ci++) {
        const IrClass *c = m->classes.items[ci];
        key_str(k, c->name);
        uint32_t ch[6] = {c->index, c->init, c->forward, c->is_module, c->bases.len, c->methods.len};
        key_u32s(k, ch, 6);
        key_span(k, c->span);
        for (uint32_t i = 0; i < c->bases.len; i++) key_str(k, c->bases.items[i]);
        key_u32s(k, c->methods.items, c->methods.len);
    }
}

/* Lowers d through *t (py_lower_reuse: the tree and statements kept from the last call), or afresh
 * when t is NULL. */
static Lowered *lowered_new(const Doc *d, PyTree **t, PyParseStats *st)
{
    Lowered *l = calloc(1, sizeof *l);
    arena_init(&l->arena);
    l->m.arena = &l->arena, l->m.path = "t.py", l->m.src = d->text, l->m.len = d->len;
    assert_int_equal(t ? py_lower_reuse(&l->m, t, 10000000, st) : py_lower(&l->m, 10000000, st), 0);
    sb_init(&l->key);
    ir_key(&l->m, &l->key);
    return l;
}

/* ir_op_loop (a binary search over the loops, then up the parents) against its definition: the
 * last loop, in source order, whose body holds the op. Broken and reused code included. */
static void expect_op_loop(const IrModule *m, uint32_t edit)
{
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        for (uint32_t op = 0; op < f->ops.len; op++) {
            uint32_t want = IR_NONE;
            for (uint32_t l = 0; l < f->loops.len; l++)
                if (ir_loop_contains(f, l, op)) want = l;
            if (ir_op_loop(f, op) != want) {
                print_message("edit %u: %s op %u: ir_op_loop %u, expected %u\n", edit, f->qualname ? f->qualname : "?",
                              op, ir_op_loop(f, op), want);
                fail();
            }
        }
    }
}

static void lowered_free(Lowered *l)
{
    ir_module_free(&l->m);
    arena_free(&l->arena);
    sb_free(&l->key);
    free(l);
}

static bool lowered_same(const Lowered *a, const Lowered *b)
{
    return a->key.len == b->key.len && !memcmp(a->key.data, b->key.data, a->key.len);
}

static void expect_same(const char *what, uint32_t edit, const Doc *d, const Lowered *got, const Lowered *want)
{
    if (lowered_same(got, want)) return;
    char title[128];
    snprintf(title, sizeof title, "%s, after edit %u", what, edit);
    char *a = ir_dump_all(&got->m), *b = ir_dump_all(&want->m);
    report_diff(title, a, b);
    free(a), free(b);
    FILE *fp = fopen("build/pyreuse-fail.py", "wb");
    if (fp) fwrite(d->text, 1, d->len, fp), fclose(fp);
    fail_msg("%s: the IRs differ after edit %u (the text is in build/pyreuse-fail.py)", what, edit);
}

/* After each edit:
 *   A (incremental parse, statements reused) == B (incremental parse, all lowered): reuse changes
 *     nothing, whatever tree the incremental parse made, syntax errors included;
 *   C (fresh parse, statements reused) == F (py_lower): the same against the CLI's own path;
 *   A == F whenever the text has no syntax error. With syntax errors, tree-sitter 0.20.7's error
 *   recovery in an incremental parse may build another tree than a fresh parse does (an unclosed
 *   triple quote before a function: the incremental tree keeps the function's body): counted. */
static void reuse_equals_fresh(void **state)
{
    (void)state;
#ifdef __SANITIZE_ADDRESS__
    uint32_t n_edits = 300; /* the sanitizer build is ~5x slower; the release build runs them all */
#else
    uint32_t n_edits = 1000;
#endif
    if (getenv("GRADLEAK_VG_LOGS")) n_edits = 100; /* under valgrind (tests/run --valgrind) */
    const char *env = getenv("GL_REUSE_EDITS");
    if (env && atoi(env) > 0) n_edits = (uint32_t)atoi(env);
    rng_state = 0x5DEECE66Du;
    Doc d = base_doc();
    Kept k = {py_tree_new(true), py_tree_new(false), lint_doc_new()};
    PyTree *c = py_tree_new(true);
    LintOptions o;
    lint_options_default(&o);
    uint64_t reused = 0, lowered = 0, reused_c = 0;
    uint32_t findings = 0, clean = 0, broken = 0, diverged = 0;
    bool broken_now = false;
    for (uint32_t i = 0; i <= n_edits; i++) {
        if (i && i % 250 == 0) {
            undo_clear();
            /* back to the base document in one edit, as a full sync would (the kept statements stay) */
            Doc b = base_doc();
            if (rnd(2)) {
                doc_replace(&d, &k, 0, (uint32_t)d.len, b.text, b.len);
            } else {
                py_tree_reset(k.a), py_tree_reset(k.b), lint_doc_reset(k.ld);
                free(d.text);
                d.text = strdup(b.text), d.len = b.len;
            }
            free(b.text);
        } else if (i && n_undo && rnd(100) < (broken_now ? 75 : 30)) {
            /* mostly back out of a syntax error, as typing does */
            doc_undo(&d, &k);
        } else if (i) {
            random_edit(&d, &k);
        }
        PyParseStats st;
        Lowered *a = lowered_new(&d, &k.a, &st);
        Lowered *b = lowered_new(&d, &k.b, NULL);
        Lowered *f = lowered_new(&d, NULL, NULL);
        uint32_t errors = f->m.error_spans.len;
        expect_op_loop(&a->m, i);
        expect_op_loop(&f->m, i);
        reused += st.chunks_reused, lowered += st.chunks_lowered;
        expect_same("incremental parse: reused (left), all lowered (right)", i, &d, a, b);
        if (i % 3 == 0) {
            /* (every third edit: a fresh parse of the whole text is the slow part) */
            PyParseStats stc;
            py_tree_reset(c);
            Lowered *cd = lowered_new(&d, &c, &stc);
            reused_c += stc.chunks_reused;
            expect_same("fresh parse: reused (left), py_lower (right)", i, &d, cd, f);
            lowered_free(cd);
        }
        broken_now = errors != 0;
        if (!errors) {
            expect_same("no syntax error: incremental and reused (left), py_lower (right)", i, &d, a, f);
            clean++;
        } else {
            broken++;
            diverged += !lowered_same(a, f);
        }
        lowered_free(a), lowered_free(b), lowered_free(f);
        if (i % 4 == 0) {
            /* the whole lint, through the engine's LintDoc (kept tree and statements) */
            LintResult r1, r2;
            assert_int_equal(engine_lint_doc(k.ld, "t.py", d.text, d.len, LANG_PYTHON, &o, &r1), 0);
            assert_int_equal(engine_lint("t.py", d.text, d.len, LANG_PYTHON, &o, &r2), 0);
            if (!r2.syntax_error) {
                char *a1 = diag_dump(&r1), *a2 = diag_dump(&r2);
                if (strcmp(a1, a2) != 0) report_diff("findings", a1, a2);
                assert_string_equal(a1, a2);
                findings += r2.diags.len;
                free(a1), free(a2);
            }
            lint_result_free(&r1), lint_result_free(&r2);
        }
    }
    print_message("%u edits (%u without syntax errors): %llu statements copied, %llu lowered (fresh parse: %llu "
                  "copied); %u findings compared; the incremental parse made another tree than a fresh one after %u "
                  "of the %u edits with syntax errors\n",
                  n_edits, clean, (unsigned long long)reused, (unsigned long long)lowered,
                  (unsigned long long)reused_c, findings, diverged, broken);
    /* the test means something only if most statements were reused, and on both kinds of text */
    assert_true(reused > 4 * lowered);
    assert_true(clean > n_edits / 5 && broken > n_edits / 5);
    assert_true(findings > n_edits / 3);
    py_tree_free(k.a), py_tree_free(k.b), py_tree_free(c);
    lint_doc_free(k.ld);
    free(d.text);
    undo_clear();
}

/* A statement is reused only where what it read holds: the same function text under other imports. */
static void reuse_follows_imports(void **state)
{
    (void)state;
    const char *v1 = "import torch\n\ndef f(x):\n    return torch.cuda.empty_cache()\n";
    const char *v2 = "import numpy as torch\n\ndef f(x):\n    return torch.cuda.empty_cache()\n";
    PyTree *tree = NULL;
    const char *texts[] = {v1, v2, v1, v1};
    uint32_t want_reused[] = {0, 0, 0, 2};
    for (int i = 0; i < 4; i++) {
        Arena a;
        arena_init(&a);
        IrModule m;
        memset(&m, 0, sizeof m);
        m.arena = &a, m.path = "t.py", m.src = texts[i], m.len = strlen(texts[i]);
        py_tree_reset(tree);
        PyParseStats st;
        assert_int_equal(py_lower_reuse(&m, &tree, 10000000, &st), 0);
        /* v1 after v2: the import statement is new again, and so f (it read `torch`) */
        assert_int_equal(st.chunks_reused, want_reused[i]);
        const IrFunc *f = m.funcs.items[1];
        bool found = false;
        for (uint32_t k = 0; k < f->ops.len; k++)
            if (f->ops.items[k].qual && !strcmp(f->ops.items[k].qual, i == 1 ? "numpy.cuda.empty_cache" : "torch.cuda.empty_cache"))
                found = true;
        assert_true(found);
        ir_module_free(&m);
        arena_free(&a);
    }
    py_tree_free(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reuse_follows_imports),
        cmocka_unit_test(reuse_equals_fresh),
    };
    return cmocka_run_group_tests_name("python statement reuse", tests, NULL, NULL);
}
