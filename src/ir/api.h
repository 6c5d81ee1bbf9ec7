/* The API model the dataflow reads: what torch functions, tensor methods and attributes, Python
 * builtins and the methods of modules, optimizers and containers do. The names live in
 * torch_api.def and builtins.def; these lookups are the only readers, so the dataflow asks what a
 * name does and never compares names itself. */
#ifndef GL_API_H
#define GL_API_H

#include "ir/dataflow.h"

typedef enum ApiEffect {
    EFF_NONE, EFF_DIFF, EFF_NONDIFF, EFF_SCALAR, EFF_DETACH, EFF_MOVE, EFF_INPLACE, EFF_FACTORY,
    EFF_REDUCE, EFF_LOSS, EFF_SHAPE, EFF_PIECES, EFF_MODULE, EFF_LOSSMOD, EFF_BUILDER, EFF_TORCH,
    EFF_OPTIM, EFF_LOADER, EFF_PARAM, EFF_NOGRAD, EFF_INFER, EFF_ENABLE, EFF_BACKWARD, EFF_VARIABLE,
    EFF_GRADFN, EFF_UNPICKLE, EFF_GRAD, EFF_POINTWISE, EFF_PASSMOD,
} ApiEffect;

/* Roles of builtins (builtins.def). */
typedef enum ApiBuiltin {
    B_NONE, B_SCALAR, B_LEN, B_RANGE, B_PASS, B_ZIP, B_ENUMERATE, B_NEXT, B_REDUCE, B_COLLECT,
} ApiBuiltin;

/* Method flags (builtins.def). */
#define M_MODULE_ONLY 0x00001 /* only modules (and optimizers) have it: the receiver is a model */
#define M_BACKWARD 0x00002    /* x.backward(): x carries a graph */
#define M_RUNS_BACKWARD 0x00004 /* differentiates (backward(), Lightning's manual_backward()) */
#define M_ZERO_GRAD 0x00008   /* resets gradients */
#define M_STEP 0x00010        /* an optimizer step, on an optimizer */
#define M_MODLIST 0x00020     /* modules(), children(): items are modules */
#define M_PARAMS 0x00040      /* parameters(): each requires grad */
#define M_CALLS_MODEL 0x00080 /* forward(), __call__() on a module */
#define M_MODULE_SELF 0x00100 /* a module converts in place and returns itself */
#define M_FREEZE 0x00200      /* requires_grad_(False) freezes a module */
#define M_MODE 0x00400        /* eval(), train(): the receiver is a module, and so is the result */
#define M_RESETS 0x00800      /* re-creates a model's recurrent state (init_hidden) */
#define M_STATE 0x01000       /* a recurrent model's state method (its name says hidden) */
#define M_DETACH_SELF 0x02000 /* detaches the receiver in place */
#define M_MUTATES 0x04000     /* adds to a container (append, update) */
#define M_GETS 0x08000        /* reads a container's items (pop, get, values) */
#define M_VIEW 0x10000        /* a container of the items (values(), items(), copy()) */
#define M_ITEMS 0x20000       /* the items of a dict batch (items(), values()) */
#define M_DEVICE 0x40000      /* moves data to a device (.to(), .cuda()) */
#define M_PICKS 0x80000       /* samples or picks tokens from a tensor */
#define M_INDICES 0x100000    /* returns (values, indices) when it returns a pair: the indices carry no
                               * graph (max(dim), topk, sort) */
#define M_EVAL 0x200000       /* eval(): switches a module to evaluation (inference) mode */
#define M_TENSOR_TOO 0x400000 /* tensors have a method of that name too (add): on one it mutates nothing */

typedef enum ApiKw {
#define API_KW(id, name) API_KW_##id,
#include "ir/torch_api.def"
    API_KW_COUNT
} ApiKw;

typedef enum ApiName {
#define API_NAME(id, text) API_NAME_##id,
#include "ir/torch_api.def"
#define PY_NAME(id, text) PY_NAME_##id,
#include "ir/builtins.def"
    API_NAME_COUNT
} ApiName;

typedef struct ApiMethod {
    uint8_t effect; /* ApiEffect on a tensor */
    uint32_t flags; /* M_* */
} ApiMethod;

/* Builds the hash tables (once per process; thread-safe). The lookups call it themselves. */
void api_init(void);
/* A torch function or constructor, by its resolved dotted name; EFF_NONE when unknown or NULL.
 * BUILDER and TORCH entries come back as MODULE, DIFF or LOSSMOD. */
ApiEffect api_function(const char *qual);
/* Exact API_FN entries only (no prefixes): cheap, for hot predicates. */
ApiEffect api_function_exact(const char *qual);
ApiMethod api_method(const char *name);
bool api_method_collects(const char *name, uint32_t nargs);
/* Is name a method of the table itself (not only one whose name contains a part it lists)? */
bool api_method_listed(const char *name); /* zero when unknown or NULL */
ApiEffect api_attr(const char *name);
ApiBuiltin api_builtin(const char *name);
const char *api_kw(ApiKw kw);
const char *api_name(ApiName id);
bool api_is(const char *s, ApiName id); /* s (may be NULL) is that name */
bool api_is_torch(const char *qual);     /* under torch. */
ValKind api_declared_type(const char *qual); /* VK_UNKNOWN when the type says nothing */
bool api_module_base(const char *qual);  /* a base class that makes a class an nn.Module */
bool api_runs_module(const char *qual);  /* a torch function that calls the module it is passed */
bool api_camel_last(const char *qual);   /* last dotted part starts uppercase: a class */
/* The keyword argument kw of call (op), or IR_NONE. */
uint32_t api_call_kwarg(const IrFunc *f, uint32_t call, ApiKw kw);
/* reduction="none" (or reduce=False): a loss per element, not a 0-dim tensor. */
bool api_call_no_reduction(const IrFunc *f, uint32_t call);
/* Do the functions named qual take their data by keyword too (API_KW_DATA: `Categorical(logits=x)`)? */
bool api_kw_data(const char *qual);

/* Is name one of Python's builtins (print, len, ValueError, True...)? */
bool api_python_builtin(const char *name);

#endif
