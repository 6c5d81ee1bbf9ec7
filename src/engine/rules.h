/* The rule registry: generated from rules/rules.def, one entry per rule. */
#ifndef GL_RULES_H
#define GL_RULES_H

#include "base/diag.h"

typedef enum RuleId {
#define RULE(id, code, name, sev, summary) RULE_##id,
#include "rules.def"
#undef RULE
    RULE_COUNT
} RuleId;

typedef struct RuleInfo {
    RuleId id;
    const char *code;    /* "GL101" */
    const char *name;    /* "tensor-accumulated-across-iterations" */
    Severity severity;   /* default severity */
    const char *summary; /* one line */
    const char *doc;     /* markdown from the rule file's header */
} RuleInfo;

const RuleInfo *rule_info(RuleId id);
const RuleInfo *rule_by_code(const char *code); /* NULL when unknown; accepts code or name */
const char *rule_url(RuleId id);                /* documentation URL */

/* A set of enabled rules. */
typedef struct RuleSet {
    uint8_t on[RULE_COUNT];
} RuleSet;

#endif
