/* Environments of the grad dataflow: a persistent tree over the variables (dataflow_int.h).
 *
 * The interpreter copied the whole environment at every if, try and loop (and again at each back
 * edge), so a scope of N regions and N variables cost N^2 in time and memory: a module of 4,000
 * top-level loops with names of their own took 2.2 GB. Here a copy is a pointer, a write copies
 * the path to one leaf (height + 1 nodes), and a join, a comparison or a loop header walks only
 * the subtrees two environments do not share, which are the paths of the variables written in
 * between. Joining a value with itself gives it back bit for bit, so skipping shared subtrees is
 * exact: the values are those of the per-variable loops this replaces.
 *
 * The walks recurse over the tree, never over syntax: the depth is the tree's height, at most 11
 * for 2^32 variables. */
#include "ir/dataflow_int.h"

static DfNode *df_env__node(Interp *I, const DfNode *from, uint32_t stamp)
{
    DfNode *n = ARENA_NEW(I->arena, DfNode);
    if (from) *n = *from;
    else n->def_lo = UINT32_MAX;
    n->stamp = stamp;
    return n;
}

static bool df_env__live_val(const AVal *v)
{
    return v->grad == G_LIVE || v->elem == G_LIVE;
}

/* Held outside a plain local: an attribute, a global, a container, a value from outside the call
 * (what may outlive a loop's iterations without being built from the previous one). */
static bool df_env__held(const IrFunc *f, uint32_t v, const AVal *a)
{
    const IrVar *iv = &f->vars.items[v];
    return iv->base != IR_NONE || iv->is_global || a->kind == VK_CONTAINER || (a->flags & VF_OUTER);
}

/* The summaries of node n (its values are those of variables base.., a leaf; or its children's). */
static void df_env__relive(const IrFunc *f, DfNode *n, bool leaf, uint32_t base)
{
    n->live = n->live_held = 0;
    n->def_lo = UINT32_MAX, n->def_hi = 0;
    for (uint32_t i = 0; i < DF_FAN; i++) {
        if (leaf) {
            const AVal *a = &n->u.val[i];
            if (!df_env__live_val(a) || base + i >= f->vars.len) continue;
            n->live = 1;
            if (df_env__held(f, base + i, a)) n->live_held = 1;
            if (a->def != IR_NONE) n->def_lo = GL_MIN(n->def_lo, a->def), n->def_hi = GL_MAX(n->def_hi, a->def);
        } else {
            const DfNode *k = n->u.kid[i];
            n->live |= k->live, n->live_held |= k->live_held;
            n->def_lo = GL_MIN(n->def_lo, k->def_lo), n->def_hi = GL_MAX(n->def_hi, k->def_hi);
        }
    }
}

void df_env_init(Interp *I)
{
    uint8_t h = 0;
    while (h < 10 && ((uint64_t)1 << (DF_FAN_BITS * (h + 1u))) < I->nvars) h++;
    I->height = h;
    I->epoch = 1;
    /* every leaf is the same node of unset values, every level the same node of that */
    DfNode *n = df_env__node(I, NULL, 0);
    for (uint32_t i = 0; i < DF_FAN; i++) n->u.val[i] = aval_unset();
    for (uint8_t l = 0; l < h; l++) {
        DfNode *up = df_env__node(I, NULL, 0);
        for (uint32_t i = 0; i < DF_FAN; i++) up->u.kid[i] = n;
        n = up;
    }
    I->env = n;
}

const AVal *df_env_at(const DfNode *e, uint8_t height, uint32_t v)
{
    for (uint32_t l = height; l > 0; l--) e = e->u.kid[(v >> (DF_FAN_BITS * l)) & (DF_FAN - 1)];
    return &e->u.val[v & (DF_FAN - 1)];
}

/* Writes v = val into the tree at *root: nodes stamped `stamp` (nonzero) are written in place,
 * others are copied (and stamped) along the path. */
static void df_env__put(Interp *I, DfNode **root, uint32_t v, AVal val, uint32_t stamp)
{
    DfNode *path[12];
    DfNode **slot = root;
    uint32_t depth = 0;
    for (uint32_t l = I->height;; l--) {
        DfNode *n = *slot;
        if (!stamp || n->stamp != stamp) n = *slot = df_env__node(I, n, stamp);
        path[depth++] = n;
        if (!l) {
            n->u.val[v & (DF_FAN - 1)] = val;
            break;
        }
        slot = &n->u.kid[(v >> (DF_FAN_BITS * l)) & (DF_FAN - 1)];
    }
    for (uint32_t k = depth; k-- > 0;) df_env__relive(I->f, path[k], k == depth - 1, v & ~(DF_FAN - 1));
}

void df_env_set(Interp *I, uint32_t v, AVal val)
{
    if (v >= I->nvars) return;
    df_env__put(I, &I->env, v, val, I->epoch);
}

DfNode *df_env_with(Interp *I, DfNode *e, uint32_t v, AVal val)
{
    if (v >= I->nvars) return e;
    df_env__put(I, &e, v, val, 0);
    return e;
}

DfNode *df_env_share(Interp *I)
{
    I->epoch++;
    return I->env;
}

/* A node with the given values or children, or a or b when it equals one of them (sharing). */
static DfNode *df_env__made(Interp *I, DfNode *a, DfNode *b, const DfNode *made, bool leaf, uint32_t base)
{
    size_t sz = leaf ? sizeof(AVal) * DF_FAN : sizeof(DfNode *) * DF_FAN;
    if (!memcmp(&made->u, &a->u, sz)) return a;
    if (b && !memcmp(&made->u, &b->u, sz)) return b;
    DfNode *n = df_env__node(I, made, 0);
    df_env__relive(I->f, n, leaf, base);
    return n;
}

static uint32_t df_env__kid_base(uint32_t base, uint32_t i, uint32_t l)
{
    return base + (i << (DF_FAN_BITS * l));
}

static DfNode *df_env__join(Interp *I, DfNode *a, DfNode *b, uint32_t l, uint32_t base)
{
    if (a == b) return a;
    DfNode t;
    memset(&t, 0, sizeof t);
    for (uint32_t i = 0; i < DF_FAN; i++) {
        if (!l) t.u.val[i] = aval_join(&a->u.val[i], &b->u.val[i]);
        else t.u.kid[i] = df_env__join(I, a->u.kid[i], b->u.kid[i], l - 1, df_env__kid_base(base, i, l));
    }
    return df_env__made(I, a, b, &t, !l, base);
}

DfNode *df_env_join(Interp *I, DfNode *a, DfNode *b)
{
    return df_env__join(I, a, b, I->height, 0);
}

/* Whether a and b hold aval_eq values everywhere. */
static bool df_env__same(const DfNode *a, const DfNode *b, uint32_t l)
{
    if (a == b) return true;
    for (uint32_t i = 0; i < DF_FAN; i++)
        if (l ? !df_env__same(a->u.kid[i], b->u.kid[i], l - 1) : !aval_eq(&a->u.val[i], &b->u.val[i]))
            return false;
    return true;
}

typedef struct Header {
    Interp *I;
    uint32_t loop_op, loop;
    bool changed;
} Header;

static DfNode *df_env__header(Header *c, DfNode *pre, DfNode *back, DfNode *alt, uint32_t l, uint32_t base)
{
    if (pre == back) {
        /* no phi below: the header is the entry */
        if (!c->changed && !df_env__same(pre, alt, l)) c->changed = true;
        return pre;
    }
    DfNode t;
    memset(&t, 0, sizeof t);
    for (uint32_t i = 0; i < DF_FAN; i++) {
        if (l) {
            t.u.kid[i] = df_env__header(c, pre->u.kid[i], back->u.kid[i], alt->u.kid[i], l - 1,
                                        df_env__kid_base(base, i, l));
            continue;
        }
        AVal h = pre->u.val[i];
        const AVal *b = &back->u.val[i];
        if (!aval_eq(&h, b)) {
            AVal j = aval_join(&h, b);
            /* a phi: the value may be from before the loop or from an earlier iteration; it is as
             * old as the entry value (so an enclosing loop sees it outlive its iterations when the
             * entry does) */
            j.def = (h.flags & VF_UNSET) || h.def == IR_NONE ? c->loop_op : GL_MIN(h.def, c->loop_op);
            if ((h.flags & VF_OUTER)) j.flags |= VF_OUTER;
            j.flags &= (uint16_t)~VF_UNSET;
            j.carried = c->loop;
            h = j;
        }
        if (!aval_eq(&h, &alt->u.val[i])) c->changed = true;
        t.u.val[i] = h;
    }
    return df_env__made(c->I, alt, pre, &t, !l, base);
}

DfNode *df_env_header(Interp *I, DfNode *pre, DfNode *back, DfNode *alt, uint32_t loop_op, uint32_t loop,
                      bool *changed)
{
    Header c = {I, loop_op, loop, false};
    DfNode *r = df_env__header(&c, pre, back, alt, I->height, 0);
    *changed = c.changed;
    return r;
}

static void df_env__live(const DfNode *e, uint32_t l, uint32_t base, uint32_t nvars, DfVarList *out)
{
    if (!e->live || base >= nvars) return;
    for (uint32_t i = 0; i < DF_FAN; i++) {
        if (l) df_env__live(e->u.kid[i], l - 1, base + (i << (DF_FAN_BITS * l)), nvars, out);
        else if (base + i < nvars && df_env__live_val(&e->u.val[i])) array_push(out, base + i);
    }
}

void df_env_live(const DfNode *e, uint8_t height, uint32_t nvars, DfVarList *out)
{
    df_env__live(e, height, 0, nvars, out);
}

const AVal *df_backedge(const FuncFacts *ff, uint32_t loop, uint32_t var)
{
    const DfNode *e = ff->backedge ? ff->backedge[loop] : NULL;
    return e ? df_env_at(e, ff->env_height, var) : NULL;
}

/* The live values of e (variables base..) held outside a plain local or defined by an op in
 * [lo, hi]: the subtrees whose summaries say neither are skipped. */
static void df_env__held_or_in(const IrFunc *f, const DfNode *e, uint32_t l, uint32_t base, uint32_t lo,
                               uint32_t hi, DfVarList *out)
{
    if (!e->live || (!e->live_held && (e->def_hi < lo || e->def_lo > hi))) return;
    for (uint32_t i = 0; i < DF_FAN; i++) {
        if (l) {
            df_env__held_or_in(f, e->u.kid[i], l - 1, df_env__kid_base(base, i, l), lo, hi, out);
            continue;
        }
        const AVal *a = &e->u.val[i];
        if (base + i >= f->vars.len || !df_env__live_val(a)) continue;
        if (df_env__held(f, base + i, a) || (a->def != IR_NONE && a->def >= lo && a->def <= hi))
            array_push(out, base + i);
    }
}

uint32_t *df_backedge_live(const IrFunc *f, const FuncFacts *ff, uint32_t loop, uint32_t lo, uint32_t hi, Arena *a,
                           uint32_t *n)
{
    *n = 0;
    const DfNode *e = ff->backedge ? ff->backedge[loop] : NULL;
    if (!e || !e->live) return NULL;
    DfVarList l;
    array_init(&l);
    df_env__held_or_in(f, e, ff->env_height, 0, lo, hi, &l);
    uint32_t *r = l.len ? ARENA_NEW_N(a, uint32_t, l.len) : NULL;
    if (r) memcpy(r, l.items, sizeof(uint32_t) * l.len);
    *n = l.len;
    array_free(&l);
    return r;
}
