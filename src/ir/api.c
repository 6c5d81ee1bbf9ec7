/* Lookups in the API model (torch_api.def, builtins.def): hashed once per process, because every
 * call, method and attribute of every pass looks a name up (a linear strcmp over 160 entries was a
 * tenth of an LSP re-lint). The first entry of a name wins, as in the table order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/strmap.h"
#include "ir/api.h"

typedef struct ApiEntry {
    const char *name;
    uint8_t effect;
    uint8_t kind; /* 0 function, 1 prefix, 2 method, 3 last part, 4 attribute */
} ApiEntry;

static const ApiEntry api_table[] = {
#define API_FN(n, e) {n, EFF_##e, 0},
#define API_PREFIX(n, e) {n, EFF_##e, 1},
#define API_METHOD(n, e) {n, EFF_##e, 2},
#define API_LAST(n, e) {n, EFF_##e, 3},
#define API_ATTR(n, e) {n, EFF_##e, 4},
#include "ir/torch_api.def"
};

typedef struct ApiObjMethod {
    const char *name;
    uint32_t flags;
} ApiObjMethod;

static const ApiObjMethod obj_methods[] = {
#define METHOD(n, fl) {n, fl},
#include "ir/builtins.def"
};

static const ApiObjMethod method_parts[] = {
#define METHOD_PART(p, fl) {p, fl},
#include "ir/builtins.def"
};

static const struct {
    const char *name;
    uint8_t role;
} builtins[] = {
#define BUILTIN(n, r) {n, r},
#include "ir/builtins.def"
};

static const char *const kw_names[API_KW_COUNT] = {
#define API_KW(id, n) n,
#include "ir/torch_api.def"
};

static const char *const names[API_NAME_COUNT] = {
#define API_NAME(id, t) t,
#include "ir/torch_api.def"
#define PY_NAME(id, t) t,
#include "ir/builtins.def"
};

static const struct {
    const char *part, *unless;
    uint8_t kind;
} declared_types[] = {
#define API_TYPE(p, u, k) {p, u, k},
#include "ir/torch_api.def"
};

enum { BASE_PREFIX, BASE_LAST, BASE_PART };
static const struct {
    const char *text;
    uint8_t how;
} module_bases[] = {
#define API_MODULE_BASE(t, how) {t, how},
#include "ir/torch_api.def"
};

static const struct {
    const char *text;
    uint8_t whole;
} runs_module[] = {
#define API_RUNS_MODULE(t, w) {t, w},
#include "ir/torch_api.def"
};

static const char *const reductions[] = {
#define API_REDUCTION(p) p,
#include "ir/torch_api.def"
};

static const char *const kw_data_prefixes[] = {
#define API_KW_DATA(p) p,
#include "ir/torch_api.def"
};

static StrMap fns, lasts, attrs, methods, builtin_set;
static ApiMethod method_info[ARRAY_LEN(api_table) + ARRAY_LEN(obj_methods)]; /* per slot of `methods` */
static uint32_t n_method_info;
static uint32_t prefixes[64], prefix_len[64], n_prefixes;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint32_t api__method_slot(const char *name)
{
    size_t n = strlen(name);
    uint32_t slot = strmap_get(&methods, name, n);
    if (slot != UINT32_MAX) return slot;
    strmap_put(&methods, name, n, n_method_info);
    return n_method_info++;
}

static void api__build(void)
{
    for (uint32_t i = 0; i < ARRAY_LEN(api_table); i++) {
        const ApiEntry *e = &api_table[i];
        size_t n = strlen(e->name);
        StrMap *m = e->kind == 0 ? &fns : e->kind == 3 ? &lasts : e->kind == 4 ? &attrs : NULL;
        if (m && strmap_get(m, e->name, n) == UINT32_MAX) strmap_put(m, e->name, n, i);
        if (e->kind == 2) {
            bool seen = strmap_get(&methods, e->name, n) != UINT32_MAX;
            uint32_t slot = api__method_slot(e->name);
            if (!seen) method_info[slot].effect = e->effect;
        }
        if (e->kind == 1 && ALWAYS(n_prefixes < ARRAY_LEN(prefixes)))
            prefix_len[n_prefixes] = (uint32_t)n, prefixes[n_prefixes++] = i;
    }
    for (uint32_t i = 0; i < ARRAY_LEN(obj_methods); i++)
        method_info[api__method_slot(obj_methods[i].name)].flags |= obj_methods[i].flags;
    for (uint32_t i = 0; i < ARRAY_LEN(builtins); i++)
        strmap_put(&builtin_set, builtins[i].name, strlen(builtins[i].name), builtins[i].role);
}

void api_init(void) { pthread_once(&once, api__build); }

ApiEffect api_function_exact(const char *qual)
{
    if (!qual) return EFF_NONE;
    api_init();
    uint32_t hit = strmap_get(&fns, qual, strlen(qual));
    return hit == UINT32_MAX ? EFF_NONE : (ApiEffect)api_table[hit].effect;
}

static const char *api__last(const char *qual)
{
    const char *last = strrchr(qual, '.');
    return last ? last + 1 : qual;
}

bool api_camel_last(const char *qual)
{
    if (!qual) return false;
    const char *last = api__last(qual);
    return last[0] >= 'A' && last[0] <= 'Z';
}

static ApiEffect api__prefixed(const char *qual)
{
    for (uint32_t k = 0; k < n_prefixes; k++) {
        const ApiEntry *e = &api_table[prefixes[k]];
        if (strncmp(qual, e->name, prefix_len[k]) != 0) continue;
        switch ((ApiEffect)e->effect) {
        case EFF_BUILDER: /* torchvision's model builders are lowercase functions (resnet50()) */
            return EFF_MODULE;
        case EFF_TORCH: /* a CamelCase name under torch is a class (an observer, a Generator) */
            return api_camel_last(qual) ? EFF_MODULE : EFF_DIFF;
        case EFF_MODULE:
        case EFF_OPTIM: {
            /* constructors are CamelCase: torch.nn.Linear, torch.optim.Adam; lowercase names under
             * torch.nn (torch.nn.functional handled above) are functions; nn.*Loss are loss modules */
            if (!api_camel_last(qual)) return EFF_DIFF;
            const char *last = api__last(qual);
            size_t n = strlen(last);
            if (e->effect == EFF_MODULE && n > 4 && !strcmp(last + n - 4, "Loss")) return EFF_LOSSMOD;
            return (ApiEffect)e->effect;
        }
        default:
            return (ApiEffect)e->effect;
        }
    }
    return EFF_NONE;
}

ApiEffect api_function(const char *qual)
{
    if (!qual) return EFF_NONE;
    api_init();
    uint32_t hit = strmap_get(&fns, qual, strlen(qual));
    if (hit != UINT32_MAX) return api_table[hit].effect;
    /* Hugging Face model classes load modules (AutoModelForCausalLM.from_pretrained, BertModel,
     * GPT2LMHeadModel); tokenizers, configs and processors are not modules */
    size_t ql = strlen(qual);
    if (!strncmp(qual, "transformers.", 13) && ql > 16 && !strcmp(qual + ql - 16, ".from_pretrained")) {
        const char *cls = qual + 13;
        const char *dot = strchr(cls, '.');
        size_t n = dot ? (size_t)(dot - cls) : 0;
        for (size_t i = 0; i + 5 <= n; i++)
            if (!strncmp(cls + i, "Model", 5)) return EFF_MODULE;
        return EFF_NONE;
    }
    ApiEffect e = api__prefixed(qual);
    if (e != EFF_NONE) return e;
    const char *last = api__last(qual);
    hit = strmap_get(&lasts, last, strlen(last));
    return hit == UINT32_MAX ? EFF_NONE : (ApiEffect)api_table[hit].effect;
}

/* A call of a container's method that stores its arguments: a set's add() takes one (`tracker.add(
 * "loss", v)` is an object's method of unknown effect, a logger's or a meter's) */
bool api_method_collects(const char *name, uint32_t nargs)
{
    return (api_method(name).flags & M_MUTATES) && (nargs == 1 || strcmp(name, "add"));
}

ApiMethod api_method(const char *name)
{
    ApiMethod r = {EFF_NONE, 0};
    if (!name) return r;
    api_init();
    uint32_t slot = strmap_get(&methods, name, strlen(name));
    if (slot != UINT32_MAX) r = method_info[slot];
    for (uint32_t i = 0; i < ARRAY_LEN(method_parts); i++)
        if (strstr(name, method_parts[i].name)) r.flags |= method_parts[i].flags;
    return r;
}

bool api_method_listed(const char *name)
{
    if (!name) return false;
    api_init();
    return strmap_get(&methods, name, strlen(name)) != UINT32_MAX;
}

ApiEffect api_attr(const char *name)
{
    if (!name) return EFF_NONE;
    api_init();
    uint32_t hit = strmap_get(&attrs, name, strlen(name));
    return hit == UINT32_MAX ? EFF_NONE : (ApiEffect)api_table[hit].effect;
}

ApiBuiltin api_builtin(const char *name)
{
    if (!name) return B_NONE;
    api_init();
    uint32_t hit = strmap_get(&builtin_set, name, strlen(name));
    return hit == UINT32_MAX ? B_NONE : (ApiBuiltin)hit;
}

const char *api_kw(ApiKw kw) { return kw < API_KW_COUNT ? kw_names[kw] : ""; }
const char *api_name(ApiName id) { return id < API_NAME_COUNT ? names[id] : ""; }
bool api_is(const char *s, ApiName id) { return s && !strcmp(s, api_name(id)); }

bool api_is_torch(const char *qual)
{
    const char *t = names[API_NAME_TORCH];
    return qual && !strncmp(qual, t, strlen(t));
}

ValKind api_declared_type(const char *qual)
{
    if (!qual) return VK_UNKNOWN;
    for (uint32_t i = 0; i < ARRAY_LEN(declared_types); i++) {
        const char *p = declared_types[i].part, *u = declared_types[i].unless;
        /* an entry with an exception is a prefix (torch.optim. but not its lr_scheduler) */
        bool hit = u ? !strncmp(qual, p, strlen(p)) && !strstr(qual, u) : strstr(qual, p) != NULL;
        if (hit) return (ValKind)declared_types[i].kind;
    }
    return VK_UNKNOWN;
}

bool api_module_base(const char *qual)
{
    if (!qual) return false;
    const char *last = api__last(qual);
    for (uint32_t i = 0; i < ARRAY_LEN(module_bases); i++) {
        const char *t = module_bases[i].text;
        switch (module_bases[i].how) {
        case BASE_PREFIX: if (!strncmp(qual, t, strlen(t))) return true; break;
        case BASE_LAST: if (!strcmp(last, t)) return true; break;
        default: if (strstr(qual, t)) return true; break;
        }
    }
    return false;
}

bool api_runs_module(const char *qual)
{
    if (!qual) return false;
    for (uint32_t i = 0; i < ARRAY_LEN(runs_module); i++)
        if (runs_module[i].whole ? !strcmp(qual, runs_module[i].text) : strstr(qual, runs_module[i].text) != NULL)
            return true;
    return false;
}

uint32_t api_call_kwarg(const IrFunc *f, uint32_t call, ApiKw kw) { return ir_call_kwarg(f, call, api_kw(kw)); }

bool api_kw_data(const char *qual)
{
    for (uint32_t i = 0; qual && i < ARRAY_LEN(kw_data_prefixes); i++)
        if (!strncmp(qual, kw_data_prefixes[i], strlen(kw_data_prefixes[i]))) return true;
    return false;
}

bool api_call_no_reduction(const IrFunc *f, uint32_t call)
{
    uint32_t r = api_call_kwarg(f, call, API_KW_REDUCTION);
    if (r != IR_NONE) {
        const IrOp *o = &f->ops.items[r];
        if (o->kind != IR_CONST || !o->name) return true;
        for (uint32_t i = 0; i < ARRAY_LEN(reductions); i++)
            if (strstr(o->name, reductions[i])) return false;
        return true;
    }
    r = api_call_kwarg(f, call, API_KW_REDUCE);
    return r != IR_NONE && !ir_const_true(f, r);
}

/* Every name Python binds in builtins (3.12), sorted: a name read and never bound in a file that
 * does `from X import *` is X's unless it is one of these. */
static const char *const py_builtin_names[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
    "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
    "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented", "NotImplementedError",
    "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit",
    "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
    "ValueError", "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__file__",
    "__import__", "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "anext", "any",
    "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile",
    "complex", "copyright", "credits", "delattr", "dict", "dir", "display", "divmod", "enumerate", "eval",
    "exec", "exit", "filter", "float", "format", "frozenset", "get_ipython", "getattr", "globals", "hasattr",
    "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter", "len", "license", "list",
    "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print",
    "property", "quit", "range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted",
    "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
};

static int api__cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

bool api_python_builtin(const char *name)
{
    return name && bsearch(&name, py_builtin_names, ARRAY_LEN(py_builtin_names), sizeof py_builtin_names[0],
                           api__cmp_str) != NULL;
}
