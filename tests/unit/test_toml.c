/* Unit tests for src/config/toml.c: accessors, positions, errors, limits and leaks (the tomllib
 * difftest in tests/toml/ covers the grammar broadly; these pin the API and the messages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include <math.h>
#include "config/toml.h"

/* ---- a counting allocator: every test checks that parsing, failed or not, frees everything ---- */

static TomlValue *parse_ok(const char *src)
{
    TomlError err;
    TomlValue *root = toml_parse(src, strlen(src), &err);
    if (!root) fail_msg("parse failed: %u:%u: %s\nsource: %s", err.line, err.col, err.message, src);
    return root;
}

/* ---- valid documents ---- */

static void test_scalars(void **state)
{
    (void)state;
    TomlValue *root = parse_ok("s = \"a\\tb\\u00e9\\U0001F600\"\n"
                               "lit = 'C:\\path'\n"
                               "i = -9_223_372_036_854_775_808\n"
                               "h = 0xDEAD_beef\n"
                               "o = 0o755\n"
                               "b = 0b1010\n"
                               "f = 6.626e-34\n"
                               "ninf = -inf\n"
                               "nan = nan\n"
                               "t = true\n");
    int64_t i;
    double f;
    bool b;
    assert_string_equal(toml_as_string(toml_table_get(root, "s")), "a\tb\xc3\xa9\xf0\x9f\x98\x80");
    assert_string_equal(toml_as_string(toml_table_get(root, "lit")), "C:\\path");
    assert_true(toml_as_int(toml_table_get(root, "i"), &i));
    assert_true(i == INT64_MIN);
    assert_true(toml_as_int(toml_table_get(root, "h"), &i));
    assert_int_equal(i, 0xDEADBEEF);
    assert_true(toml_as_int(toml_table_get(root, "o"), &i));
    assert_int_equal(i, 0755);
    assert_true(toml_as_int(toml_table_get(root, "b"), &i));
    assert_int_equal(i, 10);
    assert_true(toml_as_float(toml_table_get(root, "f"), &f));
    assert_true(f == 6.626e-34);
    assert_true(toml_as_float(toml_table_get(root, "ninf"), &f));
    assert_true(isinf(f) && f < 0);
    assert_true(toml_as_float(toml_table_get(root, "nan"), &f));
    assert_true(isnan(f));
    assert_true(toml_as_bool(toml_table_get(root, "t"), &b));
    assert_true(b);
    /* Type mismatches answer false / NULL and leave the output alone. */
    i = 7;
    assert_false(toml_as_int(toml_table_get(root, "f"), &i));
    assert_int_equal(i, 7);
    assert_false(toml_as_float(toml_table_get(root, "h"), &f));
    assert_null(toml_as_string(toml_table_get(root, "t")));
    assert_null(toml_table_get(root, "missing"));
    assert_null(toml_table_get(toml_table_get(root, "s"), "x"));
    assert_int_equal(toml_array_len(root), 0);
    toml_free(root);
}

static void test_strings(void **state)
{
    (void)state;
    static const struct {
        const char *id, *src, *want;
        size_t len;
    } cases[] = {
        {"ml-trim-first-newline", "s = \"\"\"\nab\"\"\"", "ab", 2},
        {"ml-line-ending-backslash", "s = \"\"\"a \\  \r\n\n   b\"\"\"", "a b", 3},
        {"ml-crlf-is-lf", "s = '''x\r\ny'''", "x\ny", 3},
        {"ml-extra-quotes", "s = \"\"\"a\"\"\"\"\"", "a\"\"", 3},
        {"ml-literal-extra-quote", "s = ''''''''", "''", 2},
        {"embedded-nul", "s = \"a\\u0000b\"", "a\0b", 3},
        {"empty", "s = ''", "", 0},
    };
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        TomlValue *root = parse_ok(cases[k].src);
        const TomlValue *s = toml_table_get(root, "s");
        if (toml_string_len(s) != cases[k].len || memcmp(toml_as_string(s), cases[k].want, cases[k].len) != 0)
            fail_msg("%s: got %zu bytes '%s'", cases[k].id, toml_string_len(s), toml_as_string(s));
        toml_free(root);
    }
}

static void test_tables_in_order(void **state)
{
    (void)state;
    TomlValue *root = parse_ok("z = 1\n"
                               "a.b = 2\n"
                               "[tool.gradleak]\n"
                               "select = [\"GL1\", # the growth rules\n"
                               "  \"GL3\",\n"
                               "]\n"
                               "[tool.gradleak.per-file-ignores]\n"
                               "\"tests/*.py\" = ['GL101']\n"
                               "[[run]]\n"
                               "name = 'a'\n"
                               "[[run]]\n"
                               "name = 'b'\n"
                               "opts = { fast = true, depth.max = 3 }\n");
    assert_int_equal(toml_table_len(root), 4);
    assert_string_equal(toml_table_key_at(root, 0), "z");
    assert_string_equal(toml_table_key_at(root, 1), "a");
    assert_string_equal(toml_table_key_at(root, 2), "tool");
    assert_string_equal(toml_table_key_at(root, 3), "run");
    const TomlValue *g = toml_table_get(toml_table_get(root, "tool"), "gradleak");
    assert_int_equal(toml_type(g), TOML_TABLE);
    const TomlValue *sel = toml_table_get(g, "select");
    assert_int_equal(toml_array_len(sel), 2);
    assert_string_equal(toml_as_string(toml_array_at(sel, 1)), "GL3");
    assert_null(toml_array_at(sel, 2));
    const TomlValue *pfi = toml_table_get(g, "per-file-ignores");
    assert_string_equal(toml_table_key_at(pfi, 0), "tests/*.py");
    const TomlValue *run = toml_table_get(root, "run");
    assert_int_equal(toml_array_len(run), 2);
    assert_string_equal(toml_as_string(toml_table_get(toml_array_at(run, 1), "name")), "b");
    int64_t depth = 0;
    const TomlValue *opts = toml_table_get(toml_array_at(run, 1), "opts");
    assert_true(toml_as_int(toml_table_get(toml_table_get(opts, "depth"), "max"), &depth));
    assert_int_equal(depth, 3);
    assert_string_equal(toml_type_name(toml_type(run)), "array");
    toml_free(root);
}

/* Lines and columns are 1-based; columns count code points. */
static void test_positions(void **state)
{
    (void)state;
    TomlValue *root = parse_ok("# é\n"
                               "name = \"é\"   \n"
                               "  [tool.gradleak]\n"
                               "\"ü\" = [1,\n"
                               "   2]\n");
    const TomlValue *name = toml_table_get(root, "name");
    assert_int_equal(toml_line(name), 2);
    assert_int_equal(toml_col(name), 8);
    const TomlValue *g = toml_table_get(toml_table_get(root, "tool"), "gradleak");
    assert_int_equal(toml_line(g), 3);
    assert_int_equal(toml_col(g), 9);
    const TomlValue *arr = toml_table_value_at(g, 0);
    assert_int_equal(toml_line(arr), 4);
    assert_int_equal(toml_col(arr), 7);
    assert_int_equal(toml_line(toml_array_at(arr, 1)), 5);
    assert_int_equal(toml_col(toml_array_at(arr, 1)), 4);
    uint32_t line, col;
    toml_table_key_pos(g, 0, &line, &col);
    assert_int_equal(line, 4);
    assert_int_equal(col, 1);
    assert_int_equal(toml_line(root), 1);
    assert_int_equal(toml_col(root), 1);
    toml_free(root);
}

/* ---- errors: id, source, line, col, message ---- */

static const struct {
    const char *id, *src;
    uint32_t line, col;
    const char *message;
} error_cases[] = {
    {"toml-err-1", "a = 1\na = 2\n", 2, 1, "duplicate key 'a'"},
    {"toml-err-2", "[a]\n[a]\n", 2, 2, "table 'a' is defined twice"},
    {"toml-err-3", "a = {x = 1}\n[a]\n", 2, 2, "table 'a' is defined twice"},
    {"toml-err-4", "a = {x = 1}\na.y = 2\n", 2, 1, "cannot add keys to inline table 'a'"},
    {"toml-err-5", "[a.b]\n[a]\nb.c = 1\n", 3, 1, "dotted keys cannot extend table 'b' defined by a header"},
    {"toml-err-6", "a = [1]\n[[a]]\n", 2, 3, "cannot append to inline array 'a'"},
    {"toml-err-7", "[[a]]\n[a]\n", 2, 2, "'a' is an array of tables; use [[a]]"},
    {"toml-err-8", "a = 1\n[a.b]\n", 2, 2, "key 'a' is already a integer, not a table"},
    {"toml-err-9", "d = 1979-05-27T07:32:00Z\n", 1, 5, "dates are not supported in gradleak configuration"},
    {"toml-err-10", "t = 07:32:00\n", 1, 5, "dates are not supported in gradleak configuration"},
    {"toml-err-11", "s = \"\\x41\"\n", 1, 6, "invalid escape sequence '\\x'"},
    {"toml-err-12", "s = \"\\uD800\"\n", 1, 6, "\\uD800 is not a Unicode scalar value"},
    {"toml-err-13", "s = \"é\x7f\"\n", 1, 7, "control character U+007F in a string"},
    {"toml-err-14", "s = \"abc\n", 1, 9, "newline in a single-line string"},
    {"toml-err-15", "s = '''abc", 1, 5, "unterminated string"},
    {"toml-err-16", "a = 1\r\nb = 2\r", 2, 6, "bare carriage return in the document"},
    {"toml-err-17", "# ok\n# \xff\n", 2, 3, "invalid UTF-8 byte 0xFF"},
    {"toml-err-18", "s = '\xed\xa0\x80'\n", 1, 6, "invalid UTF-8 byte 0xED"},
    {"toml-err-19", "i = 0x8000000000000000\n", 1, 5, "integer does not fit in 64 bits"},
    {"toml-err-20", "i = 01\n", 1, 6, "expected a newline after the statement"},
    {"toml-err-21", "f = 1.\n", 1, 6, "expected a newline after the statement"},
    {"toml-err-22", "a = [1 2]\n", 1, 8, "expected ',' or ']' in an array"},
    {"toml-err-23", "a = {x = 1,}\n", 1, 12, "expected a key, found '}'"},
    {"toml-err-24", "a = {x = 1,\n y = 2}\n", 1, 12, "expected a key"},
    {"toml-err-25", "a = \n", 1, 5, "expected a value"},
    {"toml-err-26", "a\n", 1, 2, "expected '=' after a key"},
    {"toml-err-27", "= 1\n", 1, 1, "expected a key, a [table] header or a comment"},
    {"toml-err-28", "[a\n", 1, 3, "expected ']' to close the table header"},
    {"toml-err-29", "[[a]\n", 1, 4, "expected ']]' to close the array-of-tables header"},
    {"toml-err-30", "s = \"\"\"a\\ b\"\"\"\n", 1, 9, "a line-ending backslash must be followed only by whitespace"},
    {"toml-err-31", "x = 1 # tab\tok, nul \x01 not\n", 1, 21, "control character U+0001 in a comment"},
    {"toml-err-32", "[fruit]\napple.color = 'red'\n[fruit.apple]\n", 3, 8, "table 'apple' is defined twice"},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t k = 0; k < ARRAY_LEN(error_cases); k++) {
        TomlError err;
        const char *src = error_cases[k].src;
        TomlValue *root = toml_parse(src, strlen(src), &err);
        if (root) {
            toml_free(root);
            fail_msg("%s: parsed, want an error", error_cases[k].id);
        }
        if (err.line != error_cases[k].line || err.col != error_cases[k].col ||
            strcmp(err.message, error_cases[k].message) != 0)
            fail_msg("%s: got %u:%u: %s\n     want %u:%u: %s", error_cases[k].id, err.line, err.col, err.message,
                     error_cases[k].line, error_cases[k].col, error_cases[k].message);
    }
}

/* Nesting is capped at TOML_MAX_DEPTH with an error, never a stack overflow. */
static void test_depth_limit(void **state)
{
    (void)state;
    size_t n = 100000;
    char *src = malloc(n + 5);
    memcpy(src, "a = ", 4);
    memset(src + 4, '[', n);
    TomlError err;
    assert_null(toml_parse(src, n + 4, &err));
    assert_string_equal(err.message, "values nest deeper than 128 levels");
    memset(src + 4, '{', n);
    for (size_t i = 0; i + 5 < n; i += 5) memcpy(src + 4 + i, "{a = ", 5);
    assert_null(toml_parse(src, n + 4, &err));
    assert_string_equal(err.message, "values nest deeper than 128 levels");
    for (size_t i = 0; i + 2 < n; i += 2) memcpy(src + i, "a.", 2);
    memcpy(src + n - 2, "=1", 2);
    assert_null(toml_parse(src, n, &err));
    assert_string_equal(err.message, "key nests deeper than 128 levels");
    free(src);

    /* Exactly at the limit parses: a = [[...]] with 127 brackets puts the innermost at depth 128. */
    char ok[300];
    memcpy(ok, "a = ", 4);
    memset(ok + 4, '[', 127);
    memset(ok + 4 + 127, ']', 127);
    TomlValue *root = toml_parse(ok, 4 + 254, &err);
    assert_non_null(root);
    toml_free(root);
}

/* Many keys in one table go through the hash index; lookups must still find all of them. */
static void test_wide_table(void **state)
{
    (void)state;
    char *src = malloc(20000 * 24);
    size_t len = 0;
    for (int i = 0; i < 20000; i++) len += (size_t)sprintf(src + len, "k%d = %d\n", i, i);
    TomlError err;
    TomlValue *root = toml_parse(src, len, &err);
    assert_non_null(root);
    assert_int_equal(toml_table_len(root), 20000);
    int64_t v;
    assert_true(toml_as_int(toml_table_get(root, "k12345"), &v));
    assert_int_equal(v, 12345);
    assert_string_equal(toml_table_key_at(root, 19999), "k19999");
    /* The duplicate is found by the index too. */
    len += (size_t)sprintf(src + len, "k777 = 0\n");
    toml_free(root);
    assert_null(toml_parse(src, len, &err));
    assert_int_equal(err.line, 20001);
    assert_string_equal(err.message, "duplicate key 'k777'");
    free(src);
}

static void test_empty_and_null(void **state)
{
    (void)state;
    TomlError err;
    TomlValue *root = toml_parse("", 0, &err);
    assert_non_null(root);
    assert_int_equal(toml_table_len(root), 0);
    toml_free(root);
    toml_free(NULL);
    assert_null(toml_parse("x", 1, NULL)); /* err may be NULL */
    /* Input need not be NUL-terminated, and a NUL byte is a control character, not the end. */
    assert_null(toml_parse("a = 1\0", 6, &err));
    assert_int_equal(err.col, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scalars, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_strings, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_tables_in_order, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_positions, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_errors, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_depth_limit, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_wide_table, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_null, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
