/* Unit tests for src/out/: every output format on synthetic findings, checked against golden text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <jansson.h>
#include "base/strbuf.h"
#include "out/out.h"

/* ---- helpers ---- */

/* A span over src[start, end) with rows and byte columns as the engine computes them. */
static Span span_of(const char *src, uint32_t start, uint32_t end)
{
    Span s = {start, end, 0, 0, 0, 0};
    uint32_t ls = 0;
    for (uint32_t i = 0; i < end; i++) {
        if (i == start) s.row = s.end_row, s.col = i - ls;
        bool nl = src[i] == '\n' || (src[i] == '\r' && src[i + 1] != '\n');
        if (nl) s.end_row++, ls = i + 1;
    }
    if (start == end) s.row = s.end_row, s.col = start - ls;
    s.end_col = end - ls;
    return s;
}

/* Span of the first occurrence of needle in src. */
static Span span_at(const char *src, const char *needle)
{
    const char *p = strstr(src, needle);
    assert_non_null(p);
    return span_of(src, (uint32_t)(p - src), (uint32_t)(p - src + strlen(needle)));
}

static Diag diag(int rule, Severity sev, Span s, const char *msg)
{
    Diag d;
    memset(&d, 0, sizeof d);
    d.rule = rule, d.severity = sev, d.span = s, d.message = msg;
    return d;
}

static OutFile file(const char *path, const char *src, const Diag *d, uint32_t n)
{
    OutFile f = {path, src, src ? strlen(src) : 0, d, n, NULL, 0};
    return f;
}

/* Output of out_write as a string (gl_free it). */
static char *render(OutFormat fmt, const OutFile *files, uint32_t n, const OutOptions *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(out_write(fp, fmt, files, n, o), 0);
    fclose(fp);
    char *r = gl_strdup(buf);
    free(buf);
    return r;
}

static json_t *render_json(OutFormat fmt, const OutFile *files, uint32_t n, const OutOptions *o)
{
    char *s = render(fmt, files, n, o);
    json_error_t err;
    json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &err);
    if (!j) fail_msg("invalid JSON at %d:%d: %s\n%s", err.line, err.column, err.text, s);
    gl_free(s);
    return j;
}

static const char *SRC =
    "import torch\n"
    "for x in data:\n"
    "    total += loss\n"
    "    step()\n";

/* ---- format names ---- */

static void test_format_parse(void **state)
{
    (void)state;
    static const char *names[] = {"full", "concise", "json", "sarif", "github"};
    for (int i = 0; i < 5; i++) {
        OutFormat f = OUT_GITHUB;
        assert_int_equal(out_format_parse(names[i], &f), 0);
        assert_int_equal(f, (OutFormat)i);
        assert_string_equal(out_format_name(f), names[i]);
    }
    OutFormat f = OUT_JSON;
    assert_int_equal(out_format_parse("text", &f), -1);
    assert_int_equal(out_format_parse("JSON", &f), -1);
    assert_int_equal(out_format_parse(NULL, &f), -1);
    assert_int_equal(f, OUT_JSON);
}

/* ---- positions ---- */

/* Same text with LF, CRLF and lone CR: the columns (and rows) must agree. */
static void test_pos_line_endings(void **state)
{
    (void)state;
    static const char *srcs[] = {"ab\n\xC3\xA9t\xC3\xA9 x\n", "ab\r\n\xC3\xA9t\xC3\xA9 x\r\n", "ab\r\xC3\xA9t\xC3\xA9 x\r"};
    for (int i = 0; i < 3; i++) {
        Span s = span_at(srcs[i], "x");
        OutFile f = file("a.py", srcs[i], NULL, 0);
        OutPos a = out_span_start(&f, &s), b = out_span_end(&f, &s);
        assert_int_equal(a.row, 2);
        assert_int_equal(a.col, 5); /* é t é space x: x is the 5th code point */
        assert_int_equal(b.row, 2);
        assert_int_equal(b.col, 6);
    }
}

static void test_pos_unicode(void **state)
{
    (void)state;
    /* 中 (3 bytes), 😀 (4 bytes), an invalid byte 0xFF (counts as one), then "y" */
    const char *src = "s = '\xE4\xB8\xAD\xF0\x9F\x98\x80\xFF' + y\n";
    Span s = span_at(src, "y");
    OutFile f = file("a.py", src, NULL, 0);
    assert_int_equal(s.col, 17);
    assert_int_equal(out_span_start(&f, &s).col, 13);
    /* without the source the byte column is all there is */
    OutFile nosrc = file("a.py", NULL, NULL, 0);
    assert_int_equal(out_span_start(&nosrc, &s).col, 18);
    assert_int_equal(out_span_start(&nosrc, &s).row, 1);
}

static void test_sanitize(void **state)
{
    (void)state;
    char *s = out_utf8_sanitize("a\xFF\xC3\xA9\xED\xA0\x80z\xE4\xB8", 10);
    assert_string_equal(s, "a\xEF\xBF\xBD\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD");
    gl_free(s);
    /* an id out of range has no entry (the cache codec refuses such a row, test_cache) */
    assert_null(rule_info(RULE_NONE));
    assert_null(rule_info(RULE_COUNT));
    assert_string_equal(out_rule(RULE_GL101)->code, "GL101");
}

/* ---- concise and full ---- */

static void test_concise(void **state)
{
    (void)state;
    const char *src2 = "x.cuda()\n";
    Diag d1[] = {diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total += loss"), "loss is accumulated"),
                 diag(RULE_GL302, SEV_WARNING, span_at(SRC, "step()"), "gc")};
    Diag d2[] = {diag(RULE_GL201, SEV_ERROR, span_at(src2, "x.cuda()"), "move discarded")};
    OutFile f[] = {file("a/train.py", SRC, d1, 2), file("b.py", src2, d2, 1)};
    OutOptions o = {0};
    char *s = render(OUT_CONCISE, f, 2, &o);
    assert_string_equal(s, "a/train.py:3:5: GL101 loss is accumulated\n"
                           "a/train.py:4:5: GL302 gc\n"
                           "b.py:1:1: GL201 move discarded\n"
                           "Found 3 errors.\n");
    gl_free(s);
}

static void test_full_frame(void **state)
{
    (void)state;
    Related rel[] = {{span_at(SRC, "for"), "the loop starts here"}, {span_at(SRC, "loss"), "`loss` carries a graph"}};
    Diag d = diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total += loss"), "loss is accumulated across iterations");
    d.hint = "Use `loss.item()`";
    d.related = rel, d.n_related = 2;
    OutFile f = file("train.py", SRC, &d, 1);
    OutOptions o = {0};
    char *s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "train.py:3:5: GL101 loss is accumulated across iterations\n"
                           "  |\n"
                           "2 | for x in data:\n"
                           "3 |     total += loss\n"
                           "  |     ^^^^^^^^^^^^^ GL101\n"
                           "4 |     step()\n"
                           "  |\n"
                           "  = help: Use `loss.item()`\n"
                           "  = note: line 2: the loop starts here\n"
                           "  = note: line 3: `loss` carries a graph\n"
                           "\n"
                           "Found 1 error.\n");
    gl_free(s);
}

/* First and last line of a CRLF file (no context on one side), a tab and non-ASCII before the span,
 * an empty span, and wider gutters. */
static void test_full_edges(void **state)
{
    (void)state;
    const char *src = "\t\xC3\xA9 = f(y)\r\n\r\nz\r\n";
    Diag d[] = {diag(RULE_GL201, SEV_ERROR, span_at(src, "f(y)"), "m1"),
                diag(RULE_GL901, SEV_WARNING, span_of(src, 15, 15), "m2")};
    OutFile f = file("c.py", src, d, 2);
    OutOptions o = {0};
    char *s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "c.py:1:6: GL201 m1\n"
                           "  |\n"
                           "1 |     \xC3\xA9 = f(y)\n"
                           "  |         ^^^^ GL201\n"
                           "2 |\n"
                           "  |\n"
                           "\n"
                           "c.py:3:2: GL901 m2\n"
                           "  |\n"
                           "2 |\n"
                           "3 | z\n"
                           "  |  ^ GL901\n"
                           "  |\n"
                           "\n"
                           "Found 2 errors.\n");
    gl_free(s);

    /* line 10 makes the gutter two wide; the context line before is line 9 */
    const char *src10 = "1\n2\n3\n4\n5\n6\n7\n8\n9\nbad\n";
    Diag d10 = diag(RULE_GL403, SEV_ERROR, span_at(src10, "bad"), "m");
    OutFile f10 = file("t.py", src10, &d10, 1);
    s = render(OUT_FULL, &f10, 1, &o);
    assert_string_equal(s, "t.py:10:1: GL403 m\n"
                           "   |\n"
                           " 9 | 9\n"
                           "10 | bad\n"
                           "   | ^^^ GL403\n"
                           "   |\n"
                           "\n"
                           "Found 1 error.\n");
    gl_free(s);
}

static void test_full_multiline(void **state)
{
    (void)state;
    const char *src = "a\nx = f(\n    1,\n\n    2)\nb\n";
    Diag d = diag(RULE_GL107, SEV_ERROR, span_at(src, "f(\n    1,\n\n    2)"), "multi");
    OutFile f = file("m.py", src, &d, 1);
    OutOptions o = {0};
    char *s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "m.py:2:5: GL107 multi\n"
                           "  |\n"
                           "1 | a\n"
                           "2 | x = f(\n"
                           "  |     ^^\n"
                           "3 |     1,\n"
                           "  |     ^^\n"
                           "4 |\n"
                           "5 |     2)\n"
                           "  |     ^^ GL107\n"
                           "6 | b\n"
                           "  |\n"
                           "\n"
                           "Found 1 error.\n");
    gl_free(s);

    /* A span of 10 lines shows 3 + "..." + 3. */
    const char *big = "f(\n1\n2\n3\n4\n5\n6\n7\n8\n)\n";
    d = diag(RULE_GL107, SEV_ERROR, span_of(big, 0, (uint32_t)strlen(big) - 1), "big");
    f = file("b.py", big, &d, 1);
    s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "b.py:1:1: GL107 big\n"
                           "   |\n"
                           " 1 | f(\n"
                           "   | ^^\n"
                           " 2 | 1\n"
                           "   | ^\n"
                           " 3 | 2\n"
                           "   | ^\n"
                           "...\n"
                           " 8 | 7\n"
                           "   | ^\n"
                           " 9 | 8\n"
                           "   | ^\n"
                           "10 | )\n"
                           "   | ^ GL107\n"
                           "   |\n"
                           "\n"
                           "Found 1 error.\n");
    gl_free(s);
}

/* Control characters in the source never reach the terminal raw; no source means no frame. */
static void test_full_hostile(void **state)
{
    (void)state;
    const char *src = "x = '\x1b[31m' + \xFF y\n";
    Diag d = diag(RULE_GL201, SEV_ERROR, span_at(src, "y"), "m");
    Fix fix = {"Replace it", FIX_SAFE, NULL, 0};
    d.fix = &fix;
    OutFile f = file("h.py", src, &d, 1);
    OutOptions o = {0};
    char *s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "h.py:1:17: GL201 m\n"
                           "  |\n"
                           "1 | x = '\xEF\xBF\xBD[31m' + \xEF\xBF\xBD y\n"
                           "  |                 ^ GL201\n"
                           "  |\n"
                           "  = help: Replace it\n"
                           "\n"
                           "Found 1 error.\n");
    gl_free(s);
    /* a line break in a message or path never splits the header line */
    Diag nl = diag(RULE_GL201, SEV_ERROR, span_at(src, "y"), "two\nlines\r\n");
    OutFile fnl = file("a\nb.py", src, &nl, 1);
    s = render(OUT_CONCISE, &fnl, 1, &o);
    assert_string_equal(s, "a b.py:1:17: GL201 two lines  \nFound 1 error.\n");
    gl_free(s);
    OutFile nosrc = file("h.py", NULL, &d, 1);
    s = render(OUT_FULL, &nosrc, 1, &o);
    assert_string_equal(s, "h.py:1:17: GL201 m\n  = help: Replace it\n\nFound 1 error.\n");
    gl_free(s);
    /* a span past the end of the source: header only, no crash */
    Diag bad = diag(RULE_GL201, SEV_ERROR, (Span){100, 120, 0, 100, 0, 120}, "m");
    OutFile fb = file("h.py", "x\n", &bad, 1);
    s = render(OUT_FULL, &fb, 1, &o);
    assert_string_equal(s, "h.py:1:101: GL201 m\n\nFound 1 error.\n");
    gl_free(s);
}

static void test_color(void **state)
{
    (void)state;
    Diag d[] = {diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total"), "e"),
                diag(RULE_GL302, SEV_WARNING, span_at(SRC, "step"), "w")};
    OutFile f = file("t.py", SRC, d, 2);
    OutOptions o = {0};
    o.color = true;
    char *s = render(OUT_CONCISE, &f, 1, &o);
    assert_string_equal(s, "\x1b[1mt.py\x1b[0m:3:5: \x1b[1;31mGL101\x1b[0m e\n"
                           "\x1b[1mt.py\x1b[0m:4:5: \x1b[1;33mGL302\x1b[0m w\n"
                           "Found 2 errors.\n");
    gl_free(s);
    s = render(OUT_FULL, &f, 1, &o);
    assert_non_null(strstr(s, "\x1b[1;31m^^^^^ GL101\x1b[0m"));
    gl_free(s);
    OutFile none = file("t.py", SRC, NULL, 0);
    s = render(OUT_FULL, &none, 1, &o);
    assert_string_equal(s, "\x1b[1;32mAll checks passed!\x1b[0m\n");
    gl_free(s);
}

static void test_summary(void **state)
{
    (void)state;
    Fix safe = {"s", FIX_SAFE, NULL, 0}, unsafe = {"u", FIX_UNSAFE, NULL, 0};
    Diag d[] = {diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total"), "a"),
                diag(RULE_GL101, SEV_ERROR, span_at(SRC, "loss"), "b"),
                diag(RULE_GL302, SEV_WARNING, span_at(SRC, "step"), "c")};
    d[0].fix = &safe, d[1].fix = &unsafe;
    OutFile f = file("t.py", SRC, d, 3);
    static const struct {
        const char *id;
        bool hints, unsafe_fixes;
        uint32_t n, fixed;
        const char *want;
    } cases[] = {
        {"summary-1", false, false, 3, 0, "Found 3 errors.\n"},
        {"summary-2", true, false, 3, 0,
         "Found 3 errors.\n[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the "
         "`--unsafe-fixes` option).\n"},
        {"summary-3", true, true, 3, 0, "Found 3 errors.\n[*] 2 fixable with the `--fix` option.\n"},
        {"summary-4", true, false, 0, 0, "All checks passed!\n"},
        {"summary-5", true, false, 3, 2,
         "Found 5 errors (2 fixed, 3 remaining).\n[*] 1 fixable with the `--fix` option (1 hidden fix can be "
         "enabled with the `--unsafe-fixes` option).\n"},
        {"summary-6", true, false, 0, 1, "Found 1 error (1 fixed, 0 remaining).\n"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        OutOptions o = {0};
        o.show_fix_hints = cases[i].hints, o.unsafe_fixes = cases[i].unsafe_fixes, o.fixed = cases[i].fixed;
        f.n_diags = cases[i].n;
        char *s = render(OUT_CONCISE, &f, 1, &o);
        const char *tail = s;
        for (uint32_t k = 0; k < cases[i].n; k++) tail = strchr(tail, '\n') + 1;
        if (strcmp(tail, cases[i].want) != 0) fail_msg("%s: got\n%s", cases[i].id, s);
        gl_free(s);
    }
    /* only an unsafe fix */
    Diag u = diag(RULE_GL101, SEV_ERROR, span_at(SRC, "loss"), "b");
    u.fix = &unsafe;
    OutFile fu = file("t.py", SRC, &u, 1);
    OutOptions o = {0};
    o.show_fix_hints = true;
    char *s = render(OUT_CONCISE, &fu, 1, &o);
    assert_string_equal(s, "t.py:3:14: GL101 b\nFound 1 error.\n"
                           "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n");
    gl_free(s);
}

static void test_statistics(void **state)
{
    (void)state;
    Fix safe = {"s", FIX_SAFE, NULL, 0};
    Diag d[12];
    for (int i = 0; i < 10; i++) d[i] = diag(RULE_GL302, SEV_WARNING, span_at(SRC, "step"), "c");
    d[10] = diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total"), "a");
    d[11] = diag(RULE_GL201, SEV_ERROR, span_at(SRC, "loss"), "b");
    d[11].fix = &safe;
    OutFile f = file("t.py", SRC, d, 12);
    OutOptions o = {0};
    o.statistics = true;
    char *s = render(OUT_FULL, &f, 1, &o);
    assert_string_equal(s, "10\tGL302\t[ ] gc-collect-in-step-loop\n"
                           " 1\tGL101\t[ ] tensor-accumulated-across-iterations\n"
                           " 1\tGL201\t[*] tensor-move-discarded\n");
    gl_free(s);
    json_t *j = render_json(OUT_JSON, &f, 1, &o);
    assert_int_equal(json_array_size(j), 3);
    json_t *r = json_array_get(j, 2);
    assert_string_equal(json_string_value(json_object_get(r, "code")), "GL201");
    assert_string_equal(json_string_value(json_object_get(r, "name")), "tensor-move-discarded");
    assert_int_equal(json_integer_value(json_object_get(r, "count")), 1);
    assert_true(json_is_true(json_object_get(r, "fixable")));
    json_decref(j);
}

/* ---- json ---- */

static void test_json_golden(void **state)
{
    (void)state;
    const char *src = "for b in d:\r\n    t += \xC3\xA9l\r\n";
    Edit ed = {(uint32_t)(strstr(src, "\xC3\xA9l") - src) + 3, (uint32_t)(strstr(src, "\xC3\xA9l") - src) + 3, ".item()"};
    Fix fix = {"Call `.item()`", FIX_UNSAFE, &ed, 1};
    Related rel = {span_at(src, "for"), "loop"};
    Diag d = diag(RULE_GL101, SEV_ERROR, span_at(src, "t += \xC3\xA9l"), "acc");
    d.growth = GROWTH_DEVICE, d.fix = &fix, d.related = &rel, d.n_related = 1;
    Diag w = diag(RULE_GL302, SEV_WARNING, span_at(src, "b"), "w");
    Diag ds[] = {d, w};
    OutFile f = file("t.py", src, ds, 2);
    OutOptions o = {0};
    char *s = render(OUT_JSON, &f, 1, &o);
    StrBuf want;
    sb_init(&want);
    sb_printf(&want,
              "[\n"
              "  {\n"
              "    \"code\": \"GL101\",\n"
              "    \"message\": \"acc\",\n"
              "    \"filename\": \"t.py\",\n"
              "    \"location\": {\n      \"row\": 2,\n      \"column\": 5\n    },\n"
              "    \"end_location\": {\n      \"row\": 2,\n      \"column\": 12\n    },\n"
              "    \"fix\": {\n"
              "      \"applicability\": \"unsafe\",\n"
              "      \"message\": \"Call `.item()`\",\n"
              "      \"edits\": [\n"
              "        {\n"
              "          \"content\": \".item()\",\n"
              "          \"location\": {\n            \"row\": 2,\n            \"column\": 12\n          },\n"
              "          \"end_location\": {\n            \"row\": 2,\n            \"column\": 12\n          }\n"
              "        }\n"
              "      ]\n"
              "    },\n"
              "    \"url\": \"%s\",\n"
              "    \"noqa_row\": 2,\n"
              "    \"severity\": \"error\",\n"
              "    \"growth\": \"device\",\n"
              "    \"related\": [\n"
              "      {\n"
              "        \"message\": \"loop\",\n"
              "        \"location\": {\n          \"row\": 1,\n          \"column\": 1\n        },\n"
              "        \"end_location\": {\n          \"row\": 1,\n          \"column\": 4\n        }\n"
              "      }\n"
              "    ]\n"
              "  },\n"
              "  {\n"
              "    \"code\": \"GL302\",\n"
              "    \"message\": \"w\",\n"
              "    \"filename\": \"t.py\",\n"
              "    \"location\": {\n      \"row\": 1,\n      \"column\": 5\n    },\n"
              "    \"end_location\": {\n      \"row\": 1,\n      \"column\": 6\n    },\n"
              "    \"fix\": null,\n"
              "    \"url\": \"%s\",\n"
              "    \"noqa_row\": 1,\n"
              "    \"severity\": \"warning\",\n"
              "    \"growth\": null,\n"
              "    \"related\": []\n"
              "  }\n"
              "]\n",
              rule_url(RULE_GL101), rule_url(RULE_GL302));
    assert_string_equal(s, want.data);
    sb_free(&want);
    gl_free(s);

    OutFile empty = file("t.py", src, NULL, 0);
    s = render(OUT_JSON, &empty, 1, &o);
    assert_string_equal(s, "[]\n");
    gl_free(s);
}

/* Invalid UTF-8 anywhere (message, path, edit text, hint) still gives valid JSON, with U+FFFD. */
static void test_json_invalid_utf8(void **state)
{
    (void)state;
    const char *src = "x = '\xFF\xFE' + y\n";
    Edit ed = {0, 1, "\xC0\xAF"};
    Fix fix = {"fix \xFF", FIX_SAFE, &ed, 1};
    Related rel = {span_at(src, "y"), "rel \xED\xA0\x80"};
    Diag d = diag(RULE_GL201, SEV_ERROR, span_at(src, "y"), "bad \xFF message \"quoted\"\n\\");
    d.fix = &fix, d.related = &rel, d.n_related = 1;
    OutFile f = file("dir\xFF/\xE9.py", src, &d, 1);
    OutOptions o = {0};
    json_t *j = render_json(OUT_JSON, &f, 1, &o);
    json_t *e = json_array_get(j, 0);
    assert_string_equal(json_string_value(json_object_get(e, "message")), "bad \xEF\xBF\xBD message \"quoted\"\n\\");
    assert_string_equal(json_string_value(json_object_get(e, "filename")), "dir\xEF\xBF\xBD/\xEF\xBF\xBD.py");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "location"), "column")), 12);
    json_t *fj = json_object_get(e, "fix");
    assert_string_equal(json_string_value(json_object_get(fj, "applicability")), "safe");
    json_t *edit = json_array_get(json_object_get(fj, "edits"), 0);
    assert_string_equal(json_string_value(json_object_get(edit, "content")), "\xEF\xBF\xBD\xEF\xBF\xBD");
    json_decref(j);
    j = render_json(OUT_SARIF, &f, 1, &o);
    json_decref(j);
}

/* ---- sarif ---- */

static json_t *jpath(json_t *j, const char *path)
{
    char key[64];
    while (j && *path) {
        size_t n = strcspn(path, ".");
        memcpy(key, path, n);
        key[n] = 0;
        if (key[0] >= '0' && key[0] <= '9') j = json_array_get(j, (size_t)atoi(key));
        else j = json_object_get(j, key);
        path += n + (path[n] == '.');
    }
    return j;
}

static const char *jstr(json_t *j, const char *path)
{
    const char *s = json_string_value(jpath(j, path));
    if (!s) fail_msg("no string at %s", path);
    return s;
}

static long long jint(json_t *j, const char *path)
{
    json_t *v = jpath(j, path);
    if (!json_is_integer(v)) fail_msg("no integer at %s", path);
    return json_integer_value(v);
}

static void test_sarif_document(void **state)
{
    (void)state;
    const char *src = "for b in d:\n    t += \xE4\xB8\xAD\n    t += \xE4\xB8\xAD\n";
    Related rel = {span_at(src, "for"), "the loop"};
    Diag d[] = {diag(RULE_GL101, SEV_ERROR, span_at(src, "t += \xE4\xB8\xAD"), "acc"),
                diag(RULE_GL101, SEV_ERROR, span_of(src, 29, 37), "acc"),
                diag(RULE_GL302, SEV_WARNING, span_at(src, "b"), "w")};
    d[0].related = &rel, d[0].n_related = 1, d[0].growth = GROWTH_DEVICE, d[0].loop_line = 1;
    d[1].growth = GROWTH_HOST;
    OutFile f[] = {file("/repo/src/my train.py", src, d, 3), file("../elsewhere/x.py", src, d + 2, 1)};
    OutOptions o = {0};
    o.srcroot = "/repo/./";
    json_t *j = render_json(OUT_SARIF, f, 2, &o);
    assert_string_equal(jstr(j, "$schema"), "https://json.schemastore.org/sarif-2.1.0.json");
    assert_string_equal(jstr(j, "version"), "2.1.0");
    json_t *run = jpath(j, "runs.0");
    assert_string_equal(jstr(run, "tool.driver.name"), "gradleak");
    assert_string_equal(jstr(run, "tool.driver.version"), GL_VERSION);
    assert_string_equal(jstr(run, "columnKind"), "unicodeCodePoints");
    assert_string_equal(jstr(run, "originalUriBaseIds.%SRCROOT%.uri"), "file:///repo/");
    json_t *rules = jpath(run, "tool.driver.rules");
    assert_int_equal(json_array_size(rules), RULE_COUNT);
    for (int r = 0; r < RULE_COUNT; r++) {
        json_t *rj = json_array_get(rules, (size_t)r);
        const RuleInfo *ri = rule_info((RuleId)r);
        assert_string_equal(jstr(rj, "id"), ri->code);
        assert_string_equal(jstr(rj, "name"), ri->name);
        assert_string_equal(jstr(rj, "shortDescription.text"), ri->summary);
        assert_true(strlen(jstr(rj, "help.text")) > 0);
        assert_true(strlen(jstr(rj, "help.markdown")) > 0);
        assert_true(strlen(jstr(rj, "fullDescription.text")) > 0);
        assert_string_equal(jstr(rj, "helpUri"), rule_url((RuleId)r));
        assert_string_equal(jstr(rj, "defaultConfiguration.level"),
                            ri->severity == SEV_ERROR ? "error" : ri->severity == SEV_WARNING ? "warning" : "note");
        assert_true(json_array_size(jpath(rj, "properties.tags")) > 0);
    }
    json_t *res = jpath(run, "results");
    assert_int_equal(json_array_size(res), 4);
    json_t *r0 = json_array_get(res, 0), *r1 = json_array_get(res, 1);
    assert_string_equal(jstr(r0, "ruleId"), "GL101");
    assert_int_equal(jint(r0, "ruleIndex"), RULE_GL101);
    assert_string_equal(jstr(r0, "level"), "error");
    assert_string_equal(jstr(r0, "message.text"), "acc");
    assert_string_equal(jstr(r0, "locations.0.physicalLocation.artifactLocation.uri"), "src/my%20train.py");
    assert_string_equal(jstr(r0, "locations.0.physicalLocation.artifactLocation.uriBaseId"), "%SRCROOT%");
    assert_int_equal(jint(r0, "locations.0.physicalLocation.region.startLine"), 2);
    assert_int_equal(jint(r0, "locations.0.physicalLocation.region.startColumn"), 5);
    assert_int_equal(jint(r0, "locations.0.physicalLocation.region.endLine"), 2);
    assert_int_equal(jint(r0, "locations.0.physicalLocation.region.endColumn"), 11);
    assert_int_equal(jint(r0, "relatedLocations.0.id"), 1);
    assert_string_equal(jstr(r0, "relatedLocations.0.message.text"), "the loop");
    assert_int_equal(jint(r0, "relatedLocations.0.physicalLocation.region.endColumn"), 4);
    assert_string_equal(jstr(r0, "properties.severityClass"), "device-growth");
    assert_int_equal(jint(r0, "properties.loopLine"), 1);
    assert_string_equal(jstr(r1, "properties.severityClass"), "host-growth");
    assert_null(jpath(r1, "relatedLocations"));
    /* same rule on the same line text: same hash, occurrence 1 then 2 */
    const char *h0 = jstr(r0, "partialFingerprints.primaryLocationLineHash");
    const char *h1 = jstr(r1, "partialFingerprints.primaryLocationLineHash");
    assert_int_equal(strlen(h0), 18);
    assert_int_equal(strspn(h0, "0123456789abcdef"), 16);
    assert_string_equal(h0 + 16, ":1");
    assert_memory_equal(h0, h1, 16);
    assert_string_equal(h1 + 16, ":2");
    assert_string_equal(jstr(r0, "locations.0.physicalLocation.region.snippet.text"), "t += \xE4\xB8\xAD");
    /* a path outside the root: absolute file URI, no base id */
    json_t *r3 = json_array_get(res, 3);
    const char *u3 = jstr(r3, "locations.0.physicalLocation.artifactLocation.uri");
    assert_true(strncmp(u3, "file:///", 8) == 0);
    assert_non_null(strstr(u3, "/elsewhere/x.py"));
    assert_null(jpath(r3, "locations.0.physicalLocation.artifactLocation.uriBaseId"));
    json_decref(j);
}

/* The fingerprint survives re-indentation, CRLF and moving the line; it changes with the rule. */
static void test_sarif_fingerprint(void **state)
{
    (void)state;
    static const char *srcs[] = {"x\n    total += loss\n", "\n\n\ttotal  +=  loss\r\n", "total+=loss"};
    char first[32] = "";
    for (int i = 0; i < 3; i++) {
        Diag d = diag(RULE_GL101, SEV_ERROR, span_at(srcs[i], "total"), "m");
        OutFile f = file("a.py", srcs[i], &d, 1);
        OutOptions o = {0};
        o.srcroot = "/";
        json_t *j = render_json(OUT_SARIF, &f, 1, &o);
        const char *h = jstr(j, "runs.0.results.0.partialFingerprints.primaryLocationLineHash");
        if (i == 0) snprintf(first, sizeof first, "%s", h);
        else assert_string_equal(h, first);
        json_decref(j);
    }
    const char *src = srcs[0];
    Diag d = diag(RULE_GL102, SEV_ERROR, span_at(src, "total"), "m");
    OutFile f = file("a.py", src, &d, 1);
    OutOptions o = {0};
    json_t *j = render_json(OUT_SARIF, &f, 1, &o);
    assert_string_not_equal(jstr(j, "runs.0.results.0.partialFingerprints.primaryLocationLineHash"), first);
    json_decref(j);
}

/* ---- github ---- */

static void test_github(void **state)
{
    (void)state;
    const char *src = "a = 1\nb = c\n";
    Diag d[] = {diag(RULE_GL101, SEV_ERROR, span_at(src, "b = c"), "100% bad: a, b\r\nnext line"),
                diag(RULE_GL302, SEV_WARNING, span_at(src, "c"), "plain"),
                diag(RULE_GL901, SEV_INFO, span_at(src, "a"), "%0A stays literal")};
    OutFile f = file("dir,x/we:ird%\n.py", src, d, 3);
    OutOptions o = {0};
    char *s = render(OUT_GITHUB, &f, 1, &o);
    assert_string_equal(s,
                        "::error file=dir%2Cx/we%3Aird%25%0A.py,line=2,col=1,endLine=2,endColumn=6,"
                        "title=GL101 tensor-accumulated-across-iterations::100%25 bad: a, b%0D%0Anext line\n"
                        "::warning file=dir%2Cx/we%3Aird%25%0A.py,line=2,col=5,endLine=2,endColumn=6,"
                        "title=GL302 gc-collect-in-step-loop::plain\n"
                        "::notice file=dir%2Cx/we%3Aird%25%0A.py,line=1,col=1,endLine=1,endColumn=2,"
                        "title=GL901 unused-noqa::%250A stays literal\n");
    gl_free(s);
    OutFile none = file("x.py", src, NULL, 0);
    s = render(OUT_GITHUB, &none, 1, &o);
    assert_string_equal(s, "");
    gl_free(s);
}

/* A full disk is a tool failure, reported as -1. */
/* ---- streaming ---- */

/* Streams the files one at a time, each in its own heap copy that is poisoned and freed as soon as
 * out_stream_file returns (the stream may keep counts, never pointers into a file). */
static char *render_stream(OutFormat fmt, const OutFile *files, uint32_t n, const OutOptions *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    OutStream *st = out_stream_begin(fp, fmt, o);
    for (uint32_t i = 0; i < n; i++) {
        OutFile f = files[i];
        char *path = gl_strdup(f.path);
        char *src = f.src ? gl_strndup(f.src, f.len) : NULL;
        Diag *d = gl_malloc(sizeof *d * (f.n_diags ? f.n_diags : 1));
        if (f.n_diags) memcpy(d, f.diags, sizeof *d * f.n_diags);
        f.path = path, f.src = src, f.diags = d;
        out_stream_file(st, &f);
        memset(path, 'X', strlen(path));
        if (src) memset(src, 'X', f.len);
        memset(d, 0x5A, sizeof *d * f.n_diags);
        gl_free(path);
        gl_free(src);
        gl_free(d);
    }
    assert_int_equal(out_stream_end(st), 0);
    fclose(fp);
    char *r = gl_strdup(buf);
    free(buf);
    return r;
}

/* JSON and SARIF written element by element are laid out exactly as jansson lays out the whole
 * document (what out_write printed before it streamed), for no file, files without findings and
 * several files with fixes, related notes and invalid UTF-8; and every format streams the same bytes
 * as out_write. */
static void test_stream_layout(void **state)
{
    (void)state;
    const char *src = "for b in d:\n    t += l\n    x = '\xFF'\n";
    Edit ed = {(uint32_t)(strstr(src, "+= l") - src) + 4, (uint32_t)(strstr(src, "+= l") - src) + 4, ".item()"};
    Fix fix = {"Call `.item()`", FIX_SAFE, &ed, 1};
    Related rel = {span_at(src, "for"), "loop \xFF"};
    Diag d = diag(RULE_GL101, SEV_ERROR, span_at(src, "t += l"), "acc");
    d.fix = &fix, d.related = &rel, d.n_related = 1, d.growth = GROWTH_DEVICE;
    Diag w = diag(RULE_GL302, SEV_WARNING, span_at(src, "x = "), "w \"q\"");
    Diag ds[] = {d, w};
    OutFile files[] = {file("a.py", src, ds, 2), file("b.py", src, NULL, 0), file("c\xFF.py", src, &w, 1),
                       file("d.py", NULL, &d, 1)};
    static const uint32_t counts[] = {0, 1, 2, 4};
    for (int statistics = 0; statistics <= 1; statistics++) {
        OutOptions o = {0};
        o.statistics = statistics;
        o.show_fix_hints = true;
        for (size_t c = 0; c < ARRAY_LEN(counts); c++) {
            for (int fmt = OUT_FULL; fmt <= OUT_GITHUB; fmt++) {
                char *whole = render((OutFormat)fmt, files, counts[c], &o);
                char *streamed = render_stream((OutFormat)fmt, files, counts[c], &o);
                assert_string_equal(streamed, whole);
                gl_free(whole);
                if (fmt == OUT_JSON || fmt == OUT_SARIF) {
                    json_error_t err;
                    json_t *j = json_loads(streamed, JSON_REJECT_DUPLICATES, &err);
                    if (!j) fail_msg("invalid JSON at %d:%d: %s\n%s", err.line, err.column, err.text, streamed);
                    char *again = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                    json_decref(j);
                    size_t n = strlen(streamed);
                    assert_true(n > 0 && streamed[n - 1] == '\n');
                    streamed[n - 1] = 0;
                    assert_string_equal(streamed, again);
                    free(again);
                }
                gl_free(streamed);
            }
        }
    }
}

/* The fix count is read when the stream ends: --fix counts while the files stream. */
static void test_stream_fixed_at_end(void **state)
{
    (void)state;
    Diag d = diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total"), "m");
    OutFile f = file("t.py", SRC, &d, 1);
    OutOptions o = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    OutStream *st = out_stream_begin(fp, OUT_CONCISE, &o);
    out_stream_file(st, &f);
    o.fixed = 2;
    assert_int_equal(out_stream_end(st), 0);
    fclose(fp);
    assert_non_null(strstr(buf, "Found 3 errors (2 fixed, 1 remaining).\n"));
    free(buf);
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *fp = fopen("/dev/full", "w");
    if (!fp) skip();
    Diag d = diag(RULE_GL101, SEV_ERROR, span_at(SRC, "total"), "m");
    OutFile f = file("t.py", SRC, &d, 1);
    for (int fmt = OUT_FULL; fmt <= OUT_GITHUB; fmt++) assert_int_equal(out_write(fp, (OutFormat)fmt, &f, 1, NULL), -1);
    fclose(fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_parse),    cmocka_unit_test(test_pos_line_endings),
        cmocka_unit_test(test_pos_unicode),     cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_concise),         cmocka_unit_test(test_full_frame),
        cmocka_unit_test(test_full_edges),      cmocka_unit_test(test_full_multiline),
        cmocka_unit_test(test_full_hostile),    cmocka_unit_test(test_color),
        cmocka_unit_test(test_summary),         cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_json_golden),     cmocka_unit_test(test_json_invalid_utf8),
        cmocka_unit_test(test_sarif_document),  cmocka_unit_test(test_sarif_fingerprint),
        cmocka_unit_test(test_github),          cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_stream_layout),   cmocka_unit_test(test_stream_fixed_at_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
