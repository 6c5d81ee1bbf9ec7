/* The rule table generated from rules/rules.def, and lookups by code or name. Read-only data:
 * nothing is built at run time, so any thread may read it. */
#include <strings.h>
#include "base/rule_catalog.h"

/* build/gen/rule_docs.c, from the rule files' header comments */
extern const char *const gl_rule_docs[RULE_COUNT];

#define TV(major, minor) {major, minor}
static const RuleInfo rule_table[RULE_COUNT] = {
#define RULE(id, name, sev, flags, measure, since, summary) \
    {RULE_##id, #id, name, sev, flags, measure, since, summary},
#include "rules/rules.def"
#undef RULE
};
#undef TV

static const char *const rule_urls[RULE_COUNT] = {
#define RULE(id, name, sev, flags, measure, since, summary) "https://gradleak.dev/rules/" #id,
#include "rules/rules.def"
#undef RULE
};

const RuleInfo *rule_info(RuleId id)
{
    return id >= 0 && id < RULE_COUNT ? &rule_table[id] : NULL;
}

const RuleInfo *rule_by_code(const char *code)
{
    for (int i = 0; i < RULE_COUNT; i++)
        if (!strcasecmp(rule_table[i].code, code) || !strcmp(rule_table[i].name, code)) return &rule_table[i];
    return NULL;
}

const char *rule_url(RuleId id) { return id >= 0 && id < RULE_COUNT ? rule_urls[id] : ""; }

const char *rule_doc(RuleId id)
{
    return id >= 0 && id < RULE_COUNT && gl_rule_docs[id] ? gl_rule_docs[id] : "";
}
