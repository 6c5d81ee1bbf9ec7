/* Grad dataflow: for every IR value, its kind and whether it carries a live autograd graph, and
 * for every loop, what kind of loop it is and what flows around its back edge. */
#ifndef GL_DATAFLOW_H
#define GL_DATAFLOW_H

#include "ir/ir.h"

typedef enum ValKind {
    VK_UNKNOWN, VK_TENSOR, VK_SCALAR, VK_MODULE, VK_OPTIM, VK_CONTAINER, VK_LOADER, VK_FUNC, VK_CLASS,
    VK_CTX, VK_MODREF, VK_OBJECT, VK_RANGE, VK_NONE,
} ValKind;

/* Ordered: a join takes the maximum. */
typedef enum GradState {
    G_NONE, /* no graph: created under no_grad, detached, a Python scalar */
    G_MAY,  /* unknown (a parameter, an unknown call) */
    G_POST, /* its graph was freed by backward(): only autograd nodes on the host remain */
    G_LIVE, /* carries a live graph holding saved activations on the device */
} GradState;

/* AVal.ref of an object of an imported class built around a module (`agent = Agent(net)`) and
 * used like no module (nothing calls .parameters()/.train() on it): calling it runs the module,
 * but what the wrapper returns (numpy actions, a detached sample) is not known to be a graph. */
#define REF_MODEL_WRAPPER (UINT32_MAX - 1)
/* AVal.ref of an object of a class imported from another file (`meter = AverageMeter()` with
 * `from utils import AverageMeter`): REF_EXTERN_CLASS + k, k indexing Facts.ext_classes (the
 * class's dotted name as the file imports it). Its methods are looked up as "utils.AverageMeter#add"
 * among the other files' exports (df_method_qual). */
#define REF_EXTERN_CLASS 0x40000000u
#define REF_IS_EXTERN(r) ((r) >= REF_EXTERN_CLASS && (r) < 0x80000000u)
/* An object of an imported class built around a module (`runner = Trainer(net, opt)`): the class's
 * ref with this bit; calling it is as calling REF_MODEL_WRAPPER, its methods are the class's. */
#define REF_WRAPPER_BIT 0x20000000u
#define REF_EXTERN_INDEX(r) (((r) - REF_EXTERN_CLASS) & ~REF_WRAPPER_BIT)
#define REF_IS_WRAPPER(r) ((r) == REF_MODEL_WRAPPER || (REF_IS_EXTERN(r) && ((r) & REF_WRAPPER_BIT)))
/* the ref of a wrapper once the code treats it as a module itself (`.train()` on it) */
#define REF_UNWRAP(r) ((r) == REF_MODEL_WRAPPER ? IR_NONE : REF_IS_EXTERN(r) ? (r) & ~REF_WRAPPER_BIT : (r))
#define VF_ZERO_DIM 0x001   /* a 0-dim tensor (losses, full reductions) */
#define VF_MODEL_OUT 0x002  /* produced by calling a model (or derived from such a value) */
#define VF_BATCH 0x004      /* an item from iterating a data loader (or unknown iterable) */
#define VF_OUTER 0x008      /* lives outside this call: global, attribute from an earlier call */
#define VF_SHAPE 0x010      /* a size derived from a tensor's shape */
#define VF_PIECES 0x020     /* pieces of a tensor (split/unbind/chunk) */
#define VF_LOSSMOD 0x040    /* a loss module (nn.*Loss) */
#define VF_MAYBE_MODULE 0x080 /* an object that behaves like a module (called, has .eval() etc.) */
#define VF_UNSET 0x100      /* variable not bound on this path */
#define VF_RESET 0x200      /* attribute re-created by a reset method (init_hidden) */
#define VF_NOREDUCE 0x400   /* a loss module built with reduction="none" */
#define VF_ENUM 0x800       /* enumerate(x): items are (index, item of x) pairs */
#define VF_PAIR 0x1000      /* an (index, item) pair from enumerate */
#define VF_MODLIST 0x2000   /* modules(), named_modules(), children(): items are modules */
#define VF_OPAQUE 0x4000    /* returned by an imported function gradleak cannot see (nor was given) */
#define VF_FROZEN 0x8000    /* a module frozen with requires_grad_(False): its calls add no graph */

#define CARRIED_CALLS (IR_NONE - 1) /* carried across calls of a method (self.hidden in forward) */

typedef struct AVal {
    uint8_t kind;   /* ValKind */
    uint8_t grad;   /* GradState of the value itself */
    uint8_t elem;   /* GradState of what a container holds */
    uint8_t cmask;  /* bit i: the result of calling parameter i (0-7): a model output when the caller
                     * passes a module (function summaries) */
    uint16_t flags; /* VF_* */
    uint16_t pmask; /* bit i: derived from parameter i (function summaries) */
    uint32_t def;   /* op that created it; a LOOP op for a loop-header phi */
    uint32_t src;   /* op where its graph came in (a model call, a parameter), or IR_NONE */
    uint32_t carried; /* loop whose header phi it comes from (or CARRIED_CALLS), or IR_NONE */
    uint32_t ref;   /* VK_FUNC: function; VK_CLASS/VK_MODULE/VK_OBJECT: class or IR_NONE */
} AVal;

/* An environment (variable -> AVal): a persistent tree (ir/df_env.c), read with df_backedge. */
typedef struct DfNode DfNode;

/* Facts about one function. */
typedef struct FuncFacts {
    AVal *val;          /* per op: the op's value (for stores: the stored value), converged */
    DfNode **backedge;  /* per loop: environment at the back edge, last pass (NULL: never reached);
                         * read with df_backedge / df_backedge_live */
    uint8_t env_height; /* of the environments' trees */
    uint8_t *reached;   /* per op: interpreted on a live path */
    AVal ret;           /* join of returned values */
    uint8_t analysed, in_progress, runs_per_step;
    uint8_t calls_zero_grad; /* resets .grad somewhere (zero_grad(), p.grad = None) */
    uint8_t ret_tuple;  /* 0: no return seen; n: every return is a tuple display of n (<= 16)
                         * elements; 0xff: otherwise */
    uint16_t ret_plain;  /* bit k: element k of every returned tuple carries no graph whatever the
                         * arguments (`return output, loss.item()`) */
    uint16_t ret_zero;  /* bit k: element k of every returned tuple is a 0-dim tensor or None, and of
                         * one at least a 0-dim tensor */
    uint16_t ret_none;  /* bit k: element k of every returned tuple so far is None */
    uint16_t ret_weak;  /* bit k: element k of every returned tuple is no tensor gradleak knows of
                         * and comes from no parameter (`solver.model.ObjVal`): not a graph */
    uint8_t trains;     /* calls backward() or steps an optimizer, itself or in a function it calls:
                         * a loop that calls it is a step loop (`for b in loader: train_step(b)`) */
    uint8_t in_forward; /* a Module's forward, or what forward calls (a few levels): its loops run
                         * inside one forward (time steps), however they look */
    uint8_t called_grad_off; /* some call of it in the file runs with grad off (`with torch.no_grad():
                              * evaluate(...)`), directly or through its callers */
    uint8_t per_step_grad_on; /* and some call of it runs once per training step with grad on (a
                               * Lightning module's shared_step, called by training_step and by
                               * test_step) */
    uint8_t called_after_train; /* another file calls it, grad on, after a training call of the same
                                 * loop iteration (Facts.ext_after_train) */
    uint8_t returns_loss; /* a framework differentiates what it returns (Lightning's training_step,
                           * Hugging Face Trainer.compute_loss): its result carries a graph */
} FuncFacts;

typedef struct ClassFacts {
    Array(const char *) attr_names;
    Array(AVal) attr_vals; /* kinds of self.<attr> after __init__ */
    Array(const char *) reset_methods; /* methods that re-create recurrent state */
    Array(const char *) carried_attrs; /* self.<attr> that forward() feeds back call to call */
    Array(const char *) module_attrs;  /* self.<attr> some method calls a module-only method on
                                        * (self.net.parameters()): a module in every method */
    uint8_t module_attrs_done;
} ClassFacts;

/* What a function does to grad, detached from its file: the summary one file exports and the files
 * that import the function use (cross-file summaries). Same meaning as FuncFacts.ret. */
typedef struct ExternSummary {
    uint8_t kind, grad, elem, nparams;
    uint16_t flags, pmask;
    uint8_t cmask;
    uint8_t keep_acc;  /* C++ methods: bit k, positional argument k is added into a member of the
                        * object (`sum_ += v`): the object accumulates what it is given */
    uint8_t keep_coll; /* bit k, positional argument k is appended to a member container
                        * (`items_.push_back(v)`) that the method never starts again */
    uint8_t trains;    /* calls backward() or steps an optimizer (FuncFacts.trains): a loop that
                        * calls it is a step loop */
    uint8_t evaluates; /* runs a model once per call with grad on, trains nothing and keeps nothing
                        * (df_func_evaluates): a loop that calls it evaluates */
    uint8_t backprops; /* trains in a loop of its own (df_func_backprops, not trains): a training
                        * epoch, so a loop that calls it is an epoch loop */
    uint8_t ret_tuple; /* FuncFacts.ret_tuple, ret_plain, ret_weak: which elements of the tuple it
                        * returns carry no graph (`return action.numpy(), hidden`) */
    uint16_t ret_plain, ret_weak;
    uint16_t ret_zero; /* FuncFacts.ret_zero: the tuple's elements that are 0-dim tensors (`return
                        * loss, recon, kl` of means) */
} ExternSummary;

/* Finds the summary of an imported function by the dotted name the call resolved to ("utils.f";
 * ".utils.f" keeps the dots of a relative import). NULL when nothing is known. */
typedef const ExternSummary *(*ExternLookup)(void *ctx, const char *qual);

/* Does some other file of the run call the C++ function it knows as name ("::ns::Class::method")
 * from a training loop, once per step (cross-file summaries, the other way)? Also: does another
 * file call the function or method it exports as name ("f", "Class#method") with grad off? */
typedef bool (*ExternPerStep)(void *ctx, const char *name);

typedef struct Facts {
    const IrModule *m;
    FuncFacts *funcs;
    ClassFacts *classes;
    ExternLookup ext; /* optional: summaries of functions in other files */
    void *ext_ctx;
    ExternPerStep ext_per_step; /* optional (C++): this file's functions that other files call each step */
    ExternPerStep ext_grad_off; /* optional: this file's functions ("f", "Class#method") that another
                                 * file calls with grad off */
    ExternPerStep ext_after_train; /* optional: this file's functions another file calls after training */
    Array(const char *) ext_classes; /* imported classes whose objects the file makes (REF_EXTERN_CLASS) */
    uint8_t *backprops; /* [function]: 0 not asked yet, 1 no, 2 it (or what it calls) runs a backward
                         * or an optimizer step somewhere (loops.c, df__func_backprops) */
    uint8_t *runs_subs; /* [function]: 0 not asked yet, 1 no, 2 a method that runs its class's
                         * submodules outside any forward (loops.c, df__loop_runs_own_model) */
    StrMap nested_defs; /* "<enclosing function>:<name>" -> a function defined inside another one */
    StrMap method_names; /* name -> a method of that name of some class of the file */
    uint32_t *top_defs; /* [variable of the module body], built on first use: the DEFINE op of the
                         * class or function the module binds that name to, when it binds it once;
                         * IR_NONE otherwise (in m->arena) */
    bool cxx;           /* the module was lowered from C++ (some function has a cxx_key) */
} Facts;

/* Runs the whole analysis over m. Memory lives in m->arena. out->ext and out->ext_ctx are read
 * (set them, or zero them, before the call); the other fields are written. */
void df_analyse(const IrModule *m, Facts *out);
/* The summary of top-level function fi, for other files; false for methods, nested functions and
 * functions whose analysis did not finish. */
bool df_export_summary(const Facts *fx, uint32_t fi, ExternSummary *out);
/* The summary of method fi of a top-level Python class, for other files, under "Class#method"
 * (written to *name, allocated in the module's arena): what it returns (self is parameter 0) and
 * which arguments it adds into an attribute or appends to one that no method of the class starts
 * again; false for other functions. */
bool df_export_method(const Facts *fx, uint32_t fi, ExternSummary *out, const char **name);
/* The name other files export method `method` of the object v under ("utils.Meter#add"), written
 * into buf; NULL when v is no object of an imported class or the name does not fit. */
const char *df_method_qual(const Facts *fx, const AVal *v, const char *method, char *buf, size_t cap);
/* The summary of C++ function fi (a free function or a method, out of line or not) under its C++
 * name (IrFunc.cxx_key), with what a method keeps of its arguments; false when its analysis did not
 * finish. */
bool df_export_cxx(const Facts *fx, uint32_t fi, ExternSummary *out);
/* Which positional arguments (bit k: argument k, self not counted) method fi adds into a member of
 * self (*acc) or appends to a member container of self that it never starts again (*coll); *acc_at
 * and *coll_at get the op of the first such accumulation and append (IR_NONE when none). */
void df_method_keeps(const Facts *fx, uint32_t fi, uint8_t *acc, uint8_t *coll, uint32_t *acc_at, uint32_t *coll_at);
/* The summary another file of the run gives for what call op runs: a C++ function or method whose
 * definition is not in this file (IrOp.qual "::ns::Class::method"), a method of an object of an
 * imported class or of one whose class nothing names (df_method_qual), or a Python function
 * imported by name (`from utils import evaluate`); NULL when none is known. */
const ExternSummary *df_call_extern(const Facts *fx, const IrFunc *f, uint32_t op);
/* fx->ext for qual, NULL without a lookup. After several `from X import *`, a name the last star
 * import does not define is looked up in the ones before it, last first (as Python binds them):
 * `from utils import *; from model import *; from data import *` and model's loss function. */
const ExternSummary *df_ext(const Facts *fx, const char *qual);
/* The qual a call names through star import k of m instead of the last one ("model.f" for
 * "data.f"), in buf; NULL when qual is no name of the last star import or does not fit. */
const char *df_star_alternative(const IrModule *m, const char *qual, uint32_t k, char *buf, size_t cap);
/* The name a message gives the callee of call op that df_call_extern resolves: "Meter::add" (C++),
 * "Meter.add" (Python); in buf. */
const char *df_call_extern_name(const Facts *fx, const IrFunc *f, uint32_t op, char *buf, size_t cap);
void df_facts_free(Facts *f);
/* The function defined in an enclosing function of f under name (a closure's sibling helper:
 * `def _pad(x): ...` beside `def wrapper(self, x)` in a decorator), or IR_NONE when the name is
 * not one, or an enclosing function binds it otherwise first. */
uint32_t df_closure_def(const Facts *fx, const IrFunc *f, const char *name);

/* Queries for the rules. */
/* The value of variable var at the back edge of loop `loop` (last pass); NULL when the back edge
 * was never reached. */
const AVal *df_backedge(const FuncFacts *ff, uint32_t loop, uint32_t var);
/* The variables whose value at the back edge of `loop` carries a live graph (grad or elem G_LIVE)
 * and either is held outside a plain local (an attribute, a global, a container, VF_OUTER) or was
 * made by an op in [lo, hi]; in increasing order, in an array of the arena (*n of them; NULL and 0
 * when none or unreached). The environment's tree keeps those summaries, so this costs what those
 * variables are, not what the function's variables are. */
uint32_t *df_backedge_live(const IrFunc *f, const FuncFacts *ff, uint32_t loop, uint32_t lo, uint32_t hi, Arena *a,
                           uint32_t *n);
bool df_is_module_call(const Facts *fx, const IrFunc *f, uint32_t op);
/* `obs, reward, done, info = env.step(action)`: a step() of no optimizer, module or tensor, given
 * one value derived from a model's output (the policy's action). What it returns carries no graph
 * and it keeps nothing of the action. df_env_step_shape asks the same of values. */
bool df_is_env_step(const Facts *fx, const IrFunc *f, uint32_t op);
bool df_env_step_shape(uint32_t mflags, uint32_t nargs, const AVal *args, const AVal *recv);
/* Does function fi of the file, or what it calls (a few levels), run a backward or an optimizer
 * step somewhere (in a loop of its own too)? */
bool df_func_backprops(const Facts *fx, uint32_t fi);
bool df_is_backward_call(const IrFunc *f, uint32_t op);
/* Is call op `opt.step()` on an optimizer? */
bool df_is_optimizer_step(const Facts *fx, const IrFunc *f, uint32_t op);
/* Does call op of f train: a backward, an optimizer step, or a call of a function that makes a
 * training step (of the file, or another file's by its summary); with whole_runs, also one that
 * trains in a loop of its own (an epoch)? */
bool df_call_trains(const Facts *fx, const IrFunc *f, uint32_t op, bool whole_runs);
/* The function of the file that call op runs (a local function, or a method of a local class on
 * one of its objects: self.train_step(batch)); IR_NONE when unknown. */
uint32_t df_call_target(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op);
/* Whether function fi may keep what it is given: it stores into attributes, items, globals or
 * containers, or yields. With own_state_ok, a method's stores into its own object's attributes
 * (`self.transition = [s, logp]`, `self.log_probs.append(...)`) do not count. */
bool df_func_stores_outside(const IrModule *m, uint32_t fi, bool own_state_ok);
/* The same with own_state_ok, and stores into what the caller hands in (`memory.logprobs.append(
 * logp)` on a parameter) not counted either: the caller's loop decides whether that is kept. */
bool df_func_stores_beyond_args(const IrModule *m, uint32_t fi);
/* Does loop li of f run over the length of the input f is given (`for i in range(seq.size(0)):`,
 * `range(len(seq))`), not a count (`range(max_len)`) nor its elements (a loader?), with the state
 * it carries ending there (no later loop goes on from a primed state)? A recurrent model unrolled
 * there is one forward pass, bounded by the input. */
bool df_loop_unrolls_input(const IrFunc *f, uint32_t li);
/* Whether function fi runs a model once per call with grad on, trains nothing and keeps nothing
 * (an `_eval_step`, a policy's `pi(x)`, a `predict(batch)` helper), itself or through a helper of
 * the file or of another file: calling it in a loop is evaluating. A method may keep per-call state
 * on its own object. */
bool df_func_evaluates(const Facts *fx, uint32_t fi);
/* A method whose name an API also uses (`update`, `step`, `train`), called on an object of unknown
 * class: "#update", looked up only where its summary is asked for explicitly (an agent's update()
 * that trains, df_call_extern_listed), never taken for the API's method elsewhere; NULL otherwise. */
const char *df_listed_duck_qual(const Facts *fx, const AVal *v, const char *method, char *buf, size_t cap);
const ExternSummary *df_call_extern_listed(const Facts *fx, const IrFunc *f, uint32_t op);
/* Does call op of f pass the literal False for g's grad parameter (IrFunc.grad_param:
 * `step(batch, track_gradient=False)` to a function whose body runs under
 * `set_grad_enabled(track_gradient)`), by keyword or by position (a method called on an object
 * gets self first)? Then g runs with grad off for that call. */
bool df_call_passes_false(const IrFunc *f, uint32_t op, const IrFunc *g);
bool df_is_local_model_call(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op);
bool df_arg_cut_by_callee(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op, uint32_t k);
/* The one method of the file's classes called name (`net.predict(...)` on an object of unknown
 * class), or IR_NONE when none or several classes define one. */
uint32_t df_unique_method(const IrModule *m, const char *name);
/* Does the expression at op read one of vars (a variable, or an attribute's pseudo-variable), through
 * its operands, arguments, callee and receivers? A bounded walk. */
bool df_expr_reads(const IrFunc *f, uint32_t op, const uint32_t *vars, uint32_t n);

bool df_mode_off(uint8_t mode);

/* What an iteration yields that is moved to a device: the one test behind "a loop over batches
 * from the host" (loop kinds), "a callable applied to a batch moved to a device is a model"
 * (prescan) and "a comprehension over batches" (GL102). Over ops [next, end) of f it follows what
 * the NEXT op `next` yields (a for loop's own NEXT is the op after its LOOP op; a comprehension's
 * lies inside its BUILD's span), unpacked, indexed, an attribute, stored and loaded again, iterated
 * again through .items()/.values(), and marks in dev[] the ops that move it to a device (.to(),
 * .cuda()) and what is built from such moves. next == IR_NONE: every NEXT of [0, end) is followed
 * (a whole function). Returns whether an op that `reached` marks (every op when NULL) moves such a
 * value. y: scratch from df_yield_init, one for many calls on the same function (the marks of ops
 * in [next, end) are valid until the next call), or NULL for one call. */
typedef struct DfYield {
    uint8_t *part, *dev;         /* per op: holds what is yielded (or a part of it); moved to a device */
    uint8_t *part_var, *dev_var; /* per variable, during a call */
    uint32_t nops, nvars;
} DfYield;
void df_yield_init(DfYield *y, const IrFunc *f);
void df_yield_free(DfYield *y);
bool df_yield_moved(DfYield *y, const IrFunc *f, uint32_t next, uint32_t end, const uint8_t *reached);
/* The innermost loop around op in which value v was NOT created (so v outlives its iterations),
 * walking outward from `loop`; IR_NONE when v is created inside every enclosing loop. Only loops
 * whose kind is step or feedback are returned when growth_only is set. */
uint32_t df_outliving_loop(const IrFunc *f, const AVal *v, uint32_t loop, bool growth_only);
/* df_outliving_loop(f, v, loop, true), except for a rollout: a while loop or a loop over a range
 * that trains nothing itself, collecting into a value its enclosing loop makes again every
 * iteration, which then runs the update (a backward, an optimizer step, a function of the file
 * that does one): what it keeps is one update's rollout, bounded by its length (IR_NONE). */
uint32_t df_outliving_step(const Facts *fx, const IrFunc *f, const AVal *v, uint32_t loop);
const char *df_loop_kind_name(uint8_t kind);
const char *df_grad_name(uint8_t g);
const char *df_kind_name(uint8_t kind);

#endif
