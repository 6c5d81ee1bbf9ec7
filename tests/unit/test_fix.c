/* Unit tests for the fix engine (src/engine/fix.c), the rules' fix builders on real rules (BOM,
 * CRLF, tabs, string literals kept byte for byte) and the unified diff writer (src/cli/udiff.c).
 * Every test runs under the counting allocator and fails on a leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include "cli/udiff.h"
#include "engine/fix.h"

static Fix one_edit(FixSafety safety, uint32_t start, uint32_t end, const char *text, Edit *storage)
{
    storage[0] = (Edit){start, end, text};
    return (Fix){"test", safety, storage, 1};
}

static char *apply_all(const char *src, const Fix *const *fixes, uint32_t n, uint32_t *applied)
{
    StrBuf out;
    sb_init(&out);
    *applied = fix_apply(src, strlen(src), fixes, n, &out);
    return out.data ? sb_take(&out) : gl_strdup("");
}

/* ---- fix_apply ---- */

static void apply_disjoint_any_order(void **state)
{
    (void)state;
    Edit e1[1], e2[1];
    Fix a = one_edit(FIX_SAFE, 6, 10, "loss.item()", e1), b = one_edit(FIX_SAFE, 0, 5, "total", e2);
    const Fix *fixes[] = {&a, &b}; /* not in source order */
    uint32_t k;
    char *r = apply_all("acc_t+=loss\n", fixes, 2, &k);
    assert_int_equal(k, 2);
    assert_string_equal(r, "total+loss.item()s\n");
    gl_free(r);
}

static void apply_overlap_waits(void **state)
{
    (void)state;
    Edit e1[1], e2[1], e3[1];
    Fix a = one_edit(FIX_SAFE, 0, 4, "AAAA", e1), b = one_edit(FIX_SAFE, 2, 6, "BB", e2);
    Fix c = one_edit(FIX_SAFE, 4, 4, "^", e3); /* an insertion right at the end of a: ambiguous */
    const Fix *fixes[] = {&a, &b, &c};
    uint32_t k;
    char *r = apply_all("0123456789", fixes, 3, &k);
    assert_int_equal(k, 1);
    assert_string_equal(r, "AAAA456789");
    gl_free(r);
}

static void apply_skips_malformed(void **state)
{
    (void)state;
    Edit out_of_range[1], backwards[1], unsorted[2], good[1];
    Fix a = one_edit(FIX_SAFE, 3, 99, "x", out_of_range), b = one_edit(FIX_SAFE, 5, 2, "x", backwards);
    unsorted[0] = (Edit){6, 7, "x"};
    unsorted[1] = (Edit){1, 2, "y"};
    Fix c = {"unsorted", FIX_SAFE, unsorted, 2};
    Fix d = one_edit(FIX_SAFE, 9, 10, "!", good);
    Fix empty = {"nothing", FIX_SAFE, NULL, 0};
    const Fix *fixes[] = {&a, &b, &c, &empty, NULL, &d};
    uint32_t k;
    char *r = apply_all("0123456789", fixes, 6, &k);
    assert_int_equal(k, 1);
    assert_string_equal(r, "012345678!");
    gl_free(r);
}

static void apply_duplicate_once_multi_edit(void **state)
{
    (void)state;
    Edit e1[1], e2[1], m[2];
    Fix a = one_edit(FIX_SAFE, 0, 1, "X", e1), b = one_edit(FIX_SAFE, 0, 1, "X", e2);
    m[0] = (Edit){3, 3, "["};
    m[1] = (Edit){5, 5, "]"};
    Fix c = {"wrap", FIX_SAFE, m, 2};
    const Fix *fixes[] = {&a, &b, &c};
    uint32_t k;
    char *r = apply_all("abcdefg", fixes, 3, &k);
    assert_int_equal(k, 2); /* a and b are one edit: applied once */
    assert_string_equal(r, "Xbc[de]fg");
    gl_free(r);
    assert_true(fix_applicable(&c, false));
    c.safety = FIX_UNSAFE;
    assert_false(fix_applicable(&c, false));
    assert_true(fix_applicable(&c, true));
    assert_false(fix_applicable(NULL, true));
}

/* ---- fix_file with an injected linter ---- */

/* Reports "xx" (the first one) with a fix that makes it "x": the file needs one pass per pair.
 * "BREAK" gets a fix that writes an unclosed parenthesis. */
static int fake_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                     LintResult *out)
{
    int rc = engine_lint(path, src, len, lang, o, out);
    if (rc < 0) return rc;
    const char *hit = NULL, *text = NULL;
    size_t n = 0;
    for (size_t i = 0; i + 1 < len && !hit; i++)
        if (src[i] == 'x' && src[i + 1] == 'x') hit = src + i, n = 2, text = "x";
    for (size_t i = 0; i + 5 <= len && !hit; i++)
        if (!memcmp(src + i, "BREAK", 5)) hit = src + i, n = 5, text = "f((";
    if (!hit) return 0;
    Diag d;
    memset(&d, 0, sizeof d);
    d.rule = RULE_GL101;
    d.span.start = (uint32_t)(hit - src);
    d.span.end = d.span.start + (uint32_t)n;
    d.message = "fake";
    d.fix = ARENA_NEW(&out->arena, Fix);
    d.fix->message = "fake fix";
    d.fix->safety = FIX_SAFE;
    d.fix->edits = ARENA_NEW(&out->arena, Edit);
    d.fix->edits[0] = (Edit){d.span.start, d.span.end, text};
    d.fix->n_edits = 1;
    array_push(&out->diags, d);
    return 0;
}

static void file_fixed_point_and_cap(void **state)
{
    (void)state;
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    fo.lint = fake_lint;
    const char *src = "a = 'xxxx'\n";
    FixOutcome r;
    assert_int_equal(fix_file("t.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_true(r.changed);
    assert_false(r.reverted);
    assert_false(r.capped);
    assert_int_equal(r.applied, 3);
    assert_int_equal(r.passes, 3);
    assert_int_equal(r.n_rules_fixed[RULE_GL101], 3);
    assert_string_equal(r.src, "a = 'x'\n");
    assert_int_equal(r.lint.diags.len, 0);
    fix_outcome_free(&r);

    fo.max_passes = 2;
    assert_int_equal(fix_file("t.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_true(r.capped);
    assert_int_equal(r.applied, 2);
    assert_string_equal(r.src, "a = 'xx'\n");
    assert_int_equal(r.lint.diags.len, 1); /* what is left is reported */
    fix_outcome_free(&r);

    fo.max_passes = 0;
    fo.rule = RULE_GL102; /* another rule's fixes only: nothing applies */
    assert_int_equal(fix_file("t.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_false(r.changed);
    assert_int_equal(r.applied, 0);
    assert_memory_equal(r.src, src, strlen(src));
    fix_outcome_free(&r);
}

static void file_revert_on_syntax_error(void **state)
{
    (void)state;
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    fo.lint = fake_lint;
    /* one good pass (xx -> x), then the BREAK fix leaves `f((`: everything is undone */
    const char *src = "\xEF\xBB\xBFy = 'xx'\r\nBREAK\r\n";
    FixOutcome r;
    assert_int_equal(fix_file("t.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_true(r.reverted);
    assert_false(r.changed);
    assert_int_equal(r.applied, 0);
    assert_int_equal(r.len, strlen(src));
    assert_memory_equal(r.src, src, strlen(src));
    assert_non_null(strstr(r.error, "syntax error"));
    assert_non_null(strstr(r.error, "GL101"));
    fix_outcome_free(&r);
}

/* the input already has a syntax error: a pass that parses with more is declined (everything
 * undone, the user asked to fix the syntax first), not reported as a bug in gradleak */
static void file_declined_when_input_broken(void **state)
{
    (void)state;
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    fo.lint = fake_lint;
    const char *src = "def g(:\n    pass\nBREAK\n";
    FixOutcome r;
    assert_int_equal(fix_file("t.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_false(r.reverted);
    assert_true(r.declined);
    assert_false(r.changed);
    assert_int_equal(r.applied, 0);
    assert_memory_equal(r.src, src, strlen(src));
    assert_non_null(strstr(r.error, "fix the syntax error first"));
    assert_null(strstr(r.error, "bug"));
    fix_outcome_free(&r);
}

/* ---- real rules: GL104's wrap keeps every byte outside its edits ---- */

static void gl104_wrap_bom_crlf_tabs_strings(void **state)
{
    (void)state;
    const char *src =
        "\xEF\xBB\xBFimport torch\r\n"
        "import torch.nn as nn\r\n"
        "\r\n"
        "def sample(model, x, h, n):\r\n"
        "\tmodel.eval()\r\n"
        "\tfor _ in range(n):\r\n"
        "\t\tx, h = model(x, h)\r\n"
        "\r\n"
        "\t\tnote = \"\"\"first\r\n"
        "second \\\r\n"
        "\tthird\"\"\"\r\n"
        "\t\tprint(note,\r\n"
        "  x)\r\n"
        "\treturn x.argmax().item()\r\n";
    const char *want =
        "\xEF\xBB\xBFimport torch\r\n"
        "import torch.nn as nn\r\n"
        "\r\n"
        "def sample(model, x, h, n):\r\n"
        "\tmodel.eval()\r\n"
        "\twith torch.no_grad():\r\n"
        "\t\tfor _ in range(n):\r\n"
        "\t\t\tx, h = model(x, h)\r\n"
        "\r\n"
        "\t\t\tnote = \"\"\"first\r\n"
        "second \\\r\n"
        "\tthird\"\"\"\r\n"
        "\t\t\tprint(note,\r\n"
        "  x)\r\n"
        "\treturn x.argmax().item()\r\n";
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    fo.rule = RULE_GL104;
    FixOutcome r;
    assert_int_equal(fix_file("s.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_false(r.reverted);
    if (!r.changed || strcmp(r.src, want) != 0) print_error("got:\n%s\n", r.src);
    assert_true(r.changed); /* safe: nothing reaches a backward, the result is a Python int */
    assert_string_equal(r.src, want);
    for (uint32_t i = 0; i < r.lint.diags.len; i++) assert_int_not_equal(r.lint.diags.items[i].rule, RULE_GL104);
    fix_outcome_free(&r);
}

static void gl104_unsafe_when_returned(void **state)
{
    (void)state;
    const char *src = "import torch\n"
                      "def gen(model, x, h, n):\n"
                      "    model.eval()\n"
                      "    for _ in range(n):\n"
                      "        x, h = model(x, h)\n"
                      "    return x\n";
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    FixOutcome r;
    assert_int_equal(fix_file("g.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_false(r.changed); /* the returned x carries the graph: only --unsafe-fixes wraps it */
    bool found = false;
    for (uint32_t i = 0; i < r.lint.diags.len; i++) {
        const Diag *d = &r.lint.diags.items[i];
        if (d->rule != RULE_GL104) continue;
        found = true;
        assert_non_null(d->fix);
        assert_int_equal(d->fix->safety, FIX_UNSAFE);
    }
    assert_true(found);
    fix_outcome_free(&r);
    fo.unsafe = true;
    assert_int_equal(fix_file("g.py", src, strlen(src), LANG_PYTHON, &lo, &fo, &r), 0);
    assert_true(r.changed);
    assert_string_equal(r.src, "import torch\n"
                               "def gen(model, x, h, n):\n"
                               "    model.eval()\n"
                               "    with torch.no_grad():\n"
                               "        for _ in range(n):\n"
                               "            x, h = model(x, h)\n"
                               "    return x\n");
    fix_outcome_free(&r);
}

/* ---- udiff ---- */

static void udiff_hunks(void **state)
{
    (void)state;
    StrBuf out;
    sb_init(&out);
    udiff(&out, "f.py", "a\nb\n", 4, "a\nb\n", 4, 3);
    assert_int_equal(out.len, 0);
    const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    const char *b = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13";
    udiff(&out, "f.py", a, strlen(a), b, strlen(b), 3);
    assert_string_equal(out.data, "--- f.py\n+++ f.py\n"
                                  "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
                                  "@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n\\ No newline at end of file\n");
    sb_clear(&out);
    udiff(&out, "e.py", "", 0, "x\r\n", 3, 3);
    assert_string_equal(out.data, "--- e.py\n+++ e.py\n@@ -0,0 +1,1 @@\n+x\r\n");
    sb_free(&out);
}

/* The front end builds its tables once per process: do that before the counting allocator
 * watches, so they are not taken for leaks. */
static int warm_up(void **state)
{
    (void)state;
    LintOptions lo;
    lint_options_default(&lo);
    LintResult r;
    const char *src = "import torch\nfor x in y:\n    z = m(z)\n";
    if (engine_lint("w.py", src, strlen(src), LANG_PYTHON, &lo, &r) < 0) return -1;
    lint_result_free(&r);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(apply_disjoint_any_order, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(apply_overlap_waits, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(apply_skips_malformed, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(apply_duplicate_once_multi_edit, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(file_fixed_point_and_cap, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(file_revert_on_syntax_error, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(file_declined_when_input_broken, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(gl104_wrap_bom_crlf_tabs_strings, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(gl104_unsafe_when_returned, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(udiff_hunks, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, warm_up, NULL);
}
