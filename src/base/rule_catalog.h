/* The rule catalog: every rule's identity and properties, generated from rules/rules.def (the one
 * place a per-rule fact is written). The ground floor: configuration, output, the engine, the
 * rules and validate all read rules from here.
 *
 *     const RuleInfo *ri = rule_by_code("GL101");      // or by name; NULL when unknown
 *     if (ri && ri->measure == RM_SLOPE) ...            // validate measures its growth
 *     printf("%s %s\n", ri->code, rule_url(ri->id));
 */
#ifndef GL_RULE_CATALOG_H
#define GL_RULE_CATALOG_H

#include "base/base.h"

typedef enum RuleId {
    RULE_NONE = -1, /* "no rule" where a rule is optional (FixOptions.rule: every rule) */
#define RULE(id, name, sev, flags, measure, since, summary) RULE_##id,
#include "rules/rules.def"
#undef RULE
    RULE_COUNT
} RuleId;

typedef enum Severity {
    SEV_ERROR,   /* device memory grows every iteration, or the code is broken */
    SEV_WARNING, /* host-side growth, slowdown, or no effect */
    SEV_INFO,
} Severity;

/* RuleInfo.flags (rules.def says what each means). */
enum {
    RF_FIX_CXX = 1u << 0,    /* the fixes are the same text in C++ */
    RF_AFTER_NOQA = 1u << 1, /* runs after suppressions (GL901) */
    RF_NOGRAD_FIX = 1u << 2, /* torch.no_grad() around a loop without backward() is the fix */
};

/* How `gradleak validate` measures a rule's hazard. */
typedef enum RuleMeasure {
    RM_NONE,  /* not a growth rule: not validated */
    RM_SLOPE, /* grows every iteration: bytes per iteration, leaky against fixed */
    RM_PEAK,  /* holds more at once without growing: peak bytes, leaky against fixed */
} RuleMeasure;

/* A "major.minor" torch version; 0.0 = not set (every rule applies). */
typedef struct TorchVersion {
    uint16_t major, minor;
} TorchVersion;

typedef struct RuleInfo {
    RuleId id;
    const char *code;    /* "GL101" */
    const char *name;    /* "tensor-accumulated-across-iterations" */
    Severity severity;   /* default severity */
    unsigned flags;      /* RF_* */
    RuleMeasure measure;
    TorchVersion since;  /* the rule is off for an older torch-version */
    const char *summary; /* one line */
} RuleInfo;

/* The entry of a rule; NULL for an id out of range (a damaged cache row, say). */
const RuleInfo *rule_info(RuleId id);
const RuleInfo *rule_by_code(const char *code); /* NULL when unknown; accepts code or name */
const char *rule_url(RuleId id);                /* documentation URL ("" out of range) */
/* The markdown documentation from the rule file's header comment ("" when it has none). */
const char *rule_doc(RuleId id);

/* A set of enabled rules. */
typedef struct RuleSet {
    uint8_t on[RULE_COUNT];
} RuleSet;

#endif
