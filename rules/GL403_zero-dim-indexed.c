/* GL403 zero-dim-indexed: indexing a 0-dim tensor (`loss.data[0]`).
 *
 * ## What it does
 * Flags `x[0]` and `x.data[0]` where `x` is a 0-dim tensor: the result of a loss function or
 * loss module (`nn.BCELoss()(p, y)` too), a full reduction (`.sum()`, `.mean()`, `torch.max(x)`
 * without a dim), or a tensor `.backward()` is called on without arguments; and sums and products
 * of these with each other, Python numbers or config values (`loss * cfg.TRAIN.LAMBDA`), also
 * where another path leaves None instead (`loss = None` when a batch has no target). The terms of
 * a sum that `.backward()` is called on are 0-dim too (`loss = loss_l + loss_c`: an elementwise
 * result is as large as its largest operand). So are calls of a Module class of the file or of
 * another file whose forward returns a 0-dim value computed from its arguments (a loss written by
 * hand), what a function of the file or of another file returns when it returns one, and the
 * 0-dim elements of a tuple such a function returns (`loss, bce, kld = vae_terms(...)`); a
 * method the base class only declares (`pass`) returns whatever its overrides return. Not seen:
 * expressions inside slices (`t[:, :torch.max(n).data[0]]`), and 1-element tensors of shape (1,)
 * that `.backward()` also accepts (their terms are taken as 0-dim).
 *
 * ## Why is this bad?
 * Before PyTorch 0.4 losses were 1-element vectors and `loss.data[0]` read the value. Since 0.5
 * indexing a 0-dim tensor raises `IndexError: invalid index of a 0-dim tensor`. Code copied from
 * old examples crashes, and the usual quick "fix", `total += loss`, keeps the graph alive.
 *
 * ## Example
 * ```python
 * train_loss = train_loss + loss.data[0]
 * ```
 *
 * Use instead:
 * ```python
 * train_loss = train_loss + loss.item()
 * ```
 *
 * ## Fix safety
 * Replacing `x.data[0]` / `x[0]` by `x.item()` is safe: it reads the same Python number.
 *
 * ## References
 * - https://pytorch.org/blog/pytorch-0_4_0-migration-guide/
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.item.html
 */
#include "rules/rule.h"

void rule_GL403(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_ITEM || o->b == IR_NONE || !ff->reached[i]) continue;
            const IrOp *idx = &f->ops.items[o->b];
            if (idx->kind != IR_CONST || !idx->name || strcmp(idx->name, "0") != 0) continue;
            const AVal *base = &ff->val[o->a];
            if (!(base->flags & VF_ZERO_DIM) || base->kind == VK_CONTAINER) continue;
            /* x.data[0] -> fix the whole `x.data[0]` into `x.item()` */
            const IrOp *b = &f->ops.items[o->a];
            uint32_t root = o->a;
            if (b->kind == IR_ATTR && b->name && !strcmp(b->name, "data")) root = b->a;
            const char *rt = ir_span_text(c->m, f->ops.items[root].span, c->arena);
            Diag *d = rule_report(c, o->span, SEV_ERROR,
                                  "`%s` is a 0-dim tensor: indexing it raises IndexError since PyTorch 0.5", rt);
            rule_hint(c, d, "Use `%s.item()` to read its value", rt);
            if (o->span.row == o->span.end_row && f->ops.items[root].span.end_row == o->span.row)
                rule_fix(c, d, FIX_SAFE, "Replace with `.item()`", o->span.start, o->span.end,
                         arena_printf(c->arena, "%s.item()", rt));
        }
    }
}
