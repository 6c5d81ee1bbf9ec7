/* Building fixes in rules: multi-edit fixes, removing a keyword argument, deleting a statement and
 * wrapping statements in a block with exact re-indentation. Works on the source bytes, never on
 * the syntax tree; every edit keeps the file's own line endings and indentation characters. */
#include "rules/rule.h"

/* Fixes whose edits are the same text in C++ (rules.def's RF_FIX_CXX: GL101/GL102 append
 * `.detach()` / `.item()`, GL201 inserts `x = ` before a call). Every other fix writes Python
 * (`with torch.no_grad():`, `pass`, keyword arguments, tuples) and is not offered on C++ files. */
static bool rule__fix_speaks_cxx(RuleId r)
{
    return (rule_info(r)->flags & RF_FIX_CXX) != 0;
}

void rule_fix_edits(RuleCtx *c, Diag *d, FixSafety safety, const char *msg, const Edit *edits, uint32_t n)
{
    if (!n) return;
    if (c->cxx && !rule__fix_speaks_cxx(c->rule)) return;
    Fix *fx = ARENA_NEW(c->arena, Fix);
    fx->message = arena_strdup(c->arena, rule_say(c, msg));
    fx->safety = safety;
    fx->edits = ARENA_NEW_N(c->arena, Edit, n);
    for (uint32_t k = 0; k < n; k++) {
        fx->edits[k] = edits[k];
        fx->edits[k].text = arena_strdup(c->arena, edits[k].text ? rule_say(c, edits[k].text) : "");
    }
    fx->n_edits = n;
    d->fix = fx;
}

static bool rule__is_bom(const char *src, size_t len)
{
    return len >= 3 && (unsigned char)src[0] == 0xEF && (unsigned char)src[1] == 0xBB && (unsigned char)src[2] == 0xBF;
}

uint32_t rule_line_start(RuleCtx *c, uint32_t off)
{
    const char *src = c->m->src;
    while (off > 0 && src[off - 1] != '\n' && src[off - 1] != '\r') off--;
    if (off == 0 && rule__is_bom(src, c->m->len)) off = 3;
    return off;
}

/* End of the line holding off (the offset of its terminator, or len). */
static uint32_t rule__line_end(const char *src, size_t len, uint32_t off)
{
    while (off < len && src[off] != '\n' && src[off] != '\r') off++;
    return off;
}

/* Length of the line terminator at off (0 at the end of the file). */
static uint32_t rule__eol_len(const char *src, size_t len, uint32_t off)
{
    if (off >= len) return 0;
    if (src[off] == '\r') return off + 1 < len && src[off + 1] == '\n' ? 2 : 1;
    return src[off] == '\n' ? 1 : 0;
}

const char *rule_eol(RuleCtx *c, uint32_t off)
{
    const char *src = c->m->src;
    size_t len = c->m->len;
    uint32_t e = rule__line_end(src, len, off);
    if (e == len) e = rule__line_end(src, len, 0); /* the last line has none: use the first line's */
    if (e >= len) return "\n";
    if (src[e] == '\r') return e + 1 < len && src[e + 1] == '\n' ? "\r\n" : "\r";
    return "\n";
}

/* ---- Lines with what the tokenizer knows at their start ---- */

typedef struct SrcLine {
    uint32_t start, end, next; /* content [start, end); next = start of the following line */
    uint32_t indent;           /* bytes of leading spaces and tabs */
    bool logical;              /* starts a logical line (not inside a string, brackets or after `\`) */
    bool in_string;            /* starts inside a string literal (its bytes are the literal's) */
    bool blank;                /* only whitespace, or only a comment */
} SrcLine;

typedef struct LineScan {
    const char *src;
    uint32_t len, pos;
    char quote;  /* the open string's quote, 0 in code */
    bool triple; /* the open string is triple-quoted */
    int depth;   /* open brackets */
    bool cont;   /* the previous line ended with a backslash continuation */
} LineScan;

/* The next line from s->pos, with the state at its start; false at the end of the text. The scan
 * must start at the start of a logical line. */
static bool linescan_next(LineScan *s, SrcLine *l)
{
    if (s->pos >= s->len) return false;
    const char *src = s->src;
    uint32_t i = s->pos;
    l->start = i;
    l->logical = !s->quote && s->depth == 0 && !s->cont;
    l->in_string = s->quote != 0;
    l->end = rule__line_end(src, s->len, i);
    l->next = l->end + rule__eol_len(src, s->len, l->end);
    uint32_t k = i;
    while (k < l->end && (src[k] == ' ' || src[k] == '\t' || src[k] == '\f')) k++;
    l->indent = k - i;
    l->blank = !s->quote && (k == l->end || src[k] == '#');
    s->cont = false;
    for (uint32_t p = i; p < l->end; p++) {
        char ch = src[p];
        if (s->quote) {
            if (ch == '\\') {
                p++; /* the escaped byte; a backslash before the line end continues the string */
                if (p >= l->end) break;
                continue;
            }
            if (ch != s->quote) continue;
            if (!s->triple) {
                s->quote = 0;
            } else if (p + 2 < s->len && src[p + 1] == ch && src[p + 2] == ch) {
                s->quote = 0;
                p += 2;
            }
            continue;
        }
        if (ch == '#') break;
        if (ch == '\\' && p + 1 == l->end) {
            s->cont = true;
            break;
        }
        if (ch == '\'' || ch == '"') {
            s->quote = ch;
            s->triple = p + 2 < l->end && src[p + 1] == ch && src[p + 2] == ch;
            if (s->triple) p += 2;
        } else if (ch == '(' || ch == '[' || ch == '{') {
            s->depth++;
        } else if ((ch == ')' || ch == ']' || ch == '}') && s->depth > 0) {
            s->depth--;
        }
    }
    /* a one-quote string ends at the line end (continued only by a backslash, handled above) */
    if (s->quote && !s->triple && !(l->end > i && src[l->end - 1] == '\\')) s->quote = 0;
    s->pos = l->next;
    return true;
}

/* Every line of the file with its tokenizer state, scanned once per lint and shared by the rules
 * (a fix for each of many findings must not rescan the file from the top). */
struct RuleLines {
    SrcLine *items;
    uint32_t n;
};

static const struct RuleLines *rule__lines(RuleCtx *c)
{
    if (c->lines) return c->lines;
    struct RuleLines *t = ARENA_NEW(c->scratch, struct RuleLines);
    Array(SrcLine) a;
    array_init(&a);
    LineScan s = {c->m->src, (uint32_t)c->m->len, rule__is_bom(c->m->src, c->m->len) ? 3u : 0u, 0, false, 0, false};
    SrcLine l;
    while (linescan_next(&s, &l)) array_push(&a, l);
    t->n = a.len;
    t->items = ARENA_NEW_N(c->scratch, SrcLine, a.len ? a.len : 1);
    if (a.len) memcpy(t->items, a.items, a.len * sizeof(SrcLine));
    array_free(&a);
    c->lines = t;
    return t;
}

/* Index of the line starting at offset ls, or t->n when no line starts there. */
static uint32_t rule__line_index(const struct RuleLines *t, uint32_t ls)
{
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->items[mid].start < ls) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n && t->items[lo].start == ls ? lo : t->n;
}

/* Is the line's indentation exactly ind (as bytes), followed by more code? */
static bool rule__starts_with(const char *src, const SrcLine *l, const char *ind, uint32_t n)
{
    return l->indent >= n && !memcmp(src + l->start, ind, n);
}

typedef Array(Edit) EditList;

/* Edits that put one more level of indentation (unit) after the block's indentation ind on every
 * line the scan s meets before offset `to`. Lines inside string literals, empty lines, and
 * continuation or comment lines left of the block stay as they are. false when a statement line
 * does not start with ind (tabs and spaces mixed differently): no exact re-indent exists. */
static bool rule__indent_lines(const char *src, LineScan *s, uint32_t to, const char *ind, uint32_t nind,
                               const char *unit, EditList *edits)
{
    SrcLine l;
    while (s->pos < to && linescan_next(s, &l)) {
        if (l.in_string || l.indent == l.end - l.start) continue;
        if (rule__starts_with(src, &l, ind, nind)) array_push(edits, ((Edit){l.start + nind, l.start + nind, unit}));
        else if (l.logical && !l.blank) return false;
    }
    return true;
}

bool rule_fix_wrap(RuleCtx *c, uint32_t start, uint32_t end, const char *header, Edit **out, uint32_t *n_out)
{
    const char *src = c->m->src;
    size_t len = c->m->len;
    *out = NULL, *n_out = 0;
    if (start >= end || end > len) return false;
    uint32_t ls = rule_line_start(c, start);
    for (uint32_t k = ls; k < start; k++)
        if (src[k] != ' ' && src[k] != '\t') return false; /* something else before the statement */
    uint32_t nind = start - ls;
    const char *ind = arena_strndup(c->arena, src + ls, nind);
    /* the indentation step: the first deeper logical line of the block, else 4 spaces (a tab when
     * the file indents with tabs here) */
    const char *unit = NULL;
    LineScan s = {src, (uint32_t)len, ls, 0, false, 0, false};
    SrcLine l;
    uint32_t last_end = rule__line_end(src, len, end > start ? end - 1 : end);
    while (s.pos <= last_end && linescan_next(&s, &l)) {
        if (l.start == ls || !l.logical || l.blank) continue;
        if (l.indent > nind && !memcmp(src + l.start, ind, nind)) {
            unit = arena_strndup(c->arena, src + l.start + nind, l.indent - nind);
            break;
        }
    }
    if (!unit) unit = memchr(ind, '\t', nind) ? "\t" : "    ";
    /* the header line, then every line of the block one level deeper */
    EditList edits;
    array_init(&edits);
    const char *eol = rule_eol(c, start);
    array_push(&edits, ((Edit){ls + nind, ls + nind, arena_printf(c->arena, "%s:%s%s%s", header, eol, ind, unit)}));
    LineScan t = {src, (uint32_t)len, ls, 0, false, 0, false};
    linescan_next(&t, &l); /* the first line: the header edit indents it */
    bool ok = rule__indent_lines(src, &t, last_end + 1, ind, nind, unit, &edits) && !t.quote && t.depth == 0;
    if (ok) {
        *out = ARENA_NEW_N(c->arena, Edit, edits.len);
        memcpy(*out, edits.items, edits.len * sizeof(Edit));
        *n_out = edits.len;
    }
    array_free(&edits);
    return ok;
}

static bool rule__ident_char(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (unsigned char)ch >= 0x80;
}

static bool rule__space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f'; }

bool rule_kwarg_removal(RuleCtx *c, const IrFunc *f, uint32_t call, uint32_t value, uint32_t *start, uint32_t *end)
{
    const char *src = c->m->src;
    const Span *cs = &f->ops.items[call].span, *vs = &f->ops.items[value].span;
    if (vs->start < cs->start || vs->end > cs->end) return false;
    /* back from the value: `=`, the keyword, then `,` (not the first argument) or `(` */
    uint32_t p = vs->start;
    while (p > cs->start && (src[p - 1] == ' ' || src[p - 1] == '\t')) p--;
    if (p <= cs->start || src[p - 1] != '=') return false;
    p--;
    while (p > cs->start && (src[p - 1] == ' ' || src[p - 1] == '\t')) p--;
    uint32_t kw_end = p;
    while (p > cs->start && rule__ident_char(src[p - 1])) p--;
    if (p == kw_end) return false;
    uint32_t kw = p;
    while (p > cs->start && rule__space(src[p - 1])) p--;
    if (p <= cs->start) return false;
    /* forward from the value: the next token is `,` or `)` */
    uint32_t q = vs->end;
    while (q < cs->end && rule__space(src[q])) q++;
    if (q >= cs->end || (src[q] != ',' && src[q] != ')')) return false;
    if (src[p - 1] == ',') {
        *start = p - 1, *end = vs->end; /* `f(a, kw=v)` -> `f(a)` */
        return true;
    }
    if (src[p - 1] != '(') return false;
    if (src[q] == ')') {
        *start = kw, *end = vs->end; /* `f(kw=v)` -> `f()` */
        return true;
    }
    q++; /* `f(kw=v, b)` -> `f(b)`: the comma and the spaces after it go too */
    while (q < cs->end && (src[q] == ' ' || src[q] == '\t')) q++;
    *start = kw, *end = q;
    return true;
}

bool rule_stmt_removal(RuleCtx *c, Span stmt, uint32_t *start, uint32_t *end, const char **text)
{
    const char *src = c->m->src;
    size_t len = c->m->len;
    uint32_t ls = rule_line_start(c, stmt.start);
    for (uint32_t k = ls; k < stmt.start; k++)
        if (src[k] != ' ' && src[k] != '\t') return false; /* another statement before it (`a; b`) */
    uint32_t le = rule__line_end(src, len, stmt.end);
    for (uint32_t k = stmt.end; k < le && src[k] != '#'; k++)
        if (src[k] != ' ' && src[k] != '\t') return false; /* another statement after it */
    uint32_t nind = stmt.start - ls;
    /* the block's other statements: the nearest logical lines before and after with code (a line
     * before that is less deep is the block's header; one after ends the block) */
    const struct RuleLines *t = rule__lines(c);
    uint32_t at = rule__line_index(t, ls);
    if (at == t->n) return false;
    bool before = false, after = false;
    for (uint32_t k = at; k-- > 0;) {
        const SrcLine *l = &t->items[k];
        if (!l->logical || l->blank) continue;
        before = l->indent >= nind;
        break;
    }
    for (uint32_t k = at + 1; k < t->n; k++) {
        const SrcLine *l = &t->items[k];
        if (!l->logical || l->blank) continue;
        after = l->indent >= nind;
        break;
    }
    if (before || after) {
        *start = ls, *end = le + rule__eol_len(src, len, le); /* the whole line goes */
        *text = "";
    } else {
        *start = stmt.start, *end = stmt.end; /* the block's only statement: `pass` keeps it valid */
        *text = "pass";
    }
    return true;
}

/* The name that an `import` statement on line l binds to the torch module, or NULL: `import torch`,
 * `import torch.nn` (binds torch), `import torch as t`; several names separated by commas. */
static const char *rule__import_torch(RuleCtx *c, const SrcLine *l)
{
    const char *src = c->m->src;
    uint32_t p = l->start + l->indent, e = l->end;
    if (e - p < 7 || memcmp(src + p, "import", 6) || !rule__space(src[p + 6])) return NULL;
    p += 6;
    while (p < e && src[p] != '#' && src[p] != ';') {
        while (p < e && (src[p] == ' ' || src[p] == '\t' || src[p] == ',')) p++;
        uint32_t ms = p;
        while (p < e && (rule__ident_char(src[p]) || src[p] == '.')) p++;
        uint32_t me = p;
        if (me == ms) return NULL;
        while (p < e && (src[p] == ' ' || src[p] == '\t')) p++;
        uint32_t as = 0, ae = 0;
        if (e - p > 3 && !memcmp(src + p, "as", 2) && rule__space(src[p + 2])) {
            p += 2;
            while (p < e && (src[p] == ' ' || src[p] == '\t')) p++;
            as = p;
            while (p < e && rule__ident_char(src[p])) p++;
            ae = p;
        }
        bool is_torch = me - ms == 5 && !memcmp(src + ms, "torch", 5);
        bool sub = me - ms > 6 && !memcmp(src + ms, "torch.", 6);
        if (is_torch && ae > as) return arena_strndup(c->arena, src + as, ae - as);
        if (is_torch || (sub && ae == as)) return "torch";
    }
    return NULL;
}

const char *rule_torch_name(RuleCtx *c)
{
    if (c->torch_name_known) return c->torch_name;
    c->torch_name_known = true;
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind == IR_LOAD && o->qual && !strcmp(o->qual, "torch") && o->var != IR_NONE)
                return c->torch_name = arena_strdup(c->scratch, f->vars.items[o->var].name);
        }
    }
    /* torch imported but never used by name: read the top-level import statements */
    const struct RuleLines *t = rule__lines(c);
    for (uint32_t k = 0; k < t->n; k++) {
        const SrcLine *l = &t->items[k];
        if (!l->logical || l->blank || l->indent) continue;
        const char *n = rule__import_torch(c, l);
        if (n) return c->torch_name = arena_strdup(c->scratch, n);
    }
    return NULL;
}

void rule_fix_wrap_loop_no_grad(RuleCtx *c, const IrFunc *f, uint32_t loop, Diag *d, FixSafety safety)
{
    rule_fix_wrap_loop(c, f, loop, d, safety, "no_grad()");
}

void rule_fix_wrap_loop(RuleCtx *c, const IrFunc *f, uint32_t loop, Diag *d, FixSafety safety, const char *ctx)
{
    const IrLoop *l = &f->loops.items[loop];
    const char *torch = rule_torch_name(c);
    if (c->cxx || !torch || l->end == IR_NONE || l->end >= f->ops.len) return;
    Edit *edits;
    uint32_t n;
    const char *with = arena_printf(c->arena, "with %s.%s", torch, ctx);
    uint32_t start = l->span.start, end = f->ops.items[l->end].span.end;
    if (l->is_comp) {
        /* a comprehension: the statement that holds it (`rows = [net(b) for b in loader]`, a return) */
        uint32_t i = l->end + 1;
        while (i < f->ops.len && f->ops.items[i].kind != IR_STORE && f->ops.items[i].kind != IR_EXPR &&
               f->ops.items[i].kind != IR_RETURN && f->ops.items[i].kind != IR_SET_ATTR &&
               f->ops.items[i].kind != IR_SET_ITEM)
            i++;
        if (i >= f->ops.len) return;
        const IrOp *s = &f->ops.items[i];
        uint32_t v = s->kind == IR_SET_ATTR ? s->b : s->kind == IR_SET_ITEM ? s->c : s->a;
        uint32_t ss = s->span.start, se = s->span.end;
        if (v != IR_NONE) ss = GL_MIN(ss, f->ops.items[v].span.start), se = GL_MAX(se, f->ops.items[v].span.end);
        if (ss > start || se < end) return;
        start = ss, end = se;
    }
    if (!rule_fix_wrap(c, start, end, with, &edits, &n)) return;
    rule_fix_edits(c, d, safety,
                   l->is_comp ? arena_printf(c->arena, "Run line %u under `%s:`", rule_line(l->span), with)
                              : arena_printf(c->arena, "Wrap the loop at line %u in `%s:`", rule_line(l->span), with),
                   edits, n);
}
