/* Unit tests for src/nb: IPython masking (a table of lines), the reader's map and errors, the blob,
 * message rewriting, and writing cell texts back into the JSON text byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include "nb/nb.h"

/* ---- masking: each case is a cell's text and its masked code ---- */

static const struct {
    const char *id, *text, *code;
} mask_cases[] = {
    {"mask-1.1 line magic", "%matplotlib inline\nx = 1\n", "0                 \nx = 1\n"},
    {"mask-1.2 shell", "!pip install torch\n", "0                 \n"},
    {"mask-1.3 shell continued", "!pip install \\\n  torch\nx = 1", "0             \n       \nx = 1"},
    {"mask-1.4 assigned shell", "files = !ls -la\n", "files = 0      \n"},
    {"mask-1.5 assigned magic", "w = %who_ls\n", "w = 0      \n"},
    {"mask-1.6 help suffix", "torch.randn?\nmodel??\n", "0           \n0      \n"},
    {"mask-1.7 help prefix", "?torch.zeros\n", "0           \n"},
    {"mask-1.8 time keeps its statement", "%time y = f(x)\n", "0;    y = f(x)\n"},
    {"mask-1.9 timeit options", "%timeit -n 3 -r1 f(x)\n", "0;               f(x)\n"},
    {"mask-1.10 indented", "for i in r:\n    !echo hi\n    %time g()\n", "for i in r:\n    0       \n    0;    g()\n"},
    {"mask-1.11 cell magic python", "%%time\nx = 1\n", "0     \nx = 1\n"},
    {"mask-1.12 cell magic other", "%%bash\necho $x\n", "      \n       \n"},
    {"mask-1.13 writefile", "%%writefile a.py\nx += 1", "                \n      "},
    {"mask-2.1 modulo in brackets", "s = (\"%d\"\n     % n)\n", "s = (\"%d\"\n     % n)\n"},
    {"mask-2.2 triple string", "s = '''\n!not shell\n%not magic\n'''\n", "s = '''\n!not shell\n%not magic\n'''\n"},
    {"mask-2.3 backslash continuation", "x = 1 + \\\n  !2\n", "x = 1 + \\\n  !2\n"},
    {"mask-2.4 comment with ?", "x = 1  # why?\n", "x = 1  # why?\n"},
    {"mask-2.5 comparison", "ok = a == !b\n", "ok = a == !b\n"},
    {"mask-2.6 modulo assignment", "x %= 3\n", "x %= 3\n"},
    {"mask-2.7 CRLF", "%cd /tmp\r\nx = 1\r\n", "0       \r\nx = 1\r\n"},
};

static void test_mask_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof mask_cases / sizeof mask_cases[0]; i++) {
        size_t n = strlen(mask_cases[i].text);
        char *code = gl_malloc(n + 1);
        code[n] = 0;
        bool skip;
        nb_mask_cell(mask_cases[i].text, n, code, &skip);
        if (strcmp(code, mask_cases[i].code) != 0)
            fail_msg("%s: got [%s], expected [%s]", mask_cases[i].id, code, mask_cases[i].code);
        gl_free(code);
    }
}

/* ---- reading ---- */

static const char nb_json[] =
    "{\n \"cells\": [\n"
    "  {\"cell_type\": \"markdown\", \"metadata\": {}, \"source\": [\"# title\"]},\n"
    "  {\"cell_type\": \"code\", \"metadata\": {}, \"outputs\": [], \"source\": [\n"
    "    \"import torch\\n\",\n"
    "    \"x = 1\"\n"
    "  ]},\n"
    "  {\"cell_type\": \"code\", \"metadata\": {}, \"outputs\": [{\"data\": {\"text/plain\": [\"1\"]}}], \"source\": \"!ls\\ny = x\\n\"}\n"
    " ],\n \"metadata\": {\"kernelspec\": {\"language\": \"python\"}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

static void test_read_map(void **state)
{
    (void)state;
    Notebook nb;
    char err[256];
    assert_int_equal(nb_read(nb_json, strlen(nb_json), &nb, err, sizeof err), NB_OK);
    assert_int_equal(nb.n_all, 3);
    assert_int_equal(nb.n_cells, 2);
    assert_string_equal(nb.text, "import torch\nx = 1\n!ls\ny = x\n");
    assert_string_equal(nb.code, "import torch\nx = 1\n0  \ny = x\n");
    assert_int_equal(nb.cells[0].index, 2);
    assert_int_equal(nb.cells[1].index, 3);
    assert_int_equal(nb.cells[1].row, 2);
    assert_true(nb.cells[0].added_nl);
    assert_false(nb.cells[1].added_nl);
    assert_int_equal(nb.cells[0].json_line, 5);
    assert_true(nb.cells[0].json_lines);
    assert_int_equal(nb.cells[1].json_line, 8);
    assert_int_equal(nb_cell_of_row(nb.cells, nb.n_cells, 3)->index, 3);
    assert_int_equal(nb_cell_of_byte(nb.cells, nb.n_cells, 3)->index, 2);
    char *m = nb_rewrite_lines(nb.cells, nb.n_cells, "the loop at line 4; line 1");
    assert_string_equal(m, "the loop at cell 3, line 2; cell 2, line 1");
    gl_free(m);
    m = nb_rewrite_lines(nb.cells, nb.n_cells, "syntax error at 3:5: linted around it; at 9 o'clock");
    assert_string_equal(m, "syntax error at cell 3, line 1:5: linted around it; at 9 o'clock");
    gl_free(m);

    StrBuf blob;
    sb_init(&blob);
    nb_blob_encode(&nb, &blob);
    Notebook v;
    assert_int_equal(nb_blob_view(blob.data, blob.len, &v), 0);
    assert_int_equal(v.len, nb.len);
    assert_memory_equal(v.code, nb.code, nb.len);
    assert_memory_equal(v.text, nb.text, nb.len);
    assert_int_equal(v.n_cells, 2);
    assert_int_equal(v.cells[1].index, 3);
    assert_int_equal(nb_blob_view("plain python\n", 13, &v), -1);
    sb_free(&blob);
    nb_free(&nb);
}

static const struct {
    const char *id, *json;
    NbStatus st;
    const char *err;
} read_cases[] = {
    {"read-1.1 invalid JSON", "{\"cells\": [", NB_ERROR, "not a notebook: invalid JSON"},
    {"read-1.2 not a notebook", "{\"name\": \"x\"}", NB_ERROR, "not a Jupyter notebook"},
    {"read-1.3 array", "[1, 2]", NB_ERROR, "not a Jupyter notebook"},
    {"read-1.4 nbformat 3", "{\"nbformat\": 3, \"worksheets\": []}", NB_ERROR, "nbformat 3 notebooks are not supported"},
    {"read-1.5 nbformat 5", "{\"nbformat\": 5, \"cells\": []}", NB_ERROR, "nbformat 5 is newer"},
    {"read-1.6 R", "{\"nbformat\": 4, \"cells\": [], \"metadata\": {\"kernelspec\": {\"language\": \"R\"}}}", NB_NOT_PYTHON,
     "the notebook's language is R"},
    {"read-1.7 language_info", "{\"cells\": [], \"metadata\": {\"language_info\": {\"name\": \"julia\"}}}", NB_NOT_PYTHON,
     "julia"},
    {"read-1.8 bad source", "{\"cells\": [{\"cell_type\": \"code\", \"source\": 3}]}", NB_ERROR, "cell 1: `source`"},
    {"read-1.9 bad source line", "{\"cells\": [{\"cell_type\": \"code\", \"source\": [\"a\", 1]}]}", NB_ERROR, "cell 1"},
    {"read-2.1 empty", "{\"cells\": [], \"nbformat\": 4}", NB_OK, ""},
    {"read-2.2 no source", "{\"cells\": [{\"cell_type\": \"code\"}]}", NB_ERROR, "cell 1"},
    {"read-2.3 NUL in source", "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"a\\u0000b\"}]}", NB_OK, ""},
};

static void test_read_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof read_cases / sizeof read_cases[0]; i++) {
        Notebook nb;
        char err[256] = "";
        NbStatus st = nb_read(read_cases[i].json, strlen(read_cases[i].json), &nb, err, sizeof err);
        if (st != read_cases[i].st) fail_msg("%s: status %d, expected %d (%s)", read_cases[i].id, st, read_cases[i].st, err);
        if (!strstr(err, read_cases[i].err)) fail_msg("%s: error [%s] lacks [%s]", read_cases[i].id, err, read_cases[i].err);
        if (strchr(err, '\n')) fail_msg("%s: error is not one line", read_cases[i].id);
        nb_free(&nb);
    }
}

/* ---- writing back ---- */

static char *write_back(const char *json, const char *const *texts_in, int *changed)
{
    Notebook nb;
    char err[256];
    assert_int_equal(nb_read(json, strlen(json), &nb, err, sizeof err), NB_OK);
    char **texts = gl_calloc(nb.n_cells, sizeof *texts);
    for (uint32_t k = 0; k < nb.n_cells; k++) texts[k] = texts_in[k] ? gl_strdup(texts_in[k]) : nb_cell_source(&nb, k);
    StrBuf out;
    sb_init(&out);
    *changed = nb_write_back(&nb, json, strlen(json), texts, &out, err, sizeof err);
    if (*changed < 0) fail_msg("write back: %s", err);
    nb_texts_free(texts, nb.n_cells);
    nb_free(&nb);
    sb_append(&out, "", 0);
    return sb_take(&out);
}

static void test_write_back(void **state)
{
    (void)state;
    int n;
    const char *const same[] = {NULL, NULL};
    char *out = write_back(nb_json, same, &n);
    assert_int_equal(n, 0);
    assert_string_equal(out, nb_json);
    gl_free(out);

    const char *const edit[] = {"import torch\nx = 2\nz = 'é\"'", "!ls\ny = x.item()\n"};
    out = write_back(nb_json, edit, &n);
    assert_int_equal(n, 2);
    /* the unchanged first line keeps its string, the new ones follow the file's separator; the
     * file is ASCII, so é is escaped as json.dumps(ensure_ascii=True) does */
    assert_non_null(strstr(out, "    \"import torch\\n\",\n    \"x = 2\\n\",\n    \"z = '\\u00e9\\\"'\"\n  ]}"));
    assert_non_null(strstr(out, "\"source\": \"!ls\\ny = x.item()\\n\"}"));
    assert_non_null(strstr(out, "[{\"data\": {\"text/plain\": [\"1\"]}}]")); /* outputs untouched */
    gl_free(out);
}

/* A fix through nb_fix_source / nb_new_texts keeps masked lines, re-indented. */
static void test_new_texts(void **state)
{
    (void)state;
    static const char json[] = "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"x = 1\"},"
                               "{\"cell_type\": \"code\", \"source\": \"for i in r:\\n    !echo\\n    f(i)\\n\"}]}";
    Notebook nb;
    char err[256];
    assert_int_equal(nb_read(json, strlen(json), &nb, err, sizeof err), NB_OK);
    StrBuf fs;
    sb_init(&fs);
    nb_fix_source(&nb, &fs);
    /* a fix that wraps the loop in a with block */
    const char *p = strstr(fs.data, "for i");
    StrBuf fixed;
    sb_init(&fixed);
    sb_append(&fixed, fs.data, (size_t)(p - fs.data));
    sb_puts(&fixed, "with g():\n    for i in r:\n        0    \n        f(i)\n");
    char **texts;
    assert_int_equal(nb_new_texts(&nb, fixed.data, fixed.len, &texts, err, sizeof err), 0);
    assert_string_equal(texts[0], "x = 1");
    assert_string_equal(texts[1], "with g():\n    for i in r:\n        !echo\n        f(i)\n");
    nb_texts_free(texts, nb.n_cells);
    /* a fix that drops the masked line cannot be written back */
    sb_clear(&fixed);
    sb_append(&fixed, fs.data, (size_t)(p - fs.data));
    sb_puts(&fixed, "for i in r:\n    f(i)\n");
    assert_int_equal(nb_new_texts(&nb, fixed.data, fixed.len, &texts, err, sizeof err), -1);
    assert_non_null(strstr(err, "IPython"));
    sb_free(&fixed);
    sb_free(&fs);
    nb_free(&nb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mask_table, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_read_map, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_read_errors, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_write_back, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_new_texts, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
