/* The rule table generated from rules/rules.def, and lookups by code or name. */
#include <strings.h>
#include "engine/rules.h"

extern const char *const gl_rule_docs[RULE_COUNT];

static const RuleInfo rule_table[RULE_COUNT] = {
#define RULE(id, code, name, sev, summary) {RULE_##id, code, name, sev, summary, NULL},
#include "rules.def"
#undef RULE
};

static const char *const rule_urls[RULE_COUNT] = {
#define RULE(id, code, name, sev, summary) "https://gradleak.dev/rules/" code,
#include "rules.def"
#undef RULE
};

static RuleInfo rule_table_with_docs[RULE_COUNT];
static int rule_docs_ready;

const RuleInfo *rule_info(RuleId id)
{
    if (id >= RULE_COUNT) return NULL;
    if (!__atomic_load_n(&rule_docs_ready, __ATOMIC_ACQUIRE)) {
        /* benign race: every thread writes the same values */
        for (int i = 0; i < RULE_COUNT; i++) {
            rule_table_with_docs[i] = rule_table[i];
            rule_table_with_docs[i].doc = gl_rule_docs[i] ? gl_rule_docs[i] : "";
        }
        __atomic_store_n(&rule_docs_ready, 1, __ATOMIC_RELEASE);
    }
    return &rule_table_with_docs[id];
}

const RuleInfo *rule_by_code(const char *code)
{
    for (int i = 0; i < RULE_COUNT; i++)
        if (!strcasecmp(rule_table[i].code, code) || !strcmp(rule_table[i].name, code)) return rule_info((RuleId)i);
    return NULL;
}

const char *rule_url(RuleId id) { return id < RULE_COUNT ? rule_urls[id] : ""; }
