/* Unit tests for src/config/config.c: globs, code lists, torch versions, reading one file, rules
 * per file, discovery and reload (tests/config/ covers the CLI end to end). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>
#include "count_alloc.h"
#include "config/config.h"

/* ---- globs: (pattern, text, match) rows ---- */
static const struct {
    const char *pattern, *text;
    bool match;
} glob_rows[] = {
    {"*.py", "a.py", true},
    {"*.py", "dir/a.py", false}, /* '*' stays in one component */
    {"**/*.py", "a.py", true},   /* '**' then a slash also matches no folder */
    {"**/*.py", "x/y/a.py", true},
    {"tests/**", "tests/a/b.py", true},
    {"tests/**", "test/a.py", false},
    {"a/**/b", "a/b", true},
    {"a/**/b", "a/x/y/b", true},
    {"a/**/b", "a/xb", false},
    {"?.py", "a.py", true},
    {"?.py", "ab.py", false},
    {"?", "/", false},
    {"[ab].py", "b.py", true},
    {"[!ab].py", "b.py", false},
    {"[!ab].py", "c.py", true},
    {"[a-c]x", "bx", true},
    {"[a-c]x", "dx", false},
    {"[]]", "]", true},
    {"[", "[", true}, /* an unclosed class is a literal */
    {"\\*", "*", true},
    {"\\*", "a", false},
    {"", "", true},
    {"", "a", false},
    {"*", "", true},
    {"a*b*c*d*e*f*g*h*x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}, /* no blow-up */
};

static void test_glob(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof glob_rows / sizeof glob_rows[0]; i++)
        if (config_glob_match(glob_rows[i].pattern, glob_rows[i].text) != glob_rows[i].match)
            fail_msg("glob row %zu: '%s' vs '%s' should be %s", i, glob_rows[i].pattern, glob_rows[i].text,
                     glob_rows[i].match ? "a match" : "no match");
}

static void test_codes(void **state)
{
    (void)state;
    RuleSet s;
    ConfigError err;
    assert_int_equal(config_parse_codes("GL3, GL401", &s, &err), 0);
    assert_true(s.on[RULE_GL301] && s.on[RULE_GL302] && s.on[RULE_GL401]);
    assert_false(s.on[RULE_GL101] || s.on[RULE_GL402]);
    assert_int_equal(config_parse_codes("tensor-move-discarded", &s, &err), 0);
    assert_true(s.on[RULE_GL201]);
    assert_false(s.on[RULE_GL301]); /* cleared first */
    assert_int_equal(config_parse_codes("ALL", &s, &err), 0);
    for (int i = 0; i < RULE_COUNT; i++) assert_true(s.on[i]);
    assert_int_equal(config_parse_codes("GL301,GL999", &s, &err), -1);
    assert_non_null(strstr(err.message, "unknown rule 'GL999'"));
}

static void test_torch_version(void **state)
{
    (void)state;
    TorchVersion v;
    assert_int_equal(config_parse_torch_version("2.1", &v), 0);
    assert_true(v.major == 2 && v.minor == 1);
    assert_int_equal(config_parse_torch_version("1.13.1", &v), 0);
    assert_true(v.major == 1 && v.minor == 13);
    assert_int_equal(config_parse_torch_version("2.5.0+cu121", &v), 0);
    assert_int_equal(config_parse_torch_version("2.6.0a0", &v), 0);
    assert_int_equal(config_parse_torch_version("2", &v), -1);
    assert_int_equal(config_parse_torch_version("latest", &v), -1);
    assert_int_equal(config_parse_torch_version("2.x", &v), -1);
    assert_int_equal(config_parse_torch_version("", &v), -1);
    assert_int_equal(config_parse_torch_version("1000.1", &v), -1);
}

/* A scratch folder under /tmp, left as the cwd for the test. */
static char scratch[256];
static char old_cwd[4096];

static void enter_scratch(void)
{
    assert_non_null(getcwd(old_cwd, sizeof old_cwd));
    snprintf(scratch, sizeof scratch, "/tmp/gradleak-test-config.XXXXXX");
    assert_non_null(mkdtemp(scratch));
    assert_int_equal(chdir(scratch), 0);
}

static void leave_scratch(void)
{
    assert_int_equal(chdir(old_cwd), 0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_load_file(void **state)
{
    (void)state;
    enter_scratch();
    write_file("gradleak.toml", "select = [\"GL3\", \"GL4\"]\nignore = [\"GL302\"]\ntorch-version = \"0.3\"\n"
                                "exclude = [\"gen\"]\n[per-file-ignores]\n\"tests/*\" = [\"GL301\"]\n\"!src/**\" = [\"GL402\"]\n");
    Settings s;
    ConfigError err;
    assert_int_equal(config_load_file("gradleak.toml", NULL, &s, &err), 0);
    assert_true(s.rules.on[RULE_GL301] && !s.rules.on[RULE_GL302] && s.rules.on[RULE_GL401]);
    assert_false(s.rules.on[RULE_GL101]);
    RuleSet r;
    settings_rules_for(&s, "tests/test_a.py", &r);
    assert_false(r.on[RULE_GL301]);
    assert_false(r.on[RULE_GL401] || r.on[RULE_GL403]); /* torch 0.3: off */
    assert_false(r.on[RULE_GL402]);                   /* outside src/: the negated glob applies */
    settings_rules_for(&s, "src/pkg/a.py", &r);
    assert_true(r.on[RULE_GL301] && r.on[RULE_GL402]);
    assert_true(settings_excluded(&s, "gen/x.py"));
    assert_true(settings_excluded(&s, "a/gen/b/x.py"));
    assert_false(settings_excluded_entry(&s, "gen/x.py"));
    assert_true(settings_excluded_entry(&s, "a/gen"));
    assert_false(settings_excluded(&s, "generated.py"));
    uint64_t h = s.hash;
    settings_free(&s);

    /* a flag changes the hash and wins over the file */
    ConfigOverrides ov;
    config_overrides_init(&ov);
    RuleOp op = {RULE_OP_EXTEND, {{0}}};
    op.codes.on[RULE_GL101] = 1;
    array_push(&ov.rule_ops, op);
    assert_int_equal(config_load_file("gradleak.toml", &ov, &s, &err), 0);
    assert_true(s.rules.on[RULE_GL101]);
    assert_true(s.hash != h);
    settings_free(&s);
    config_overrides_free(&ov);

    write_file("bad.toml", "select = [\"GL301\"]\n  unknown-thing = true\n");
    assert_int_equal(config_load_file("bad.toml", NULL, &s, &err), -1);
    assert_string_equal(err.message, "bad.toml:2:3: unknown key 'unknown-thing'; valid keys: " CONFIG_KEYS);
    write_file("bad.toml", "jobs = 0\n");
    assert_int_equal(config_load_file("bad.toml", NULL, &s, &err), -1);
    assert_non_null(strstr(err.message, "bad.toml:1:8: 'jobs'"));
    assert_int_equal(config_load_file("missing.toml", NULL, &s, &err), -1);
    assert_non_null(strstr(err.message, "missing.toml: cannot read"));
    leave_scratch();
}

static void test_discovery_and_reload(void **state)
{
    (void)state;
    enter_scratch();
    assert_int_equal(mkdir("pkg", 0755), 0);
    assert_int_equal(mkdir("pkg/sub", 0755), 0);
    write_file("pyproject.toml", "[tool.gradleak]\nselect = [\"GL301\"]\n");
    write_file("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n"); /* no [tool.gradleak]: passed over */
    ConfigOverrides ov;
    config_overrides_init(&ov);
    Config *c = config_new(&ov);
    const Settings *s;
    ConfigError err;
    assert_int_equal(config_settings_for(c, "pkg/sub/a.py", &s, &err), 0);
    assert_non_null(strstr(s->config_path, "pyproject.toml"));
    assert_null(strstr(s->config_path, "pkg/"));
    assert_true(s->rules.on[RULE_GL301] && !s->rules.on[RULE_GL302]);
    const Settings *again;
    assert_int_equal(config_settings_for(c, "pkg/b.py", &again, &err), 0);
    assert_ptr_equal(s, again); /* one Settings per file */

    /* the file changes (the LSP's case): nothing changes until config_reload */
    write_file("pkg/sub/gradleak.toml", "select = [\"GL302\"]\n");
    assert_int_equal(config_settings_for(c, "pkg/sub/a.py", &s, &err), 0);
    assert_true(s->rules.on[RULE_GL301]);
    config_reload(c);
    assert_int_equal(config_settings_for(c, "pkg/sub/a.py", &s, &err), 0);
    assert_true(s->rules.on[RULE_GL302] && !s->rules.on[RULE_GL301]);
    assert_int_equal(config_settings_for(c, "pkg/b.py", &s, &err), 0);
    assert_true(s->rules.on[RULE_GL301]);

    write_file("pkg/sub/gradleak.toml", "select = 3\n");
    config_reload(c);
    assert_int_equal(config_settings_for(c, "pkg/sub/a.py", &s, &err), -1);
    assert_string_equal(err.message, "pkg/sub/gradleak.toml:1:10: 'select' must be an array of strings, got integer "
                                     "(e.g. select = [\"...\"])");
    /* the same error again, from the cache */
    assert_int_equal(config_settings_for(c, "pkg/sub/other.py", &s, &err), -1);
    assert_int_equal(config_settings_for(c, "pkg/b.py", &s, &err), 0);
    config_free(c);
    leave_scratch();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_glob, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_codes, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_torch_version, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_load_file, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_discovery_and_reload, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
