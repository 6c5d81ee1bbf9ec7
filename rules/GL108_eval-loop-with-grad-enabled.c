/* GL108 eval-loop-with-grad-enabled: an evaluation, inference or sampling loop that records graphs.
 *
 * ## What it does
 * Flags a loop (a comprehension or generator expression too: `[model.validation_step(b) for b in
 * loader]`) that calls a model with autograd on when nothing the loop computes can reach a backward:
 * the loop (and what it calls) never calls `backward()`, `autograd.grad` or an optimizer step, no
 * backward follows it, and it keeps no graph-carrying value past the iteration (only
 * `.item()`, `.tolist()`, detached or numpy results, or token ids). Grad must be on along every
 * path the file shows: no `torch.no_grad()`/`torch.inference_mode()` block or decorator, no
 * `torch.set_grad_enabled(False)` before the loop, no caller that runs the function under one (in
 * the file, or in another file linted with it: `with torch.no_grad(): acc = score(net, val)` in a
 * script, or `model.sample(z)` there on a model a checkpoint helper returned, whose class the
 * script imports), and the model is not frozen with `requires_grad_(False)` (in the same function, or
 * for `self.x` in a method of the class). A loop that hands a graph-carrying value to an object
 * gradleak cannot see (`agent.remember(logp)`) is left alone, since the object may differentiate
 * it later, unless the loop iterates a loader or another iterable of batches (an evaluation pass
 * handing its loss to a logger or a metric); functions of an imported module
 * (`utils.to_image(out)`) are no such object, nor is an object the function makes for itself and
 * never hands out (a beam search's `PriorityQueue()` of candidate nodes). The finding is on the line that runs the model (the
 * first model call in the loop whose outputs are not detached at once, or the call of the file's
 * function that runs it), with the loop beside it; the fix wraps the whole loop (for a
 * comprehension, the statement that holds it). A loop that calls a function training in a loop of
 * its own (a training epoch, of the file or of another file of the run) is an epoch loop: the
 * validation pass it calls next is reported inside that pass. A loop that runs a count of times
 * written in the code, at most 16 (`for i in range(5)`, `n_show = 6`), shows a few single pictures
 * after training: it is no pass over a held-out set and is left alone, unless it is nested in
 * another loop (samples drawn between training steps, a sliding window over each image of a set).
 *
 * Calling an object of another file's class whose `__call__` trains (a learner that fine-tunes a
 * copy for a few steps) is training, not an evaluation.
 *
 * What counts as running a model: a call of a module, a method of another file's class that runs
 * one (`critic.classify(x)`, `net.nll(x, y)`), in a Module's own method (`evaluate(self, dev)`) a
 * method of the class that no forward() reaches and that runs the class's submodules (a model
 * that is a container of an encoder and a decoder: `self.encode_and_decode(batch)`), or one that
 * forward() reaches and that returns what the class's submodules compute (`self.logits(canvas)` in
 * the class's own sampler; a network handed to `__init__` and run by forward counts), and a method
 * of the file that runs one and trains
 * nothing (an agent's `select_action(state)`, even when it keeps the step's log-prob on the agent
 * for a later update, unless something trains after the loop in the same iteration). Also a method
 * torch does not define, given a tensor, of a model whose class nothing in the run shows
 * (`self.network.features(x)`); a network an object keeps from its constructor's argument when
 * the constructor treats that argument as a module (`self.net = net` beside `net.parameters()`);
 * and a callable handed in whose result, through what the iteration computes, goes to an
 * environment's `step` (a policy in an evaluation episode; not when the loop collects the actions
 * for an update). Handing the
 * policy's action to an environment (`env.step(action)`) keeps nothing of it. Grad is off in a
 * function decorated by a decorator of the file that calls what it wraps under `no_grad`, and
 * `torch.no_grad()` of a file that gets `torch` through a star import is torch's; a function whose
 * body runs under `set_grad_enabled(track)`, `track` defaulting to True, runs without grad for a call
 * that passes `track=False` (or False in its place). A helper of
 * another file handed the optimizer and the loss, or a list of losses (`self.take_step(self.opt,
 * loss)`, `reinforce_update(opt, log_probs, returns)`), trains. In a
 * script or notebook, a backward further down ends an earlier loop's step only when no loop that
 * runs a model comes between. A method called on an object whose class nothing names
 * (`model.predict(user)` with `model` a parameter) is looked up by its name among the classes of
 * the file and of the modules it names (those are read even when the file is linted alone), and
 * trusted when the nearest ones agree; when none of those defines it, every class of the run that
 * does must agree (`policy.select_action(state)` in an evaluation helper that imports none of the
 * agents its callers hand it); when none defines it and the loop hands it the batch moved
 * to a device (`model.greedy_decode(src.cuda(), n)`), a method torch does not define runs the
 * model. An imported function or method that runs a model once per call counts like the file's own, and `with f():` where the file's `f` returns `torch.no_grad()`
 * turns grad off. Methods of a `unittest.TestCase` are left alone: a test's forward on a toy
 * input checks shapes, not a run's memory. Not seen: a model class that only a module the file
 * never names defines, closures over the enclosing function's model, and decorators imported from
 * other files.
 *
 * More of what runs a model: a method of a whole pickled model (`net = torch.load(path)`, or
 * `self.net = torch.load(path)` called by the class) whose result an environment's step is handed
 * (`net.select_action(state)`); a function that runs a recurrent model over the one input it is
 * given (`for i in range(line.size(0)): out, h = rnn(line[i], h)`, its state ending with the
 * loop) is one forward pass, so a loop calling it per sample evaluates. A function that files what
 * it sampled into a container its caller hands it (`memory.logprobs.append(...)` in a policy's
 * `act(state, memory)`) still evaluates: the caller's loop decides whether anything trains on it.
 * An evaluation step that stores a number into its result (`out["total"] = out["total"].item()`)
 * keeps nothing. A `forward()` given no input (`blobs = data_layer.forward()`) is a data layer's,
 * no evidence of a module. A model that a method froze (`p.requires_grad = False` over its
 * parameters) and returned is frozen in the attribute its object keeps it in.
 *
 * The phase form: a batch loop that trains only under `if phase == "train":`, inside a loop that
 * binds `phase` (`for phase in ["train", "val"]:`, a name bound once to such a list, a parameter, or
 * a dict of loaders' keys), runs the other phases as evaluation passes with grad on (the tutorial
 * wraps the loop in `torch.set_grad_enabled(phase == "train")`; in C++, `for (auto &mode : modes)`
 * with `mode == std::string("train")`). Not when a list of literals holds the training phase only.
 *
 * It also flags the statement form: in a loop that trains, a model call after the iteration's
 * last backward or optimizer step (a per-epoch forward over the whole validation set, a long
 * forecast for the plots; in an epoch loop, also after a call that runs a whole epoch of training,
 * `trainer.train(X, Y)` with its own batch loop) whose result never reaches a backward, a function that trains or keeps
 * it, a store, a return, or the next iteration's training; also a model call after the last
 * training op of a function that makes one training step per call (`train(epoch)` that ends with
 * a validation forward). A call under an `if` is reported too, periodic or not (`if step % 50 ==
 * 0:` before a test-set forward: when it runs, it peaks like training), except a periodic picture
 * of noise (`if step % 500 == 0: save(netG(fixed_noise))`, its input made by a torch factory such
 * as `torch.randn`): one batch at the step's own peak, evaluating nothing. One that runs only after
 * an error (an except handler, a flag set in one) is left alone. A forward before the training
 * step (a target network, a sampled action) may feed the loss and is left alone, unless what it
 * computes reaches no backward and is read after the step (`val_loss = loss_fn(model(x_val),
 * y_val)` beside the training loss, printed after `optimizer.step()`): its graph is then held
 * through the backward beside the step's. There, handing the output to a method of an object
 * gradleak cannot see (`self.train_loss.sharded_compute_loss(batch, outputs)`) or storing it on an
 * object counts as feeding the loss, and a model whose own forward trains (a meta-learner) is no
 * evaluation. An output the next
 * iteration reads before its training ends may feed that loss too, unless the next iteration binds
 * the name again first, outside any `if` (`pred = net(x)` at the top of the step, or of the inner
 * loop of batches before its backward reads it). When the model
 * runs in a function of the file that the loop calls (`acc = score(model, X_test)`, through a few
 * such functions), the finding is on the model call in that function, with the call in the loop
 * beside it: one finding per such function, however many calls reach it, and one for each
 * function the loop calls that way (a direct model call: the first only). With the files linted
 * together, a function or method of this file that a loop of another file calls that way (after a
 * training call of the iteration, grad on) is reported the same way, at its model call; not a
 * method of a module class (`model.generate(img)` between steps: that is the model itself, and its
 * decoding loops are the loop rules').
 *
 * And the shared-loop form: one epoch loop for training and evaluation (`def run_epoch(self,
 * loader, train=True)`), whose every backward and optimizer step runs under a test of one
 * parameter of the function (`if train:`, `if optimizer is not None:`, `if not cross_valid:`,
 * `if mode == "train" or mode == "train+log":`), when a call in the file makes the test fail (it
 * passes `False`, `None`, `True`, another string, or leaves the parameter to a `None`/`False`
 * default) without `no_grad` around it: that call runs the loop as an evaluation pass with grad
 * on. The finding is on the loop's first model call; the unsafe fix runs the loop under
 * `torch.set_grad_enabled(<the test>)`, which keeps training as it was. A loop under
 * `torch.set_grad_enabled(train)` already, and a function only ever called with the flag on, are
 * left alone. When the test reads an attribute (`if self.eval_mode:` in an agent's `run()`, whose
 * driver sets `agent.eval_mode = True` for its test episodes) and its other branch runs a model
 * and trains nothing, that branch is reported at its first model call: the flag is set from
 * outside, and the branch written to evaluate is what says it runs. A branch under `no_grad`, one
 * that keeps what the model computes (appended, stored on the object) and a function the file
 * calls under `no_grad` are left alone.
 *
 * ## Why is this bad?
 * `model.eval()` changes dropout and batch norm, not autograd. With grad on, every forward saves
 * its activations for a backward that never comes, until its outputs are dropped at the end of the
 * iteration. Nothing grows, but peak memory is that of training: measured on an H100, 2.1× the
 * peak of the same loop under `torch.no_grad()` for a small CNN and 10.4× for a 6-layer
 * Transformer encoder, and 7-17% slower. Validation passes and generation scripts run out of
 * memory with batch sizes that training handles.
 *
 * When the loop also keeps a graph-carrying value (`val_loss += loss`, `outputs.append(out)`,
 * `scores[:, t] = torch.sigmoid(out)` into a tensor made before it), memory grows every iteration:
 * GL101/GL102 (error) report that where it is kept, and GL108 still reports the loop, because
 * `.item()` or `.detach()` there ends the growth but not the peak; `torch.no_grad()` fixes both.
 * A loop that keeps values for a backward (a rollout for the update that follows, in the function,
 * in what it calls, or in the caller it hands them to) is not an evaluation pass and is not
 * reported. A loop that feeds a graph-carrying output back into the model is GL104.
 *
 * ## Example
 * ```python
 * def evaluate(model, loader):
 *     model.eval()
 *     correct = 0
 *     for x, y in loader:
 *         correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
 *     return correct
 * ```
 *
 * Use instead:
 * ```python
 * @torch.no_grad()
 * def evaluate(model, loader):
 *     model.eval()
 *     correct = 0
 *     for x, y in loader:
 *         correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
 *     return correct
 * ```
 *
 * ## Fix safety
 * The fix wraps the loop (or, for the statement form, the statement that holds the call) in
 * `with torch.no_grad():` and indents it one level. It is unsafe: a
 * caller in another file may differentiate something the loop computes in a way gradleak cannot
 * see (a model method that returns through an object, a hook), and under `no_grad` that backward
 * would fail. No fix is offered in C++ (declare `torch::NoGradGuard no_grad;` before the loop) or
 * when the file has no `torch` name to write.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.no_grad.html
 * - https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
 */
#include <stdlib.h>

#include "ir/api.h"
#include "rules/rule.h"

/* The first reached statement `torch.set_grad_enabled(False)` in f (grad stays off after it), or
 * IR_NONE. Computed once per function: a loop is preceded by one when it is < the loop's op. */
static uint32_t first_grad_disable(const RuleCtx *c, const IrFunc *f)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || !o->qual || o->nargs < 1) continue;
        if (strcmp(o->qual, "torch.set_grad_enabled") != 0 && strcmp(o->qual, "torch.autograd.set_grad_enabled") != 0)
            continue;
        const IrOp *arg = &f->ops.items[f->args.items[o->args]];
        if (arg->kind == IR_CONST && arg->name && !strcmp(arg->name, "False")) return i;
    }
    return IR_NONE;
}

/* The text of the object a freezing call or loop names: `X` in `X.requires_grad_(False)`, or in
 * `for p in X.parameters(): p.requires_grad = False`. */
static const char *frozen_root(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const char *mname = ir_call_method(f, op);
    if (o->kind == IR_CALL && mname && !strcmp(mname, "requires_grad_") && o->nargs >= 1) {
        const IrOp *arg = &f->ops.items[f->args.items[o->args]];
        uint32_t r = ir_call_receiver(f, op);
        if (r != IR_NONE && arg->kind == IR_CONST && arg->name && !strcmp(arg->name, "False")) return rule_text(c, f, r);
    }
    if (o->kind == IR_SET_ATTR && o->name && !strcmp(o->name, "requires_grad") && o->b != IR_NONE) {
        const IrOp *val = &f->ops.items[o->b];
        uint32_t l = ir_op_loop(f, op);
        if (val->kind != IR_CONST || !val->name || strcmp(val->name, "False") != 0 || l == IR_NONE) return NULL;
        uint32_t it = f->loops.items[l].iter;
        const char *iname = it != IR_NONE ? ir_call_method(f, it) : NULL;
        uint32_t r = it != IR_NONE ? ir_call_receiver(f, it) : IR_NONE;
        if (iname && r != IR_NONE && (!strcmp(iname, "parameters") || !strcmp(iname, "named_parameters")))
            return rule_text(c, f, r);
    }
    return NULL;
}

/* The objects the file freezes (`backbone.requires_grad_(False)` anywhere), gathered once per run
 * of the rule (a scan of the whole file per finding was quadratic in a file of many loops), with
 * the function that freezes each. */
typedef struct Frozen {
    Array(const char *) roots;
    Array(uint32_t) funcs;
    bool done;
    Array(uint64_t) helper_sites; /* model calls in helpers reported by the statement form (function
                                   * << 32 | op): each once, however many callers run it */
    uint64_t *helper_of; /* per function of the file, lazily: its helper_model_call (function << 32 |
                          * op), HELPER_NONE, or 0 when not yet known */
    uint64_t *call_head, *call_next; /* built on first use: the reached calls of each function of the
                                      * file (function << 32 | op + 1, linked per callee; 0 ends) */
    uint32_t *call_base;             /* call_next's index of each function's op 0 */
} Frozen;

#define HELPER_NONE UINT64_MAX

/* Whether the file freezes the object called at op: the same name frozen in the same function, an
 * attribute of self frozen in a method of the same class, or a name frozen at module level. A
 * local of another function (`text_encoder` frozen in build_models, loaded again in sampling) is
 * another object. */
/* Method g froze root and returns it: the attributes `self.A = self.<g>()` of g's class are
 * frozen roots too ("self.A", for the methods of the class). */
static void frozen_attrs(RuleCtx *c, Frozen *fz, const IrFunc *g, const char *root)
{
    bool returns = false;
    for (uint32_t i = 0; i < g->ops.len && !returns; i++) {
        const IrOp *o = &g->ops.items[i];
        returns = o->kind == IR_RETURN && o->a != IR_NONE && !strcmp(rule_text(c, g, o->a), root);
    }
    const IrClass *cl = returns ? c->m->classes.items[g->cls] : NULL;
    for (uint32_t k = 0; cl && k < cl->methods.len; k++) {
        const IrFunc *h = c->m->funcs.items[cl->methods.items[k]];
        uint32_t self = ir_first_param(h);
        for (uint32_t i = 0; self != IR_NONE && i < h->ops.len; i++) {
            const IrOp *so = &h->ops.items[i];
            if (so->kind != IR_SET_ATTR || !so->name || so->a == IR_NONE || so->b == IR_NONE) continue;
            const IrOp *obj = &h->ops.items[so->a], *val = &h->ops.items[so->b];
            const char *m = val->kind == IR_CALL ? ir_call_method(h, so->b) : NULL;
            uint32_t r = m ? ir_call_receiver(h, so->b) : IR_NONE;
            if (obj->kind != IR_LOAD || obj->var != self || !m || strcmp(m, g->name) != 0 || r == IR_NONE ||
                h->ops.items[r].kind != IR_LOAD || h->ops.items[r].var != self)
                continue;
            array_push(&fz->roots, arena_printf(c->arena, "self.%s", so->name));
            array_push(&fz->funcs, cl->methods.items[k]);
        }
    }
}

static bool model_frozen(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t call)
{
    if (!fz->done) {
        fz->done = true;
        for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
            const IrFunc *g = c->m->funcs.items[fi];
            for (uint32_t i = 0; i < g->ops.len; i++) {
                const char *root = frozen_root(c, g, i);
                if (root) array_push(&fz->roots, root), array_push(&fz->funcs, fi);
                /* a method that returns what it froze (`return model` after `for p in
                 * model.parameters(): p.requires_grad = False`) freezes the attribute its object
                 * keeps it in (`self.model = self._load_model()`) */
                if (root && g->cls != IR_NONE) frozen_attrs(c, fz, g, root);
            }
        }
    }
    const char *callee = rule_text(c, f, f->ops.items[call].a);
    /* (`self.model.get_last_selfattention(x)`: the object the method is called on) */
    uint32_t recv = ir_call_method(f, call) ? ir_call_receiver(f, call) : IR_NONE;
    const char *holder = recv != IR_NONE ? rule_text(c, f, recv) : NULL;
    for (uint32_t i = 0; i < fz->roots.len; i++) {
        if (strcmp(fz->roots.items[i], callee) != 0 && !(holder && !strcmp(fz->roots.items[i], holder))) continue;
        const IrFunc *g = c->m->funcs.items[fz->funcs.items[i]];
        if (g == f || g->index == 0 || (!strncmp(callee, "self.", 5) && g->cls != IR_NONE && g->cls == f->cls))
            return true;
    }
    return false;
}

/* Whether what call op returns is stored and detached by the next statements of loop l
 * (`emb = enc(x)` then `emb = emb.detach()`, also for each target of `a, b = enc(x)` but the
 * discarded `_`). */
static bool detached_at_once(const IrFunc *f, const IrLoop *l, uint32_t op)
{
    uint32_t vars[4], nv = 0, i = op + 1;
    for (; i < l->end && nv < 4; i++) {
        const IrOp *s = &f->ops.items[i];
        bool from = s->a == op || (s->a != IR_NONE && f->ops.items[s->a].kind == IR_UNPACK && f->ops.items[s->a].a == op);
        if (s->kind == IR_STORE && from && s->var != IR_NONE) {
            if (!f->vars.items[s->var].name || strcmp(f->vars.items[s->var].name, "_")) vars[nv++] = s->var;
        } else if (s->kind != IR_UNPACK) {
            break;
        }
    }
    if (!nv) return false;
    /* `emb.detach()`, or the name bound again to a detach() of what it held (`q = (m * q).detach()`) */
    uint32_t detached = 0; /* bit k: vars[k] */
    for (uint32_t end = GL_MIN(l->end, i + 16); i < end && detached != (1u << nv) - 1; i++) {
        const IrOp *s = &f->ops.items[i];
        uint32_t var = IR_NONE;
        if (s->kind == IR_STORE && s->a != IR_NONE && f->ops.items[s->a].kind == IR_CALL) {
            const char *sm = ir_call_method(f, s->a);
            if (sm && !strcmp(sm, "detach")) var = s->var;
        } else {
            const char *m = ir_call_method(f, i);
            uint32_t r = m && !strcmp(m, "detach") ? ir_call_receiver(f, i) : IR_NONE;
            if (r != IR_NONE && f->ops.items[r].kind == IR_LOAD) var = f->ops.items[r].var;
        }
        for (uint32_t k = 0; k < nv && var != IR_NONE; k++)
            if (var == vars[k]) detached |= 1u << k;
    }
    return detached == (1u << nv) - 1;
}

/* What keeps_graph found: nothing kept past an iteration, values kept only in locals of the
 * function, or values kept beyond it. */
enum { KEEPS_NOTHING, KEEPS_IN_LOCALS, KEEPS_BEYOND };

/* Whether variable v of the function, holding a, keeps it only until the function returns: a
 * plain local bound to nothing from outside (no parameter, attribute, global, or alias of one). */
static bool local_only(const IrFunc *f, uint32_t v, const AVal *a)
{
    const IrVar *iv = &f->vars.items[v];
    return iv->base == IR_NONE && !iv->is_global && !iv->is_param && !(a->flags & VF_OUTER);
}

/* Whether variable v holds an object that the function made itself, from a class of no torch
 * API, and never hands out: every binding is a call of a class (`PriorityQueue()`), and v is not
 * returned, yielded, stored elsewhere or passed to a call. */
static bool own_object(RuleCtx *c, const IrFunc *f, uint32_t v, const AVal *a)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (a->kind != VK_OBJECT || !local_only(f, v, a) || f->ops.len > 4000) return false; /* (one scan per call) */
    bool bound = false;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (!ff->reached[i]) continue;
        if (o->kind == IR_STORE && o->var == v) {
            const IrOp *val = o->a != IR_NONE ? &f->ops.items[o->a] : NULL;
            if (!val || val->kind != IR_CALL || val->nargs || val->a == IR_NONE) return false;
            const IrOp *cls = &f->ops.items[val->a];
            if (!cls->qual || !strncmp(cls->qual, "torch.", 6) || !api_camel_last(cls->qual)) return false;
            bound = true;
            continue;
        }
        if (o->kind != IR_LOAD || o->var != v) continue;
        /* a read of v: only as the receiver of a method call */
        bool receiver = false;
        for (uint32_t j = i + 1; j < f->ops.len && j <= i + 64 && !receiver; j++)
            receiver = f->ops.items[j].kind == IR_CALL && ir_call_receiver(f, j) == i;
        if (!receiver) return false;
    }
    return bound;
}

/* Whether a graph-carrying value outlives an iteration of loop li: at the back edge, a variable
 * (or attribute) made before the loop or carried around it holds a live graph. Such a loop leaks
 * (GL101/GL102) or feeds a later backward (a rollout kept for the update). KEEPS_BEYOND when some
 * such value is held outside the function's own locals (an attribute, a global, a parameter). */
static int keeps_graph(RuleCtx *c, const IrFunc *f, const FuncFacts *ff, uint32_t li)
{
    int kept = KEEPS_NOTHING;
    /* a live value written into a tensor or container made before the loop (`preds[:, i] =
     * torch.sigmoid(out)`): GL102's (the environment holds the container, not what it was given) */
    for (uint32_t i = f->loops.items[li].op + 1; i < f->loops.items[li].end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_SET_ITEM || !ff->reached[i] || o->c == IR_NONE || GL_MAX(ff->val[o->c].grad, ff->val[o->c].elem) != G_LIVE)
            continue;
        uint32_t v = ir_root_var(f, o->a);
        if (v == IR_NONE || v >= f->vars.len) continue;
        const AVal *held = df_backedge(ff, li, v);
        if (held && df_outliving_loop(f, held, li, false) == li) {
            if (!local_only(f, v, held)) return KEEPS_BEYOND;
            kept = KEEPS_IN_LOCALS;
        }
    }
    /* only live values held outside a plain local or made inside the loop can keep a graph (the
     * tree of the environment finds those without a look at the scope's other variables) */
    const IrLoop *l = &f->loops.items[li];
    uint32_t nlive = 0;
    const uint32_t *live = NULL;
    if (l->is_comp) {
        /* a comprehension stores only its targets (and `:=` names): those are what may outlive an
         * iteration (a walk of every variable held at the back edge costs the size of the scope,
         * per comprehension: quadratic in a module of them) */
        uint32_t *vs = ARENA_NEW_N(c->scratch, uint32_t, l->end - l->op + 1);
        for (uint32_t i = l->op + 1; i < l->end; i++)
            if (f->ops.items[i].kind == IR_STORE && f->ops.items[i].var < f->vars.len) vs[nlive++] = f->ops.items[i].var;
        live = vs;
    } else {
        live = df_backedge_live(f, ff, li, l->op + 1, l->end ? l->end - 1 : 0, c->arena, &nlive);
    }
    for (uint32_t k = 0; k < nlive; k++) {
        uint32_t v = live[k];
        const AVal *a = df_backedge(ff, li, v);
        if (df_outliving_loop(f, a, li, false) != li) continue;
        /* the model's parameters (`params = model.parameters()` before the loop): leaves, no graph */
        if (a->kind == VK_CONTAINER && a->src != IR_NONE && a->src < f->ops.len && !ir_loop_contains(f, li, a->src) &&
            f->ops.items[a->src].kind == IR_CALL && (api_method(ir_call_method(f, a->src)).flags & M_PARAMS))
            continue;
        /* a plain local that is only rebound (`comparison = torch.cat(...)` under `if i == 0:`,
         * `dev_loss = criterion(...)`) holds one iteration's graph; it keeps graphs only when each
         * value is built from the previous one (`total = total + loss`, `x = torch.cat([x, y])`); a
         * value computed in the loop from an attribute (`loss * self.weight`) is a new one */
        const IrVar *iv = &f->vars.items[v];
        bool made_here = a->def != IR_NONE && ir_loop_contains(f, li, a->def) && f->ops.items[a->def].kind == IR_BINOP;
        bool plain = iv->base == IR_NONE && !iv->is_global && a->kind != VK_CONTAINER &&
                     (!(a->flags & VF_OUTER) || made_here);
        if (plain && !(a->def != IR_NONE && ir_loop_contains(f, li, a->def) && a->carried == li)) continue;
        if (!local_only(f, v, a)) return KEEPS_BEYOND;
        kept = KEEPS_IN_LOCALS;
    }
    return kept;
}

/* Whether loop l hands a graph-carrying value to an object or container the caller passed in
 * (`storage.record(logits, logp)`, `buffer.append(x)` with `storage`, `buffer` parameters, not
 * self): a rollout filling the caller's buffer for its update, even where that buffer is reported
 * as never emptied. */
static bool hands_to_caller(RuleCtx *c, const IrFunc *f, const IrLoop *l)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        uint32_t r = ir_call_receiver(f, i);
        uint32_t v = r != IR_NONE ? ir_root_var(f, r) : IR_NONE;
        if (v == IR_NONE || v >= f->vars.len || !f->vars.items[v].is_param || v == self_var) continue;
        for (uint32_t k = 0; k < o->nargs; k++) {
            const AVal *a = &ff->val[f->args.items[o->args + k]];
            if (GL_MAX(a->grad, a->elem) == G_LIVE) return true;
        }
    }
    return false;
}

/* The small whole number (at most 16) that op is, a literal or a name the function binds only
 * to one such literal (`num_to_plot = 5`); -1 otherwise. */
static long small_count(const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    /* (a name: its bindings are looked up in the function, when that is of ordinary size: each
     * reported loop asks, so a huge body of many loops would be quadratic) */
    if (o->kind == IR_LOAD && o->var != IR_NONE && !o->qual && f->ops.len <= 20000) {
        uint32_t lit = IR_NONE;
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *s = &f->ops.items[i];
            if ((s->kind != IR_STORE && s->kind != IR_PARAM && s->kind != IR_DEL) || s->var != o->var) continue;
            if (s->kind != IR_STORE || lit != IR_NONE || s->a == IR_NONE) return -1;
            lit = s->a;
        }
        if (lit == IR_NONE) return -1;
        o = &f->ops.items[lit];
    }
    if (o->kind != IR_CONST || o->aux != CONST_INT || !o->name) return -1;
    char *end;
    long n = strtol(o->name, &end, 10);
    return *end || n < 0 || n > 16 ? -1 : n;
}

/* Does loop l run a few times at most, by a count written in the code (`for i in range(5)`: a
 * handful of single pictures shown after training, not a pass over a held-out set), the model
 * given what this iteration made (`test_set[i][0]`), not what an iteration before it left (a
 * greedy decoder writing each token into its input)? */
static bool few_fixed_iterations(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t call)
{
    const IrLoop *l = &f->loops.items[li];
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrOp *co = &f->ops.items[call];
    for (uint32_t k = 0; k < co->nargs; k++) {
        const AVal *a = &ff->val[f->args.items[co->args + k]];
        if (a->carried == li || a->def == IR_NONE || !ir_loop_contains(f, li, a->def)) return false;
    }
    /* (not one nested in another loop: samples shown between training steps, or a sliding window
     * over each image of a set, run the model every time round the outer loop) */
    if (l->iter == IR_NONE || l->is_while || l->parent != IR_NONE) return false;
    const IrOp *it = &f->ops.items[l->iter];
    if (it->kind != IR_CALL || it->a == IR_NONE || !it->nargs || it->nargs > 2) return false;
    const IrOp *callee = &f->ops.items[it->a];
    if (callee->kind != IR_LOAD || callee->qual || !callee->name || api_builtin(callee->name) != B_RANGE) return false;
    for (uint32_t k = 0; k < it->nargs; k++)
        if (f->kw.items[it->args + k] || small_count(f, f->args.items[it->args + k]) < 0) return false;
    return true;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Where GL101 and GL102 (which run before this rule) reported leaks in the file: the byte
 * offsets of their findings, sorted. */
static uint32_t *leak_offsets(RuleCtx *c, uint32_t *n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->out->len; i++)
        k += c->out->items[i].rule == RULE_GL101 || c->out->items[i].rule == RULE_GL102;
    uint32_t *at = ARENA_NEW_N(c->arena, uint32_t, k ? k : 1);
    *n = 0;
    for (uint32_t i = 0; i < c->out->len; i++)
        if (c->out->items[i].rule == RULE_GL101 || c->out->items[i].rule == RULE_GL102)
            at[(*n)++] = c->out->items[i].span.start;
    qsort(at, *n, sizeof *at, cmp_u32);
    return at;
}

/* Whether one of those leaks lies inside loop l. A loop that keeps a graph-carrying value because
 * it accumulates or collects it is still an evaluation pass: its forward saves activations no
 * backward frees, and the reader who fixes the leak with `.item()` still has that peak. A loop
 * that keeps values for the update that follows (a rollout) is neither rule's, nor this one's. */
static bool leak_reported_in(const uint32_t *at, uint32_t n, const IrFunc *f, const IrLoop *l)
{
    uint32_t lo = 0, hi = n, end = l->span.end; /* (the loop's span is its header: the body's ops end it) */
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++) end = GL_MAX(end, f->ops.items[i].span.end);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (at[mid] < l->span.start) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && at[lo] < end;
}

/* Builtins that read a value and keep nothing of it. */
static bool reads_only(const IrFunc *f, uint32_t callee)
{
    static const char *const names[] = {"print", "len", "float", "int", "str", "bool", "isinstance", "repr",
                                        "format", "round", "abs", "min", "max", "range", "enumerate", "zip"};
    const IrOp *o = &f->ops.items[callee];
    if (o->kind != IR_LOAD || o->var >= f->vars.len || !f->vars.items[o->var].is_global) return false;
    for (uint32_t i = 0; i < ARRAY_LEN(names); i++)
        if (!strcmp(f->vars.items[o->var].name, names[i])) return true;
    return false;
}

/* Does loop l run a model that is an attribute of var (`model.decode(memory, ys)` taken for a
 * model call)? */
static bool model_base_in_loop(RuleCtx *c, const IrFunc *f, const IrLoop *l, uint32_t var)
{
    for (uint32_t i = l->op + 1; i < l->end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || o->a == IR_NONE || f->ops.items[o->a].kind != IR_ATTR || !df_is_module_call(c->fx, f, i))
            continue;
        uint32_t b = f->ops.items[o->a].a;
        if (b != IR_NONE && f->ops.items[b].kind == IR_LOAD && f->ops.items[b].var == var) return true;
    }
    return false;
}

/* A graph-carrying value handed to a call that may keep it: a function of the file that stores
 * into attributes, items, globals or containers, or a method of an object (`agent.remember(lp)`,
 * `meter.update(loss)`). Torch functions, tensor methods, models, loss modules, reading builtins
 * and plain functions gradleak cannot see (`criterion(out, y)`) keep nothing. */
static bool hands_graph_away(RuleCtx *c, const IrFunc *f, const IrLoop *l)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    /* a loop over batches (a loader, an iterable of unknown items) that hands its loss to an
     * object gradleak cannot see (`logger.update_loss(loss)`, `metric.update(out, y)`) is still an
     * evaluation pass: keeping it there would be worse, differentiating it later is what rollouts
     * and replay buffers do (ranges and while loops), not evaluation over a loader */
    bool batches = l->op + 1 < l->end && f->ops.items[l->op + 1].kind == IR_NEXT &&
                   (ff->val[l->op + 1].flags & VF_BATCH);
    for (uint32_t i = l->op + 1; i < l->end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || o->a == IR_NONE || df_is_module_call(c->fx, f, i)) continue;
        if (o->qual && !strncmp(o->qual, "torch.", 6)) continue;
        const AVal *callee = &ff->val[o->a];
        if (callee->kind == VK_MODULE || (callee->flags & VF_LOSSMOD) || reads_only(f, o->a)) continue;
        if (df_is_env_step(c->fx, f, i)) continue; /* env.step(action): the simulator keeps no graph */
        uint32_t r = ir_call_receiver(f, i);
        if (r != IR_NONE && ff->val[r].kind == VK_TENSOR) continue;
        /* a list of the function's own (`preds.append(out)`): what it keeps is keeps_graph's */
        if (r != IR_NONE && ff->val[r].kind == VK_CONTAINER && f->ops.items[r].kind == IR_LOAD &&
            f->ops.items[r].var < f->vars.len && local_only(f, f->ops.items[r].var, &ff->val[r]))
            continue;
        /* an object the function made for itself and never returns (a beam search's `nodes =
         * PriorityQueue()`): what it holds dies at the return */
        if (r != IR_NONE && f->ops.items[r].kind == IR_LOAD && f->ops.items[r].var < f->vars.len &&
            own_object(c, f, f->ops.items[r].var, &ff->val[r]))
            continue;
        /* `model.generator(out)` where the loop runs `model.decode(...)` as a model: another part
         * of that model */
        if (r != IR_NONE && f->ops.items[r].kind == IR_LOAD && model_base_in_loop(c, f, l, f->ops.items[r].var)) continue;
        uint32_t t = df_call_target(c->m, c->fx, f, i);
        if (t != IR_NONE && !df_func_stores_outside(c->m, t, false)) continue; /* loss_function(out, x): reads only */
        /* a plain function gradleak cannot see (`criterion(out, y)`, `iou(out, y)`, a module's
         * `utils.to_image(out)`) computes from its arguments; objects (`buffer.push(x)`,
         * `meter.update(x)`) are what keep them */
        if (t == IR_NONE && (r == IR_NONE || ff->val[r].kind == VK_MODREF)) continue;
        if (t == IR_NONE && batches && ff->val[r].kind != VK_CONTAINER) {
            /* unless another file's class is known to keep it (GL101/GL102 report that) */
            const ExternSummary *es = df_call_extern(c->fx, f, i);
            if (!es || (!es->keep_acc && !es->keep_coll)) continue;
        }
        /* `self.criterion(out, y)`: a callable the object holds (no method of the class), which is
         * the plain function above, not an object that keeps what it is given */
        if (t == IR_NONE && f->cls != IR_NONE && f->ops.items[r].kind == IR_LOAD &&
            f->ops.items[r].var != IR_NONE && f->vars.items[f->ops.items[r].var].is_param &&
            f->ops.items[r].var == ir_first_param(f) && ir_call_method(f, i) &&
            ir_class_method(c->m, f->cls, ir_call_method(f, i)) == IR_NONE)
            continue;
        for (uint32_t k = 0; k < o->nargs; k++) {
            const AVal *a = &ff->val[f->args.items[o->args + k]];
            if (GL_MAX(a->grad, a->elem) == G_LIVE) return true;
        }
    }
    return false;
}

/* Whether what loop li keeps past an iteration may serve a backward: it is held beyond the
 * function (an attribute, a global, a caller's container) or handed to an object that may keep it,
 * or the function itself trains. Kept only in locals of a function that trains nothing and returns
 * no graph (a forecast collecting its predictions), it dies unused at the return. */
static bool keeps_for_backward(RuleCtx *c, const IrFunc *f, const FuncFacts *ff, uint32_t li)
{
    int kept = keeps_graph(c, f, ff, li);
    return kept == KEEPS_BEYOND || (kept == KEEPS_IN_LOCALS && (ff->trains || df_func_backprops(c->fx, f->index))) ||
           hands_graph_away(c, f, &f->loops.items[li]);
}

/* How a training guard reads its flag: `if train:` (trains when truthy), `if optimizer is not None:`,
 * `if not cross_valid:` (trains when falsy), or the else side of these. */
enum { GUARD_TRUTHY = 1, GUARD_NOT_NONE, GUARD_FALSY, GUARD_EQ };

/* `mode == "train"`, `mode == "train" or mode == "train+log"`: the variable compared to string
 * literals with ==, and the literals (at most 4); IR_NONE otherwise. */
static uint32_t guard_eq(const IrFunc *f, uint32_t op, const char **lits, int *n)
{
    uint32_t stack[8], sp = 0, var = IR_NONE;
    stack[sp++] = op;
    *n = 0;
    while (sp) {
        const IrOp *o = &f->ops.items[stack[--sp]];
        if (o->kind == IR_SELECT && o->a != IR_NONE && o->b != IR_NONE && sp + 2 <= ARRAY_LEN(stack)) {
            stack[sp++] = o->a, stack[sp++] = o->b;
            continue;
        }
        if (o->kind != IR_COMPARE || !o->name || strcmp(o->name, "==") || o->a == IR_NONE || o->b == IR_NONE) return IR_NONE;
        const IrOp *x = &f->ops.items[o->a], *y = &f->ops.items[o->b];
        if (x->kind != IR_LOAD || y->kind != IR_CONST || y->aux != CONST_STR || !y->name || *n == 4) return IR_NONE;
        if (var != IR_NONE && x->var != var) return IR_NONE;
        var = x->var, lits[(*n)++] = y->name;
    }
    return var;
}

/* The parameter that op, an `if`'s condition, tests, and how (GUARD_*, on the side in_else says);
 * IR_NONE when it tests something else. */
static uint32_t guard_of(const IrFunc *f, uint32_t op, bool in_else, int *how, const char **lits, int *nlits)
{
    const IrOp *cond = op != IR_NONE ? &f->ops.items[op] : NULL;
    bool neg = in_else;
    uint32_t eq = cond && !in_else ? guard_eq(f, op, lits, nlits) : IR_NONE;
    if (eq != IR_NONE) {
        *how = GUARD_EQ;
        return eq < f->vars.len && f->vars.items[eq].is_param && eq != ir_first_param(f) ? eq : IR_NONE;
    }
    if (cond && cond->kind == IR_UNOP && cond->aux == UN_NOT && cond->a != IR_NONE) cond = &f->ops.items[cond->a], neg = !neg;
    if (!cond) return IR_NONE;
    uint32_t var = IR_NONE;
    if (cond->kind == IR_LOAD) {
        var = cond->var, *how = neg ? GUARD_FALSY : GUARD_TRUTHY;
    } else if (cond->kind == IR_COMPARE && cond->name && cond->a != IR_NONE && cond->b != IR_NONE &&
               f->ops.items[cond->a].kind == IR_LOAD && f->ops.items[cond->b].kind == IR_CONST &&
               f->ops.items[cond->b].aux == CONST_NONE) {
        bool is_not = !strcmp(cond->name, "is not") || !strcmp(cond->name, "!=");
        bool is = !strcmp(cond->name, "is") || !strcmp(cond->name, "==");
        if ((is_not && !neg) || (is && neg)) var = f->ops.items[cond->a].var, *how = GUARD_NOT_NONE;
    }
    if (var == IR_NONE || var >= f->vars.len || !f->vars.items[var].is_param || var == ir_first_param(f)) return IR_NONE;
    return var;
}

/* Does a call's argument a (IR_NONE: left out, the parameter's default pdef applies) make the guard
 * false, and how does it read ("False", "None", "True")? */
static const char *guard_off_value(const IrFunc *g, const IrOp *a, uint8_t pdef, int how, const char **lits, int nlits)
{
    if (how == GUARD_EQ) { /* another string literal (`mode="eval"`) */
        if (!a || a->kind != IR_CONST || a->aux != CONST_STR || !a->name) return NULL;
        for (int k = 0; k < nlits; k++)
            if (!strcmp(a->name, lits[k])) return NULL;
        return a->name;
    }
    if (!a) {
        if (pdef == IR_PDEF_NONE && (how == GUARD_TRUTHY || how == GUARD_NOT_NONE)) return "None";
        if (pdef == IR_PDEF_FALSE && how == GUARD_TRUTHY) return "False";
        if (pdef == IR_PDEF_TRUE && how == GUARD_FALSY) return "True";
        return NULL;
    }
    (void)g;
    if (a->kind != IR_CONST || !a->name) {
        if (a->kind == IR_CONST && a->aux == CONST_NONE && how != GUARD_FALSY) return "None";
        return NULL;
    }
    if (a->aux == CONST_NONE && how != GUARD_FALSY) return "None";
    if (!strcmp(a->name, "False") && how == GUARD_TRUTHY) return "False";
    if (!strcmp(a->name, "None") && how != GUARD_FALSY) return "None";
    if (!strcmp(a->name, "True") && how == GUARD_FALSY) return "True";
    return NULL;
}

/* The attribute an `if`'s condition tests (`if self.eval_mode:`, `if not self.args.train:`), a
 * pseudo-variable rooted at a parameter, and whether the side in_else says runs when it is truthy
 * (GUARD_TRUTHY) or falsy (GUARD_FALSY); IR_NONE for any other test. */
static uint32_t attr_guard_of(const IrFunc *f, uint32_t op, bool in_else, int *how)
{
    if (op == IR_NONE) return IR_NONE;
    const IrOp *cond = &f->ops.items[op];
    bool neg = in_else;
    if (cond->kind == IR_UNOP && cond->aux == UN_NOT && cond->a != IR_NONE) cond = &f->ops.items[cond->a], neg = !neg;
    if (cond->kind != IR_ATTR || cond->var >= f->vars.len) return IR_NONE;
    uint32_t root = cond->var;
    for (int hops = 0; hops < 8 && f->vars.items[root].base != IR_NONE; hops++) root = f->vars.items[root].base;
    if (f->vars.items[root].base != IR_NONE || !f->vars.items[root].is_param) return IR_NONE;
    *how = neg ? GUARD_FALSY : GUARD_TRUTHY;
    return cond->var;
}

static bool call_trains(RuleCtx *c, const IrFunc *f, uint32_t op, bool whole_runs);

/* The flag every backward and optimizer step of loop li runs under: for each, the nearest test
 * around it on its training side reads the same variable the same way (*how). attr: the tests read
 * an attribute (attr_guard_of), and a call that runs a whole update trains too; else a parameter
 * (guard_of, whose string literals go to lits). IR_NONE when not that shape, or nothing trains. */
static uint32_t training_guard(RuleCtx *c, const IrFunc *f, uint32_t li, bool attr, int *how_out, const char **lits,
                               int *nlits)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrLoop *l = &f->loops.items[li];
    uint32_t flag = IR_NONE, stack[32], depth = 0;
    bool in_else[32] = {false};
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_IF) {
            if (depth == 32) return IR_NONE;
            in_else[depth] = false, stack[depth++] = i;
            continue;
        }
        if (o->kind == IR_ELSE && depth) in_else[depth - 1] = true;
        if (o->kind == IR_END_IF && depth) depth--;
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        if (!call_trains(c, f, i, attr)) continue;
        uint32_t guard = IR_NONE;
        int how = 0;
        for (uint32_t k = depth; k-- > 0 && guard == IR_NONE;)
            guard = attr ? attr_guard_of(f, f->ops.items[stack[k]].a, in_else[k], &how)
                         : guard_of(f, f->ops.items[stack[k]].a, in_else[k], &how, lits, nlits);
        if (guard == IR_NONE ||
            (flag != IR_NONE && (strcmp(f->vars.items[guard].name, f->vars.items[flag].name) || how != *how_out)))
            return IR_NONE;
        flag = guard, *how_out = how;
    }
    return flag;
}

/* The shared epoch loop (`def iteration(self, loader, train=True)`, `def loop(..., optimizer=None)`,
 * `def run_epoch(self, epoch, cross_valid=False)`): every backward and optimizer step of loop li
 * runs only under a test of one parameter of the function (`if train:`, `if optimizer is not
 * None:`, `if not cross_valid:`), and the file calls the function so that the test fails (False,
 * None, True, or the parameter left to such a default). Those calls run the loop as an evaluation
 * pass with grad on. Gives the flag's variable (IR_NONE when not that shape), in *caller the op of
 * such a call in function *caller_fn, and in *value how the call sets the flag. */
static uint32_t flag_guarded_training(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li, uint32_t *caller_fn,
                                      uint32_t *caller, const char **value)
{
    int flag_how = 0, nlits = 0;
    const char *lits[4];
    uint32_t flag = training_guard(c, f, li, false, &flag_how, lits, &nlits);
    if (flag == IR_NONE) return IR_NONE;
    /* the parameter's position and default, and a call of the function in the file that turns the
     * test off */
    uint32_t pos = IR_NONE;
    uint8_t pdef = 0;
    for (uint32_t i = 0; i < f->ops.len && pos == IR_NONE; i++)
        if (f->ops.items[i].kind == IR_PARAM && f->ops.items[i].var == flag) pos = f->ops.items[i].aux, pdef = f->ops.items[i].pad;
    if (pos == IR_NONE) return IR_NONE;
    const char *name = f->vars.items[flag].name;
    bool method = f->cls != IR_NONE;
    if (!fz->call_head) { /* one pass over the file's calls, not one per loop */
        uint32_t total = 0;
        for (uint32_t gi = 0; gi < c->m->funcs.len; gi++) total += c->m->funcs.items[gi]->ops.len;
        fz->call_head = gl_calloc(c->m->funcs.len + 1, sizeof *fz->call_head);
        fz->call_next = gl_calloc(total + 1, sizeof *fz->call_next);
        uint32_t base = 0;
        for (uint32_t gi = 0; gi < c->m->funcs.len; gi++) {
            const IrFunc *g = c->m->funcs.items[gi];
            const FuncFacts *gf = &c->fx->funcs[gi];
            for (uint32_t i = 0; gf->analysed && i < g->ops.len; i++) {
                if (g->ops.items[i].kind != IR_CALL || !gf->reached[i] || df_mode_off(g->ops.items[i].mode)) continue;
                uint32_t t = df_call_target(c->m, c->fx, g, i);
                if (t == IR_NONE || t == gi || t >= c->m->funcs.len) continue;
                fz->call_next[base + i] = fz->call_head[t];
                fz->call_head[t] = (uint64_t)gi << 32 | (i + 1);
            }
            base += g->ops.len;
        }
        fz->call_base = gl_calloc(c->m->funcs.len + 1, sizeof *fz->call_base);
        for (uint32_t gi = 0, b = 0; gi < c->m->funcs.len; b += c->m->funcs.items[gi]->ops.len, gi++) fz->call_base[gi] = b;
    }
    for (uint64_t e = fz->call_head[f->index]; e; ) {
        uint32_t gi = (uint32_t)(e >> 32), i = (uint32_t)e - 1;
        e = fz->call_next[fz->call_base[gi] + i];
        const IrFunc *g = c->m->funcs.items[gi];
        const IrOp *o = &g->ops.items[i];
        uint32_t np = 0; /* positional arguments so far (a method's self is not one) */
        const IrOp *given = NULL;
        bool star = false; /* `f(*args)`, `f(**kw)`: what is passed is not known */
        for (uint32_t k = 0; k < o->nargs; k++) {
            const char *kw = g->kw.items[o->args + k];
            const IrOp *a = &g->ops.items[g->args.items[o->args + k]];
            if (kw && (!strcmp(kw, "*") || !strcmp(kw, "**"))) star = true;
            bool here = kw ? !strcmp(kw, name) : np + (method ? 1 : 0) == pos;
            if (!kw) np++;
            if (here) given = a;
        }
        if (!given && (star || pdef == 0)) continue;
        const char *v = guard_off_value(g, given, pdef, flag_how, lits, nlits);
        if (v) {
            *caller_fn = gi, *caller = i, *value = v;
            return flag;
        }
    }
    return IR_NONE;
}

/* Which side of a test of flag (a parameter; with attr, an attribute, by name) op sits on, inside
 * loop l: +1 the side whose test reads as how, -1 another, 0 under no test of it. */
static int flag_side(const IrFunc *f, const IrLoop *l, uint32_t op, uint32_t flag, bool attr, int how)
{
    int depth = 0;
    bool in_else = false;
    for (uint32_t k = op; k-- > l->op + 1;) {
        const IrOp *o = &f->ops.items[k];
        if (o->kind == IR_END_IF) depth++;
        else if (o->kind == IR_ELSE && depth == 0) in_else = true;
        else if (o->kind == IR_IF && depth > 0) depth--;
        else if (o->kind == IR_IF) {
            const char *lits[4];
            int h = 0, n = 0;
            uint32_t v = attr ? attr_guard_of(f, o->a, in_else, &h) : guard_of(f, o->a, in_else, &h, lits, &n);
            if (v != IR_NONE && (attr ? !strcmp(f->vars.items[v].name, f->vars.items[flag].name) : v == flag))
                return h == how ? 1 : -1;
            in_else = false;
        }
    }
    return 0;
}

/* Is op inside loop li on the training side of a test of flag (`else:` of `if cross_valid:`)? */
static bool on_training_side(const IrFunc *f, const IrLoop *l, uint32_t op, uint32_t flag)
{
    return flag_side(f, l, op, flag, false, 0) != 0;
}

/* The conditional form: a loop that trains only under `if <flag>:`, run with the flag False by a
 * call of the file (flag_guarded_training). Reported at the loop's first model call. */
static bool report_flag_evaluation(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrLoop *l = &f->loops.items[li];
    uint32_t caller_fn = IR_NONE, caller = IR_NONE;
    const char *value = "False";
    uint32_t flag = flag_guarded_training(c, fz, f, li, &caller_fn, &caller, &value);
    if (flag == IR_NONE) return false;
    /* `with torch.set_grad_enabled(train):` around it, and the call passes train=False */
    if (df_call_passes_false(c->m->funcs.items[caller_fn], caller, f)) return true;
    uint32_t call = IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++)
        if (ff->reached[i] && !df_mode_off(f->ops.items[i].mode) && df_is_module_call(c->fx, f, i) &&
            !model_frozen(c, fz, f, i) && !on_training_side(f, l, i, flag))
            call = i;
    /* (a callable passed in whose result the guarded backward differentiates, `logits, loss, acc =
     * classifier(batch)`, is the model, though nothing else says so) */
    for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || df_mode_off(o->mode) || o->a == IR_NONE) continue;
        const IrOp *callee = &f->ops.items[o->a];
        if (callee->kind == IR_LOAD && callee->var < f->vars.len && f->vars.items[callee->var].is_param &&
            callee->var != flag && GL_MAX(ff->val[i].grad, ff->val[i].elem) >= G_MAY && !model_frozen(c, fz, f, i) &&
            !on_training_side(f, l, i, flag))
            call = i;
    }
    if (call == IR_NONE) return false;
    const char *fname = f->vars.items[flag].name;
    const IrFunc *g = c->m->funcs.items[caller_fn];
    Diag *d = rule_report(c, f->ops.items[call].span, SEV_WARNING,
                          "with '%s' %s (the call at line %u), the loop at line %u runs '%s' with autograd on and "
                          "never calls backward(): every iteration's forward keeps its activations for a backward "
                          "that never comes (peak memory of training, 2-10x that of %s)",
                          fname, value, rule_line(g->ops.items[caller].span), rule_line(l->span), rule_text(c, f, call),
                          rule_no_grad_name(c));
    d->loop_line = rule_line(l->span);
    rule_related(c, d, g->ops.items[caller].span, "called with '%s' %s: the loop evaluates", fname, value);
    rule_related(c, d, l->span, "backward() runs only when '%s' is not %s", fname, value);
    rule_trace(c, d, "every backward and optimizer step of the loop at line %u is under a test of '%s', a parameter "
               "of '%s' that line %u passes as %s", rule_line(l->span), fname, rule_func_name(c, f->qualname),
               rule_line(g->ops.items[caller].span), value);
    /* the grad mode the flag asks for: `set_grad_enabled(train)`, `(optimizer is not None)`,
     * `(not cross_valid)` */
    const char *on = !strcmp(value, "None") ? arena_printf(c->arena, "%s is not None", fname)
                   : !strcmp(value, "True") ? arena_printf(c->arena, "not %s", fname)
                   : !strcmp(value, "False") ? fname : NULL;
    if (!on) { /* `mode="eval"`: the test the loop trains under */
        uint32_t ifop = IR_NONE;
        for (uint32_t i = l->op + 1; i < l->end && ifop == IR_NONE; i++)
            if (f->ops.items[i].kind == IR_IF && f->ops.items[i].a != IR_NONE) {
                const char *lits[4];
                int n = 0;
                if (guard_eq(f, f->ops.items[i].a, lits, &n) == flag) ifop = f->ops.items[i].a;
            }
        on = ifop != IR_NONE ? ir_span_text(c->m, f->ops.items[ifop].span, c->arena) : fname;
    }
    rule_hint(c, d, "Run the loop under `with torch.set_grad_enabled(%s):`; model.eval() does not turn autograd off", on);
    rule_fix_wrap_loop(c, f, li, d, FIX_UNSAFE, arena_printf(c->arena, "set_grad_enabled(%s)", on));
    return true;
}

/* Do two string literals, as written, hold the same text ('train' and "train")? */
static bool same_literal(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na >= 2 && (a[0] == '\'' || a[0] == '"') && a[na - 1] == a[0]) a++, na -= 2;
    if (nb >= 2 && (b[0] == '\'' || b[0] == '"') && b[nb - 1] == b[0]) b++, nb -= 2;
    return na == nb && !memcmp(a, b, na);
}

/* The phase variable of loop li: every backward and optimizer step of the loop runs on the then side
 * of an `if <var> == "<lit>":` (lits, at most 4), and var is the target of an enclosing loop. When
 * that loop runs over a list of string literals (`for phase in ["train", "val"]:`, or a name bound
 * once to such a list), one of them must be none of lits (*off); over anything else (a parameter,
 * `dataloaders.keys()`), the test against a literal is what says other phases come (*off NULL).
 * IR_NONE when not that shape. */
static uint32_t phase_guard(RuleCtx *c, const IrFunc *f, uint32_t li, const char **lits, int *nlits, const char **off)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrLoop *l = &f->loops.items[li];
    uint32_t var = IR_NONE, stack[32], depth = 0;
    bool in_else[32] = {false};
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_IF) {
            if (depth == 32) return IR_NONE;
            in_else[depth] = false, stack[depth++] = i;
            continue;
        }
        if (o->kind == IR_ELSE && depth) in_else[depth - 1] = true;
        if (o->kind == IR_END_IF && depth) depth--;
        if (o->kind != IR_CALL || !ff->reached[i] || !call_trains(c, f, i, false)) continue;
        uint32_t v = IR_NONE;
        for (uint32_t k = depth; k-- > 0 && v == IR_NONE;) {
            if (in_else[k]) continue;
            const char *ls[4];
            int n = 0;
            v = guard_eq(f, f->ops.items[stack[k]].a, ls, &n);
            if (v != IR_NONE && var == IR_NONE) {
                for (int q = 0; q < n; q++) lits[q] = ls[q];
                *nlits = n;
            }
        }
        if (v == IR_NONE || (var != IR_NONE && v != var)) return IR_NONE;
        var = v;
    }
    if (var == IR_NONE) return IR_NONE;
    /* the enclosing loop that binds it, over string literals */
    for (uint32_t pi = l->parent; pi != IR_NONE; pi = f->loops.items[pi].parent) {
        const IrLoop *p = &f->loops.items[pi];
        if (p->op + 2 >= f->ops.len || p->iter == IR_NONE) continue;
        const IrOp *nx = &f->ops.items[p->op + 1], *st = &f->ops.items[p->op + 2];
        if (nx->kind != IR_NEXT || st->kind != IR_STORE || st->var != var) continue;
        const IrOp *it = &f->ops.items[p->iter];
        if (it->kind == IR_LOAD && it->var != IR_NONE) { /* `phases = ["train", "val"]` */
            uint32_t bound = IR_NONE;
            for (uint32_t i = 0; i < f->ops.len && f->ops.len <= 20000; i++) {
                const IrOp *b = &f->ops.items[i];
                if ((b->kind == IR_STORE || b->kind == IR_PARAM) && b->var == it->var) {
                    if (b->kind == IR_PARAM || bound != IR_NONE) { bound = IR_NONE; break; }
                    bound = b->a;
                }
            }
            if (bound != IR_NONE) it = &f->ops.items[bound];
        }
        *off = NULL;
        if (it->kind != IR_BUILD) return var; /* `for mode in modes:` (a parameter) */
        if (!it->nargs) return IR_NONE;
        for (uint32_t k = 0; k < it->nargs; k++) {
            const IrOp *e = &f->ops.items[f->args.items[it->args + k]];
            if (e->kind != IR_CONST || e->aux != CONST_STR || !e->name) return IR_NONE;
            bool training = false;
            for (int q = 0; q < *nlits && !training; q++) training = same_literal(e->name, lits[q]);
            if (!training && !*off) *off = e->name;
        }
        return *off ? var : IR_NONE;
    }
    return IR_NONE;
}

/* Is op, in loop l, on the then side of an `if <var> == "<lit>":`? */
static bool on_phase_side(const IrFunc *f, const IrLoop *l, uint32_t op, uint32_t var)
{
    int depth = 0;
    bool in_else = false;
    for (uint32_t k = op; k-- > l->op + 1;) {
        const IrOp *o = &f->ops.items[k];
        if (o->kind == IR_END_IF) depth++;
        else if (o->kind == IR_ELSE && depth == 0) in_else = true;
        else if (o->kind == IR_IF && depth > 0) depth--;
        else if (o->kind == IR_IF) {
            const char *lits[4];
            int n = 0;
            if (!in_else && guard_eq(f, o->a, lits, &n) == var) return true;
            in_else = false;
        }
    }
    return false;
}

/* The phase form: `for phase in ["train", "val"]:` around a batch loop that trains only under
 * `if phase == "train":` (phase_guard). The other phases run the loop as an evaluation pass with
 * grad on; reported at the loop's first model call off the training side. */
static bool report_phase_evaluation(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrLoop *l = &f->loops.items[li];
    const char *lits[4], *off = NULL;
    int nlits = 0;
    uint32_t var = phase_guard(c, f, li, lits, &nlits, &off);
    if (var == IR_NONE) return false;
    uint32_t call = IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++)
        if (ff->reached[i] && !df_mode_off(f->ops.items[i].mode) && df_is_module_call(c->fx, f, i) &&
            !model_frozen(c, fz, f, i) && !on_phase_side(f, l, i, var))
            call = i;
    /* (or a call of a function that evaluates, of the file or of another file of the run:
     * `trainer.eval_step(batch)` beside `trainer.train_step(batch)`) */
    for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || df_mode_off(o->mode) || on_phase_side(f, l, i, var)) continue;
        uint32_t t = df_call_target(c->m, c->fx, f, i);
        const ExternSummary *es = t == IR_NONE ? df_call_extern(c->fx, f, i) : NULL;
        if ((t != IR_NONE && t != f->index && df_func_evaluates(c->fx, t)) || (es && es->evaluates)) call = i;
    }
    if (call == IR_NONE) return false;
    const char *name = f->vars.items[var].name;
    uint32_t ifop = IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && ifop == IR_NONE; i++)
        if (f->ops.items[i].kind == IR_IF && f->ops.items[i].a != IR_NONE) {
            const char *ls[4];
            int n = 0;
            if (guard_eq(f, f->ops.items[i].a, ls, &n) == var) ifop = f->ops.items[i].a;
        }
    const char *on = ifop != IR_NONE ? ir_span_text(c->m, f->ops.items[ifop].span, c->arena) : name;
    Diag *d = rule_report(c, f->ops.items[call].span, SEV_WARNING,
                          "with '%s' %s%s, the loop at line %u runs '%s' with autograd on and never calls "
                          "backward(): every iteration's forward keeps its activations for a backward that never "
                          "comes (peak memory of training, 2-10x that of %s)",
                          name, off ? "" : "not ", off ? off : lits[0], rule_line(l->span), rule_text(c, f, call),
                          rule_no_grad_name(c));
    d->loop_line = rule_line(l->span);
    rule_related(c, d, l->span, "backward() runs only when `%s`", on);
    if (off)
        rule_trace(c, d, "every backward and optimizer step of the loop at line %u is under `%s`; '%s' also takes "
                   "%s from the loop around it", rule_line(l->span), on, name, off);
    else
        rule_trace(c, d, "every backward and optimizer step of the loop at line %u is under `%s`; '%s' takes its "
                   "values from the loop around it, and the test says some are not %s", rule_line(l->span), on,
                   name, lits[0]);
    if (c->cxx)
        rule_hint(c, d, "Put `torch::AutoGradMode grad_mode(%s);` at the top of the loop's block; module->eval() does "
                  "not turn autograd off", on);
    else
        rule_hint(c, d, "Run the loop under `with torch.set_grad_enabled(%s):`; model.eval() does not turn autograd off", on);
    rule_fix_wrap_loop(c, f, li, d, FIX_UNSAFE, arena_printf(c->arena, "set_grad_enabled(%s)", on));
    return true;
}

/* Anything in the loop's body that can hand a value to a later backward or run one itself. */
static bool loop_trains_or_yields(const IrFunc *f, const IrLoop *l)
{
    if (l->has_backward || l->has_opt_step || l->has_step_call || l->backward_after) return true;
    for (uint32_t i = l->op + 1; i < l->end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_YIELD || df_is_backward_call(f, i)) return true;
        /* a training loop inside it: an epoch loop, whatever else it runs */
        if (o->kind == IR_LOOP && o->aux < f->loops.len) {
            const IrLoop *k = &f->loops.items[o->aux];
            if (k->has_backward || k->has_opt_step || k->has_step_call) return true;
        }
    }
    return false;
}

/* Does call op of f train: a backward, an optimizer step, or a call of a function of the file that
 * makes a training step (with whole_runs, also one that trains in a loop of its own)? */
static bool call_trains(RuleCtx *c, const IrFunc *f, uint32_t op, bool whole_runs)
{
    if (df_call_trains(c->fx, f, op, whole_runs)) return true;
    /* `agent.update()` of an object whose class nothing names, by the method's name alone */
    if (df_call_target(c->m, c->fx, f, op) != IR_NONE || df_call_extern(c->fx, f, op)) return false;
    const ExternSummary *es = df_call_extern_listed(c->fx, f, op);
    return es && (es->trains || (whole_runs && es->backprops));
}

/* Does something train after loop li, in the rest of the enclosing loop's body (or of the
 * function): a backward, an optimizer step, a call of a function of the file that backpropagates?
 * (a rollout whose policy keeps its log-probs on the agent, then `agent.update()`). *next_train,
 * built on first use (one scan per function): per op, the first op at or after it that trains. */
static bool trains_after(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t **next_train)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (!*next_train) {
        uint32_t *nt = arena_alloc(c->scratch, sizeof *nt * (f->ops.len + 1));
        nt[f->ops.len] = IR_NONE;
        for (uint32_t i = f->ops.len; i-- > 0;) {
            bool trains = f->ops.items[i].kind == IR_CALL && ff->reached[i] && call_trains(c, f, i, true);
            nt[i] = trains ? i : nt[i + 1];
        }
        *next_train = nt;
    }
    const IrLoop *l = &f->loops.items[li];
    uint32_t end = l->parent != IR_NONE ? f->loops.items[l->parent].end : f->ops.len;
    uint32_t from = GL_MIN(l->end + 1, f->ops.len);
    return (*next_train)[from] < end;
}

/* The last op of loop li's body that trains: a backward, an optimizer step, a call of a function of
 * the file that trains, or the end of an inner loop that does one of these. li == IR_NONE: the last
 * such call at the function's own top level (its loops not counted). IR_NONE when nothing trains. */
static uint32_t last_training_op(RuleCtx *c, const IrFunc *f, uint32_t li)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t from = li == IR_NONE ? 0 : f->loops.items[li].op + 1;
    uint32_t end = li == IR_NONE ? f->ops.len : f->loops.items[li].end;
    uint32_t last = IR_NONE;
    for (uint32_t i = from; i < end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_LOOP && o->aux < f->loops.len && li != IR_NONE) {
            const IrLoop *k = &f->loops.items[o->aux];
            if (k->has_backward || k->has_opt_step || k->has_step_call) last = k->end;
            continue;
        }
        if (o->kind != IR_CALL || !ff->reached[i] || ir_op_loop(f, i) != li) continue;
        /* (in an epoch loop, a call that runs a whole epoch of training: `trainer.train(X, Y)`) */
        if (call_trains(c, f, i, li != IR_NONE && f->loops.items[li].kind == LOOP_EPOCH)) last = i;
    }
    return last;
}

/* Whether what op computes, followed through the rest of loop li's iteration, reaches a place where
 * its graph could still be used: a backward, a function that trains or keeps its arguments, a
 * store into an attribute, an item or a container, a global, a return or yield, or a variable the
 * next iteration reads before its training ends. Values without a graph (`.item()`, numpy,
 * detached) go anywhere. */
static bool taint_reaches_graph_use(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end,
                                    bool before, uint8_t *op_span, uint8_t *var_t, uint32_t *stored, uint32_t *nstored);

static bool result_may_feed(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end, bool before,
                            uint8_t *var_t);

/* var_t: one byte per variable of f, all 0 on entry and on return (the caller allocates it once
 * per function: a file of many loops must not pay for every variable per loop). */
static bool result_may_be_differentiated(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end,
                                         uint8_t *var_t)
{
    return result_may_feed(c, f, li, op, train_end, false, var_t);
}

/* before: op runs before the step's backward, where what it computes may still become the loss:
 * handed to a function or method gradleak cannot see, or stored on an object, it may. */
static bool result_may_feed(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end, bool before,
                            uint8_t *var_t)
{
    uint32_t end = li == IR_NONE ? f->ops.len : f->loops.items[li].end;
    /* the ops of [op, end) and the variables they store: the body's size, not the function's */
    uint8_t *op_span = arena_alloc(c->scratch, end - op + 1);
    uint32_t *stored = arena_alloc(c->scratch, sizeof *stored * (end - op + 1)), nstored = 0;
    bool r = taint_reaches_graph_use(c, f, li, op, train_end, before, op_span, var_t, stored, &nstored);
    for (uint32_t k = 0; k < nstored; k++) var_t[stored[k]] = 0;
    return r;
}

static bool taint_reaches_graph_use(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end,
                                    bool before, uint8_t *op_span, uint8_t *var_t, uint32_t *stored, uint32_t *nstored)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t end = li == IR_NONE ? f->ops.len : f->loops.items[li].end; /* li: the function's body */
#define op_t(x) ((x) >= op && (x) < end && op_span[(x) - op])
    op_span[0] = 1;
    for (uint32_t i = op + 1; i < end; i++) {
        const IrOp *o = &f->ops.items[i];
        bool t = (o->a != IR_NONE && op_t(o->a)) || (o->b != IR_NONE && op_t(o->b)) || (o->c != IR_NONE && op_t(o->c)) ||
                 (o->kind == IR_LOAD && o->var < f->vars.len && var_t[o->var]);
        bool targ = false;
        for (uint32_t k = 0; k < o->nargs && (o->kind == IR_CALL || o->kind == IR_BUILD); k++) {
            uint32_t a = f->args.items[o->args + k]; /* (a display holds what it is built from) */
            if (op_t(a)) t = true, targ = o->kind == IR_CALL;
        }
        if (!t) continue;
        op_span[i - op] = 1;
        const AVal *v = &ff->val[i];
        bool live = GL_MAX(v->grad, v->elem) == G_LIVE;
        switch (o->kind) {
        case IR_STORE:
            if (o->var < f->vars.len) {
                if (!var_t[o->var]) stored[(*nstored)++] = o->var;
                var_t[o->var] = 1;
                if (live && f->vars.items[o->var].is_global) return true;
            }
            break;
        case IR_SET_ATTR: case IR_SET_ITEM: case IR_RETURN: case IR_YIELD:
            if (before && o->kind == IR_SET_ATTR) return true; /* (`rnn.hidden = torch.cat(h...)`) */
            if (GL_MAX(ff->val[o->kind == IR_SET_ITEM ? o->c : o->kind == IR_SET_ATTR ? o->b : o->a].grad,
                       ff->val[o->kind == IR_SET_ITEM ? o->c : o->kind == IR_SET_ATTR ? o->b : o->a].elem) == G_LIVE)
                return true;
            break;
        case IR_CALL: {
            if (df_is_backward_call(f, i)) return true;
            if (!targ) break;
            uint32_t r = ir_call_receiver(f, i), tg = df_call_target(c->m, c->fx, f, i);
            bool arg_live = false;
            for (uint32_t k = 0; k < o->nargs; k++) {
                const AVal *a = &ff->val[f->args.items[o->args + k]];
                if (op_t(f->args.items[o->args + k]) && GL_MAX(a->grad, a->elem) == G_LIVE) arg_live = true;
            }
            if (!arg_live) break;
            if (tg != IR_NONE && (c->fx->funcs[tg].trains || df_func_stores_outside(c->m, tg, false))) return true;
            /* a method of an object gradleak cannot see (`self.train_loss.sharded_compute_loss(batch,
             * outputs)`); a plain callable (`loss_fn(pred, y)`) computes a value, followed above */
            if (before && tg == IR_NONE && r != IR_NONE && !op_t(r) && !(o->qual && api_is_torch(o->qual)) &&
                !df_is_module_call(c->fx, f, i) && !(o->a != IR_NONE && (ff->val[o->a].flags & VF_LOSSMOD)) &&
                !(api_method(ir_call_method(f, i)).flags & M_TENSOR_TOO))
                return true;
            if (r != IR_NONE && !op_t(r) && (api_method(ir_call_method(f, i)).flags & M_MUTATES)) return true;
            break;
        }
        default: break;
        }
    }
    /* the next iteration trains on it (`out = model(x_next)` read by the next step's loss), unless
     * it binds the name again first (`pred = net(x)` at the top of the step, or of the inner loop
     * of batches that reads it: the new value) */
    uint32_t depth = 0; /* of the ifs and trys in the body: a store there may not run */
    for (uint32_t i = li == IR_NONE ? end : f->loops.items[li].op + 1; i <= train_end && i < end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_IF || o->kind == IR_TRY) depth++;
        else if ((o->kind == IR_END_IF || o->kind == IR_END_TRY) && depth) depth--;
        else if (o->kind == IR_STORE && !depth && o->var < f->vars.len && (ir_op_loop(f, i) == li || ir_loop_contains(f, li, i)))
            var_t[o->var] = 0; /* (also in the inner step loop, before the read there: `pred = model(xb)`) */
        if (o->kind == IR_LOAD && o->var < f->vars.len && var_t[o->var]) return true;
    }
#undef op_t
    return false;
}

/* The unsafe fix of the statement form: the statement that holds the call (`pred = net(x)`, or
 * the call alone) wrapped in `with torch.no_grad():`; later statements then compute from a value
 * without a graph. Nothing when the call is part of a longer statement gradleak cannot delimit. */
static void fix_wrap_statement(RuleCtx *c, const IrFunc *f, uint32_t call, uint32_t li, Diag *d)
{
    const char *torch = rule_torch_name(c);
    if (c->cxx || !torch) return;
    const IrOp *o = &f->ops.items[call];
    uint32_t start = o->span.start, end = o->span.end;
    for (uint32_t i = call + 1; i < (li == IR_NONE ? f->ops.len : f->loops.items[li].end); i++) {
        const IrOp *s = &f->ops.items[i];
        bool from_call = s->a == call || (s->a != IR_NONE && f->ops.items[s->a].kind == IR_UNPACK &&
                                          f->ops.items[s->a].a == call);
        if ((s->kind == IR_STORE || s->kind == IR_EXPR) && from_call) {
            start = GL_MIN(start, s->span.start), end = GL_MAX(end, s->span.end);
            if (s->kind == IR_EXPR || f->ops.items[s->a].kind != IR_UNPACK) break;
            continue; /* the other targets of `out, h = net(x, h)` */
        }
        if (s->kind == IR_STORE || s->kind == IR_EXPR || s->kind == IR_SET_ATTR || s->kind == IR_SET_ITEM) {
            if (start == o->span.start && end == o->span.end) {
                /* part of a longer statement (`err = loss(net(xv), yv)`, `save(net(z).detach())`):
                 * that statement, when its span holds the call; else nothing to delimit */
                uint32_t v = s->kind == IR_SET_ATTR ? s->b : s->kind == IR_SET_ITEM ? s->c : s->a;
                uint32_t ss = s->span.start, se = s->span.end; /* the target, and the value */
                if (v != IR_NONE) ss = GL_MIN(ss, f->ops.items[v].span.start), se = GL_MAX(se, f->ops.items[v].span.end);
                if (ss > o->span.start || se < o->span.end) return;
                start = ss, end = se;
            }
            break;
        }
    }
    Edit *edits;
    uint32_t n;
    const char *with = arena_printf(c->arena, "with %s.no_grad()", torch);
    if (!rule_fix_wrap(c, start, end, with, &edits, &n)) return;
    rule_fix_edits(c, d, FIX_UNSAFE, arena_printf(c->arena, "Run line %u under `%s:`", rule_line(o->span), with), edits, n);
}

/* The statement forms' candidate: the first model call from op `from` on, after train_end in loop
 * li's own body (or, li == IR_NONE, at the function's top level; a call of the file's function that
 * evaluates counts in a loop) with grad on, not only after an error, the model not frozen, and what
 * it computes reaching no backward; IR_NONE when there is none. */
static uint64_t helper_site(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t call);

static bool helper_seen(const Frozen *fz, uint64_t site)
{
    for (uint32_t k = 0; k < fz->helper_sites.len; k++)
        if (fz->helper_sites.items[k] == site) return true;
    return false;
}

/* helpers_only: only calls of the file's functions whose model call is not reported yet (the
 * candidates after a loop's first: cheap to skip before the costly checks) */
static uint32_t next_eval_after(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li, uint32_t train_end,
                                uint32_t from, bool helpers_only, uint8_t *var_t)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t end = li == IR_NONE ? f->ops.len : f->loops.items[li].end;
    for (uint32_t i = GL_MAX(from, train_end + 1); i < end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || ir_op_loop(f, i) != li || df_mode_off(o->mode)) continue;
        const AVal *callee = o->a != IR_NONE ? &ff->val[o->a] : NULL;
        bool model = !helpers_only && callee && (callee->kind == VK_MODULE || (callee->flags & VF_MAYBE_MODULE)) &&
                     df_is_module_call(c->fx, f, i);
        if (!model && li != IR_NONE) {
            uint32_t t = df_call_target(c->m, c->fx, f, i);
            model = t != IR_NONE && t != f->index && df_func_evaluates(c->fx, t) &&
                    !df_call_passes_false(f, i, c->m->funcs.items[t]);
            if (model && helpers_only) {
                uint64_t site = helper_site(c, fz, f, i);
                model = site != HELPER_NONE && !helper_seen(fz, site);
            }
        }
        if (model && !rule_on_error_path(c, f, i) && !model_frozen(c, fz, f, i) &&
            !result_may_be_differentiated(c, f, li, i, train_end, var_t))
            return i;
    }
    return IR_NONE;
}

/* Is the value of op made by a torch factory (`torch.randn(64, nz)`), through variables, moves
 * (`.cuda()`, `.to(device)`), `.data` and one-argument wrappers (`Variable(...)`)? */
static bool made_by_factory(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    for (int depth = 0; depth < 8 && op != IR_NONE && op < f->ops.len; depth++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind == IR_LOAD) {
            uint32_t def = ff->val[op].def;
            if (def == op) return false;
            op = def;
        } else if (o->kind == IR_ATTR && api_attr(o->name) == EFF_DETACH) {
            op = o->a;
        } else if (o->kind == IR_CALL) {
            if (api_function(o->qual) == EFF_FACTORY) return true;
            const char *m = ir_call_method(f, op);
            if (m) {
                if (api_method(m).effect != EFF_MOVE) return false;
                op = ir_call_receiver(f, op);
            } else {
                if (o->nargs != 1 || df_is_module_call(c->fx, f, op)) return false;
                op = f->args.items[o->args];
            }
        } else {
            return false;
        }
    }
    return false;
}

/* Is the model call's input noise made by a torch factory rather than data: a generator's sample? */
static bool fed_noise(RuleCtx *c, const IrFunc *f, uint32_t call)
{
    const IrOp *o = &f->ops.items[call];
    return o->nargs >= 1 && !f->kw.items[o->args] && made_by_factory(c, f, f->args.items[o->args]);
}

/* The statement form's candidate `predict(model, X)`, a call of the file's function t that
 * evaluates: the model call t runs at its top level (through a few such functions: score() calls
 * predict()), the line a reader points at and where the decorator goes. IR_NONE when the model
 * runs in a loop there (that loop is a finding of its own), with grad off, or is not found. *in:
 * the function that holds it. */
static uint32_t helper_model_call(RuleCtx *c, Frozen *fz, uint32_t t, uint32_t *in)
{
    for (int depth = 0; depth < 4 && t != IR_NONE; depth++) {
        const IrFunc *g = c->m->funcs.items[t];
        const FuncFacts *gf = &c->fx->funcs[t];
        if (!gf->analysed || df_mode_off(g->base_mode)) return IR_NONE;
        uint32_t next = IR_NONE;
        for (uint32_t k = 0; k < g->ops.len; k++) {
            const IrOp *o = &g->ops.items[k];
            if (o->kind != IR_CALL || !gf->reached[k] || df_mode_off(o->mode)) continue;
            if (df_is_module_call(c->fx, g, k)) {
                if (ir_op_loop(g, k) != IR_NONE || model_frozen(c, fz, g, k)) return IR_NONE;
                *in = t;
                return k;
            }
            uint32_t t2 = next == IR_NONE && ir_op_loop(g, k) == IR_NONE ? df_call_target(c->m, c->fx, g, k) : IR_NONE;
            if (t2 != IR_NONE && t2 != t && df_func_evaluates(c->fx, t2)) next = t2;
        }
        t = next;
    }
    return IR_NONE;
}

/* helper_model_call of call's target, memoized per target (a loop may call one helper many times). */
static uint64_t helper_site(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t call)
{
    uint32_t t = df_is_module_call(c->fx, f, call) ? IR_NONE : df_call_target(c->m, c->fx, f, call);
    if (t == IR_NONE) return HELPER_NONE;
    if (!fz->helper_of) fz->helper_of = gl_calloc(c->m->funcs.len + 1, sizeof *fz->helper_of);
    if (!fz->helper_of[t]) {
        uint32_t in = IR_NONE, at = helper_model_call(c, fz, t, &in);
        fz->helper_of[t] = at == IR_NONE ? HELPER_NONE : (uint64_t)in << 32 | at;
    }
    return fz->helper_of[t];
}

/* Is what call op computes (or a value made from it before train_end) read after train_end, in the
 * same iteration of loop li (`print(val_loss.item())` after the step)? Then its graph is held
 * through the backward. var_t is all 0 on entry and on return. */
static bool read_after_step(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t op, uint32_t train_end, uint8_t *var_t)
{
    uint32_t end = f->loops.items[li].end;
    uint8_t *span = arena_alloc(c->scratch, end - op + 1);
    memset(span, 0, end - op + 1);
    uint32_t *stored = arena_alloc(c->scratch, sizeof *stored * (end - op + 1)), nstored = 0;
    span[0] = 1;
#define in_t(x) ((x) != IR_NONE && (x) >= op && (x) < end && span[(x) - op])
    bool read = false;
    for (uint32_t i = op + 1; i < end && !read; i++) {
        const IrOp *o = &f->ops.items[i];
        if (i > train_end) {
            read = o->kind == IR_LOAD && o->var < f->vars.len && var_t[o->var];
            continue;
        }
        bool t = in_t(o->a) || in_t(o->b) || in_t(o->c) || (o->kind == IR_LOAD && o->var < f->vars.len && var_t[o->var]);
        for (uint32_t k = 0; k < o->nargs && !t && (o->kind == IR_CALL || o->kind == IR_BUILD); k++)
            t = in_t(f->args.items[o->args + k]);
        if (!t) continue;
        span[i - op] = 1;
        if (o->kind == IR_STORE && o->var < f->vars.len && !var_t[o->var]) var_t[o->var] = 1, stored[nstored++] = o->var;
    }
#undef in_t
    for (uint32_t k = 0; k < nstored; k++) var_t[stored[k]] = 0;
    return read;
}

/* Does the model that call op runs train inside its own forward (a meta-learner whose forward
 * steps its optimizer and returns accuracies)? */
static bool forward_trains(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const AVal *callee = o->a != IR_NONE ? &c->fx->funcs[f->index].val[o->a] : NULL;
    if (callee && (callee->kind == VK_MODULE || callee->kind == VK_OBJECT) && callee->ref < c->m->classes.len) {
        uint32_t fwd = c->m->classes.items[callee->ref]->forward;
        if (fwd != IR_NONE && (c->fx->funcs[fwd].trains || df_func_backprops(c->fx, fwd))) return true;
    }
    if (callee && callee->kind == VK_OBJECT && REF_IS_EXTERN(callee->ref) && c->fx->ext) { /* another file's */
        char buf[256];
        const ExternSummary *es = df_ext(c->fx, df_method_qual(c->fx, callee, "forward", buf, sizeof buf));
        if (es && es->trains) return true;
    }
    return call_trains(c, f, op, true);
}

/* The statement forms' hint and unsafe fix (the statement under no_grad). */
static void statement_hint_fix(RuleCtx *c, const IrFunc *f, uint32_t call, uint32_t li, Diag *d)
{
    if (c->cxx)
        rule_hint(c, d, "Run it in a block that starts with `torch::NoGradGuard no_grad;`");
    else
        rule_hint(c, d, "Run it under `with torch.no_grad():` (what is computed from its result then has no "
                        "graph either)");
    fix_wrap_statement(c, f, call, li, d);
}

/* The statement form: in a loop that trains, a model runs after the iteration's training (a
 * per-epoch validation forward on the whole dev set, a long prediction for the plots) and what it
 * computes never reaches a backward. */
static void report_eval_after_training(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li, uint8_t *var_t)
{
    const IrLoop *l = &f->loops.items[li];
    uint32_t train_end = last_training_op(c, f, li);
    if (train_end == IR_NONE) return;
    /* one per loop: the first evaluation names the place; and each function of the file it calls
     * to evaluate (`score(model, X)`, `get_cost(model, X)`), at the model call in it (at most 16
     * findings a loop: each candidate costs a walk of the loop's body) */
    uint32_t reported = 0;
    /* a model run on held-out data before the step's backward (`val_loss = loss_fn(model(val_x),
     * val_y)` beside the training loss, printed after the step): its graph is held through the
     * backward beside the step's */
    /* (the first 16 model calls: each costs a walk of the loop's body) */
    const FuncFacts *ff = &c->fx->funcs[f->index];
    for (uint32_t i = l->op + 1, tried = 0; i < train_end && tried < 16; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i] || ir_op_loop(f, i) != li || df_mode_off(o->mode)) continue;
        const AVal *callee = o->a != IR_NONE ? &ff->val[o->a] : NULL;
        if (!callee || (callee->kind != VK_MODULE && !(callee->flags & VF_MAYBE_MODULE)) ||
            !df_is_module_call(c->fx, f, i))
            continue;
        tried++;
        if (rule_on_error_path(c, f, i) || model_frozen(c, fz, f, i) ||
            detached_at_once(f, l, i) || result_may_feed(c, f, li, i, train_end, true, var_t) ||
            forward_trains(c, f, i) || !read_after_step(c, f, li, i, train_end, var_t))
            continue;
        Diag *d = rule_report(c, o->span, SEV_WARNING,
                              "'%s' runs with autograd on in the training loop at line %u, before its backward(), "
                              "and what it computes never reaches backward(): its forward keeps its activations "
                              "beside the training step's, for a backward that never comes",
                              rule_text(c, f, i), rule_line(l->span));
        d->loop_line = rule_line(l->span);
        rule_trace(c, d, "the loop at line %u trains up to line %u; this model call comes before that, is on no "
                   "error path, and its result reaches no backward, no function that trains or keeps it, no "
                   "store and no return", rule_line(l->span), rule_line(f->ops.items[train_end].span));
        statement_hint_fix(c, f, i, li, d);
        reported++;
        break;
    }
    for (uint32_t i = next_eval_after(c, fz, f, li, train_end, 0, false, var_t); i != IR_NONE && reported < 16;
         i = next_eval_after(c, fz, f, li, train_end, i + 1, true, var_t)) {
        /* a picture of the generator every few steps (`if step % 100 == 0: netG(fixed_noise)`)
         * runs one batch of noise after the step's graph is freed: its peak is the step's own, and
         * it evaluates nothing (a periodic test batch or held-out set still counts) */
        if (rule_on_periodic_path(c, f, i, li) && fed_noise(c, f, i)) continue;
        uint64_t site = helper_site(c, fz, f, i);
        if (site != HELPER_NONE && helper_seen(fz, site)) continue;
        if (site != HELPER_NONE) array_push(&fz->helper_sites, site);
        reported++;
        uint32_t in = site != HELPER_NONE ? (uint32_t)(site >> 32) : IR_NONE;
        uint32_t at = site != HELPER_NONE ? (uint32_t)site : IR_NONE;
        const IrFunc *g = at != IR_NONE ? c->m->funcs.items[in] : f;
        Diag *d;
        if (at != IR_NONE) {
            d = rule_report(c, g->ops.items[at].span, SEV_WARNING,
                            "'%s' in '%s' runs with autograd on: '%s' (line %u) calls it after the training step of "
                            "the loop at line %u, and what it computes never reaches backward(): its forward keeps "
                            "its activations for a backward that never comes (peak memory of training, 2-10x that "
                            "of %s)",
                            rule_text(c, g, at), rule_func_name(c, g->qualname), rule_text(c, f, i),
                            rule_line(f->ops.items[i].span), rule_line(l->span), rule_no_grad_name(c));
            rule_related(c, d, f->ops.items[i].span, "called here, after the training step");
            if (!c->cxx)
                rule_hint(c, d, "Decorate '%s' with `@torch.no_grad()` when no caller trains on what it returns, or "
                                "run the call at line %u under `with torch.no_grad():`",
                          rule_func_name(c, g->qualname), rule_line(f->ops.items[i].span));
        } else {
            d = rule_report(c, f->ops.items[i].span, SEV_WARNING,
                            "'%s' runs with autograd on after the training step of the loop at line %u, and what "
                            "it computes never reaches backward(): its forward keeps its activations for a "
                            "backward that never comes (peak memory of training, 2-10x that of %s)",
                            rule_text(c, f, i), rule_line(l->span), rule_no_grad_name(c));
        }
        d->loop_line = rule_line(l->span);
        rule_trace(c, d, "the loop at line %u trains up to line %u; this model call comes after it, is on no "
                   "error path, and its result reaches no backward, no function that trains or keeps it, no "
                   "store and no return", rule_line(l->span), rule_line(f->ops.items[train_end].span));
        if (at != IR_NONE && !c->cxx) fix_wrap_statement(c, f, i, li, d);
        else statement_hint_fix(c, f, i, li, d);
    }
}

/* The statement form in a function that makes one training step per call (`def train(epoch):` ...
 * `optimizer.step()`, then `model.eval(); output = model(features, adj)` for the validation
 * numbers, a loop of the caller running it every epoch): a model call at the function's top level
 * after its last training op, not on an error path, whose result reaches no backward, no
 * function that trains or keeps it, no store and no return of its graph. */
static void report_eval_after_step_function(RuleCtx *c, Frozen *fz, const IrFunc *f, uint8_t *var_t)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (f->index == 0 || !ff->trains) return;
    uint32_t train_end = last_training_op(c, f, IR_NONE);
    uint32_t i = train_end == IR_NONE ? IR_NONE : next_eval_after(c, fz, f, IR_NONE, train_end, 0, false, var_t);
    if (i == IR_NONE) return; /* one per function */
    Diag *d = rule_report(c, f->ops.items[i].span, SEV_WARNING,
                          "'%s' runs with autograd on after the training step of '%s' (line %u), and what it "
                          "computes never reaches backward(): its forward keeps its activations for a backward "
                          "that never comes (peak memory of training, 2-10x that of %s)",
                          rule_text(c, f, i), rule_func_name(c, f->qualname), rule_line(f->ops.items[train_end].span),
                          rule_no_grad_name(c));
    rule_related(c, d, f->ops.items[train_end].span, "the training step ends here");
    rule_trace(c, d, "'%s' makes one training step per call, up to line %u; this model call comes after it, "
               "on no error path, and its result reaches no backward, no function that trains or "
               "keeps it, no store and no return", rule_func_name(c, f->qualname),
               rule_line(f->ops.items[train_end].span));
    statement_hint_fix(c, f, i, IR_NONE, d);
}

/* Whether what call computes, followed through loop li's body while it carries a graph, is kept
 * beyond the iteration: stored on an object, into an item or a global, appended to a container,
 * handed to a function of the file that trains or stores it, returned or yielded (a rollout's
 * log-probs kept for the update). Detached values (`.item()`, `.cpu().numpy()`) end the walk. */
static bool graph_kept_in_loop(RuleCtx *c, const IrFunc *f, uint32_t li, uint32_t call)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t end = f->loops.items[li].end;
    uint8_t *op_t = arena_alloc(c->scratch, end - call + 1), *var_t = arena_alloc(c->scratch, f->vars.len + 1);
    memset(op_t, 0, end - call + 1);
    memset(var_t, 0, f->vars.len + 1);
    op_t[0] = 1;
#define tainted(x) ((x) != IR_NONE && (x) >= call && (x) < end && op_t[(x) - call])
    for (uint32_t i = call + 1; i < end; i++) {
        const IrOp *o = &f->ops.items[i];
        const AVal *v = &ff->val[i];
        bool t = tainted(o->a) || tainted(o->b) || tainted(o->c) ||
                 (o->kind == IR_LOAD && o->var < f->vars.len && var_t[o->var]);
        for (uint32_t k = 0; k < o->nargs && (o->kind == IR_CALL || o->kind == IR_BUILD); k++)
            if (tainted(f->args.items[o->args + k])) t = true;
        if (!t) continue;
        bool live = GL_MAX(v->grad, v->elem) >= G_MAY;
        switch (o->kind) {
        case IR_STORE:
            if (o->var < f->vars.len && live) {
                if (f->vars.items[o->var].is_global) return true;
                var_t[o->var] = 1;
            }
            break;
        case IR_SET_ATTR: case IR_SET_ITEM: case IR_RETURN: case IR_YIELD: {
            uint32_t x = o->kind == IR_SET_ITEM ? o->c : o->kind == IR_SET_ATTR ? o->b : o->a;
            if (tainted(x) && GL_MAX(ff->val[x].grad, ff->val[x].elem) >= G_MAY) return true;
            break;
        }
        case IR_CALL: {
            if (df_is_backward_call(f, i)) return true;
            bool arg_live = false;
            for (uint32_t k = 0; k < o->nargs; k++) {
                uint32_t a = f->args.items[o->args + k];
                if (tainted(a) && GL_MAX(ff->val[a].grad, ff->val[a].elem) >= G_MAY) arg_live = true;
            }
            uint32_t r = ir_call_receiver(f, i), tg = df_call_target(c->m, c->fx, f, i);
            if (arg_live && tg != IR_NONE && (c->fx->funcs[tg].trains || df_func_stores_outside(c->m, tg, false))) return true;
            if (arg_live && r != IR_NONE && !tainted(r) && (api_method(ir_call_method(f, i)).flags & M_MUTATES)) return true;
            if (live) op_t[i - call] = 1;
            break;
        }
        default:
            if (live) op_t[i - call] = 1;
            break;
        }
    }
#undef tainted
    return false;
}

/* The attribute-flag form of the shared loop: every backward and optimizer step of loop li runs on
 * one side of a test of an attribute (`if self.eval_mode: ... else: ... self.train_model()`, the
 * run() of a deep-RL agent that its driver calls with `agent.eval_mode = True`), and the other side
 * runs a model with autograd on. A flag on the object is set elsewhere, so the parameter form's
 * proof (a call that turns the test off) is not asked for; the branch written to evaluate is what
 * says that side runs. Reported at that branch's first model call. Gives whether it reported. */
static bool report_attr_flag_branch(RuleCtx *c, Frozen *fz, const IrFunc *f, uint32_t li)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrLoop *l = &f->loops.items[li];
    int flag_how = 0;
    uint32_t flag = training_guard(c, f, li, true, &flag_how, NULL, NULL);
    if (flag == IR_NONE) return false;
    const char *fname = f->vars.items[flag].name;
    uint32_t call = IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++)
        if (ff->reached[i] && !df_mode_off(f->ops.items[i].mode) && df_is_module_call(c->fx, f, i) &&
            !model_frozen(c, fz, f, i) && flag_side(f, l, i, flag, true, flag_how) < 0)
            call = i;
    if (call == IR_NONE) return false;
    if (graph_kept_in_loop(c, f, li, call)) return false;
    const char *when = flag_how == GUARD_TRUTHY ? "false" : "true";
    Diag *d = rule_report(c, f->ops.items[call].span, SEV_WARNING,
                          "when '%s' is %s, the loop at line %u runs '%s' with autograd on and never calls "
                          "backward(): every iteration's forward keeps its activations for a backward that never "
                          "comes (peak memory of training, 2-10x that of %s)",
                          fname, when, rule_line(l->span), rule_text(c, f, call), rule_no_grad_name(c));
    d->loop_line = rule_line(l->span);
    rule_related(c, d, l->span, "backward() runs only when '%s' is %s", fname, flag_how == GUARD_TRUTHY ? "true" : "false");
    rule_trace(c, d, "every backward and optimizer step of the loop at line %u is on one side of a test of '%s'; "
               "the other side runs the model and trains nothing", rule_line(l->span), fname);
    statement_hint_fix(c, f, call, li, d);
    return true;
}

/* The statement form across files: f runs a model once per call and trains nothing, and another
 * file of the run calls it, grad on, after a training call of the same loop iteration
 * (`trainer.test(X_test, Y_test)` after `trainer.train(X, Y)` in a script's epoch loop). Reported at
 * its model call, as a function of the file that such a loop calls would be. */
static void report_evaluated_after_training_elsewhere(RuleCtx *c, Frozen *fz, const IrFunc *f)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    /* (a model's own method, `generate()` or `sample()`, is the model: its loops are the loop
     * rules', and a visualisation of a few samples between steps is not an evaluation run) */
    if (!ff->called_after_train || ff->trains || df_func_backprops(c->fx, f->index) ||
        df_func_stores_outside(c->m, f->index, false) || ir_func_in_module_class(c->m, f))
        return;
    uint32_t in = IR_NONE, at = helper_model_call(c, fz, f->index, &in);
    if (at == IR_NONE) return;
    uint64_t site = (uint64_t)in << 32 | at;
    if (helper_seen(fz, site)) return;
    array_push(&fz->helper_sites, site);
    const IrFunc *g = c->m->funcs.items[in];
    Diag *d = rule_report(c, g->ops.items[at].span, SEV_WARNING,
                          "'%s' in '%s' runs with autograd on: another file of the run calls '%s' after a training "
                          "step of its loop, and what it computes never reaches backward(): its forward keeps its "
                          "activations for a backward that never comes (peak memory of training, 2-10x that of %s)",
                          rule_text(c, g, at), rule_func_name(c, g->qualname), rule_func_name(c, f->qualname),
                          rule_no_grad_name(c));
    rule_trace(c, d, "a loop of another file calls '%s' after a backward, an optimizer step or a call that trains, "
               "with grad on; '%s' returns no graph, stores nothing beyond the call and trains nothing",
               rule_func_name(c, f->qualname), rule_func_name(c, f->qualname));
    rule_hint(c, d, "Decorate '%s' with `@torch.no_grad()` when no caller trains on what it returns, or run the "
              "call under `with torch.no_grad():`", rule_func_name(c, f->qualname));
}

void rule_GL108(RuleCtx *c)
{
    Frozen fz;
    memset(&fz, 0, sizeof fz);
    array_init(&fz.roots);
    array_init(&fz.funcs);
    array_init(&fz.helper_sites);
    uint32_t nleaks;
    const uint32_t *leaks = leak_offsets(c, &nleaks);
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        if (!ff->analysed || ff->called_grad_off || df_mode_off(f->base_mode)) continue;
        if (GL_MAX(ff->ret.grad, ff->ret.elem) == G_LIVE) continue; /* the caller may differentiate it */
        /* a unit test's forward on a toy input checks shapes, not the memory of a run */
        if (f->cls != IR_NONE && ir_class_derives_from(c->m, f->cls, "TestCase")) continue;
        uint32_t grad_off_at = first_grad_disable(c, f);
        if (grad_off_at == IR_NONE) report_evaluated_after_training_elsewhere(c, &fz, f);
        uint8_t *var_t = NULL; /* report_eval_after_training's, once per function */
        uint32_t *next_train = NULL; /* trains_after's, once per function */
        if (grad_off_at == IR_NONE && ff->trains) {
            var_t = arena_alloc(c->scratch, f->vars.len + 1);
            memset(var_t, 0, f->vars.len + 1);
            report_eval_after_step_function(c, &fz, f, var_t);
        }
        for (uint32_t li = 0; li < f->loops.len; li++) {
            const IrLoop *l = &f->loops.items[li];
            if (grad_off_at == IR_NONE || grad_off_at > l->op) {
                if (!var_t) var_t = arena_alloc(c->scratch, f->vars.len + 1);
                report_eval_after_training(c, &fz, f, li, var_t);
            }
            /* a step loop, or a loop that looks like one step's sequence (a loop over a tensor's
             * length, a loop nested in a training loop) outside a Module: what it computes is
             * checked below, whatever the kind says */
            bool seq = l->kind == LOOP_SEQUENCE && !l->in_module_method && !ff->in_forward;
            /* (an agent's episode loop whose training branch runs a whole update is an epoch loop) */
            if (l->kind == LOOP_EPOCH && grad_off_at == IR_NONE && report_attr_flag_branch(c, &fz, f, li)) continue;
            if (l->kind == LOOP_STEP && grad_off_at == IR_NONE && (l->has_backward || l->has_opt_step || l->has_step_call)) {
                if (!report_flag_evaluation(c, &fz, f, li) && !report_phase_evaluation(c, &fz, f, li))
                    report_attr_flag_branch(c, &fz, f, li);
                continue;
            }
            if ((l->kind != LOOP_STEP && !seq && l->kind != LOOP_UNKNOWN) || loop_trains_or_yields(f, l)) continue;
            /* the model runs in the loop itself, or in a function of the file the loop calls */
            uint32_t call = IR_NONE;
            /* the call of a value known to be a module first (`net(x)`), then any model call (a
             * passed-in callable taken for one: `transform(img)` may be a preprocessing step) */
            /* (passes 0-2 pass over a model whose outputs are detached at once, a frozen one always:
             * an encoder of conditions first, then the generator: the generator) */
            for (int pass = 0; pass < 6 && call == IR_NONE; pass++)
                for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++) {
                    if (!ff->reached[i] || ir_op_loop(f, i) != li || df_mode_off(f->ops.items[i].mode) ||
                        !df_is_module_call(c->fx, f, i) || !l->has_model_call || l->kind == LOOP_UNKNOWN)
                        continue;
                    const AVal *cv = &ff->val[f->ops.items[i].a];
                    int p = pass % 3;
                    if ((p == 2 || cv->kind == VK_MODULE || (p == 1 && (cv->flags & VF_MAYBE_MODULE))) &&
                        !model_frozen(c, &fz, f, i) && (pass >= 3 || !detached_at_once(f, l, i)))
                        call = i;
                }
            for (uint32_t i = l->op + 1; i < l->end && call == IR_NONE; i++) {
                if (!ff->reached[i] || ir_op_loop(f, i) != li || f->ops.items[i].kind != IR_CALL ||
                    df_mode_off(f->ops.items[i].mode))
                    continue;
                uint32_t t = df_call_target(c->m, c->fx, f, i);
                /* one that keeps state on its object: unless something trains on it afterwards */
                if (t != IR_NONE && t != fi && df_func_evaluates(c->fx, t) &&
                    !df_call_passes_false(f, i, c->m->funcs.items[t]) && /* `step(b, track_gradient=False)` */
                    (!df_func_stores_outside(c->m, t, false) || !trains_after(c, f, li, &next_train)))
                    call = i;
                /* a function or method of another file that evaluates (`model.predict(u)`), which
                 * may keep per-call state on its object: so nothing may train after the loop */
                const ExternSummary *es = t == IR_NONE ? df_call_extern(c->fx, f, i) : NULL;
                if (es && es->evaluates && !trains_after(c, f, li, &next_train)) call = i;
            }
            if (call == IR_NONE || (grad_off_at != IR_NONE && grad_off_at < l->op) || !ff->backedge || !ff->backedge[li] ||
                (keeps_for_backward(c, f, ff, li) && (!leak_reported_in(leaks, nleaks, f, l) || hands_to_caller(c, f, l))))
                continue;
            if (model_frozen(c, &fz, f, call) || few_fixed_iterations(c, f, li, call)) continue;
            const char *model = rule_text(c, f, call);
            /* reported where the model runs (the line a reader points at), the loop beside it */
            Diag *d = rule_report(c, f->ops.items[call].span, SEV_WARNING,
                                  "the loop at line %u runs '%s' with autograd on and never calls backward(): every "
                                  "iteration's forward keeps its activations for a backward that never comes "
                                  "(peak memory of training, 2-10x that of %s)",
                                  rule_line(l->span), model, rule_no_grad_name(c));
            d->loop_line = rule_line(l->span);
            rule_related(c, d, l->span, "this loop never calls backward(), nor does what it calls");
            rule_trace(c, d, "the loop at line %u calls a model, has no backward() or optimizer step (nor does what "
                       "it calls), is not followed by one, and keeps no graph-carrying value past an iteration",
                       rule_line(l->span));
            if (c->cxx)
                rule_hint(c, d, "Declare `torch::NoGradGuard no_grad;` (or `c10::InferenceMode guard;`) before the "
                                "loop; model->eval() does not turn autograd off");
            else
                rule_hint(c, d, "Run the loop under `with torch.no_grad():` (or decorate the function with "
                                "`@torch.no_grad()`); model.eval() does not turn autograd off");
            rule_fix_wrap_loop_no_grad(c, f, li, d, FIX_UNSAFE);
        }
    }
    array_free(&fz.roots);
    array_free(&fz.funcs);
    array_free(&fz.helper_sites);
    gl_free(fz.helper_of);
    gl_free(fz.call_head);
    gl_free(fz.call_next);
    gl_free(fz.call_base);
}
