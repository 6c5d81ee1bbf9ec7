/* Unit tests for src/base (arena, array, strbuf and its UTF-8/line helpers, strmap) and for the
 * suppression-comment parser in src/engine/suppress.c. The arena, strbuf, array, strmap and line
 * index tests run under a counting allocator and check that everything they allocated is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include "base/arena.h"
#include "base/array.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "base/noqa.h"

/* ---- a counting allocator ---- */

#define ASSERT_NO_LEAKS() assert_int_equal(count_live_blocks, 0)

/* Table tests report every mismatch, then fail once. */
static int mismatches;
#define MISMATCH(...) (print_error(__VA_ARGS__), print_error("\n"), mismatches++)

/* ---- arena ---- */

static void arena_many_allocations(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    unsigned char *ptrs[5000];
    size_t sizes[5000];
    for (int i = 0; i < 5000; i++) {
        sizes[i] = (size_t)(i * 37 % 500) + 1;
        ptrs[i] = arena_alloc(&a, sizes[i]);
        assert_non_null(ptrs[i]);
        assert_int_equal((uintptr_t)ptrs[i] % 16, 0);
        for (size_t k = 0; k < sizes[i]; k++) assert_int_equal(ptrs[i][k], 0);
        memset(ptrs[i], (int)(i & 0xFF), sizes[i]);
    }
    /* nothing overlapped: every block still holds its own fill */
    for (int i = 0; i < 5000; i++)
        for (size_t k = 0; k < sizes[i]; k++) assert_int_equal(ptrs[i][k], (unsigned char)(i & 0xFF));
    assert_true(a.used_total >= 5000);
    assert_true(count_live_blocks > 1); /* more than one chunk */
    arena_free(&a);
    assert_null(a.head);
    assert_int_equal(a.used_total, 0);
    ASSERT_NO_LEAKS();
}

static void arena_alignment_and_zero(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    for (size_t n = 0; n < 70; n++) {
        unsigned char *p = arena_alloc(&a, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (size_t k = 0; k < n; k++) assert_int_equal(p[k], 0);
        memset(p, 0xAB, n);
    }
    /* a block bigger than a chunk gets a chunk of its own, still aligned and zeroed */
    size_t big = 1u << 20;
    unsigned char *b = arena_alloc(&a, big);
    assert_int_equal((uintptr_t)b % 16, 0);
    for (size_t k = 0; k < big; k += 4093) assert_int_equal(b[k], 0);
    assert_int_equal(b[big - 1], 0);
    memset(b, 0xCD, big);
    /* and the arena keeps working after it */
    unsigned char *c = arena_alloc(&a, 24);
    assert_int_equal((uintptr_t)c % 16, 0);
    for (int k = 0; k < 24; k++) assert_int_equal(c[k], 0);
    double *d = ARENA_NEW_N(&a, double, 3);
    assert_true(d[0] == 0.0 && d[2] == 0.0);
    arena_free(&a);
    ASSERT_NO_LEAKS();
}

static void arena_reuse_after_free(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    arena_strdup(&a, "first");
    arena_free(&a);
    char *s = arena_strdup(&a, "second");
    assert_string_equal(s, "second");
    arena_free(&a);
    arena_free(&a); /* freeing an empty arena is fine */
    ASSERT_NO_LEAKS();
}

static void arena_strings(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    char *s = arena_strdup(&a, "hello");
    assert_string_equal(s, "hello");
    char *e = arena_strdup(&a, "");
    assert_string_equal(e, "");
    char *n = arena_strndup(&a, "abcdef", 3);
    assert_string_equal(n, "abc");
    char *z = arena_strndup(&a, "a\0b", 3); /* copies n bytes, embedded NUL and all */
    assert_memory_equal(z, "a\0b", 4);
    char *p = arena_printf(&a, "%s:%d:%u %%", "f.py", -3, 7u);
    assert_string_equal(p, "f.py:-3:7 %");
    char *pe = arena_printf(&a, "%s", "");
    assert_non_null(pe);
    assert_string_equal(pe, "");
    char longbuf[3000];
    memset(longbuf, 'x', sizeof longbuf - 1);
    longbuf[sizeof longbuf - 1] = 0;
    char *pl = arena_printf(&a, "<%s>", longbuf);
    assert_int_equal(strlen(pl), sizeof longbuf + 1);
    assert_int_equal(pl[0], '<');
    assert_int_equal(pl[sizeof longbuf], '>');
    /* earlier strings are intact */
    assert_string_equal(s, "hello");
    assert_string_equal(n, "abc");
    arena_free(&a);
    ASSERT_NO_LEAKS();
}

/* ---- array ---- */

static void array_push_pop(void **state)
{
    (void)state;
    Array(int) a;
    array_init(&a);
    assert_int_equal(a.len, 0);
    assert_int_equal(a.cap, 0);
    assert_null(a.items);
    for (int i = 0; i < 1000; i++) {
        array_push(&a, i * 3);
        assert_true(a.cap >= a.len);
    }
    assert_int_equal(a.len, 1000);
    assert_int_equal(a.cap, 1024); /* 8, doubling */
    assert_int_equal(*array_back(&a), 999 * 3);
    assert_int_equal(*array_get(&a, 10), 30);
    for (int i = 999; i >= 500; i--) assert_int_equal(array_pop(&a), i * 3);
    assert_int_equal(a.len, 500);
    array_clear(&a);
    assert_int_equal(a.len, 0);
    assert_int_equal(a.cap, 1024); /* clear keeps the storage */
    array_free(&a);
    assert_null(a.items);
    assert_int_equal(a.cap, 0);
    ASSERT_NO_LEAKS();
}

static void array_reserve_growth(void **state)
{
    (void)state;
    typedef struct Big { char b[40]; } Big;
    Array(Big) a;
    array_init(&a);
    array_reserve(&a, 0);
    assert_null(a.items); /* nothing asked, nothing allocated */
    array_reserve(&a, 1);
    assert_int_equal(a.cap, 8);
    array_reserve(&a, 9);
    assert_int_equal(a.cap, 16);
    array_reserve(&a, 5); /* never shrinks */
    assert_int_equal(a.cap, 16);
    array_reserve(&a, 100);
    assert_int_equal(a.cap, 128);
    long allocs = count_total_allocs;
    for (int i = 0; i < 128; i++) {
        Big b;
        memset(&b, i, sizeof b);
        array_push(&a, b);
    }
    assert_int_equal(count_total_allocs, allocs); /* reserved: no reallocation */
    assert_int_equal(a.items[127].b[39], 127);
    array_push(&a, a.items[0]);
    assert_int_equal(a.cap, 256);
    assert_int_equal(a.items[128].b[0], 0);
    array_free(&a);
    ASSERT_NO_LEAKS();
}

/* ---- strbuf ---- */

static void strbuf_basics(void **state)
{
    (void)state;
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, "abc");
    sb_putc(&sb, '-');
    sb_append(&sb, "xyz123", 3);
    sb_append(&sb, NULL, 0);
    assert_string_equal(sb.data, "abc-xyz");
    assert_int_equal(sb.len, 7);
    sb_printf(&sb, " %d/%s/%05.1f", 42, "q", 2.5);
    assert_string_equal(sb.data, "abc-xyz 42/q/002.5");
    sb_printf(&sb, "%s", ""); /* empty format output: nothing changes */
    assert_int_equal(sb.len, strlen("abc-xyz 42/q/002.5"));
    sb_clear(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.data, "");
    /* growth past several doublings, through printf */
    for (int i = 0; i < 1000; i++) sb_printf(&sb, "%04d", i);
    assert_int_equal(sb.len, 4000);
    assert_memory_equal(sb.data + 3996, "0999", 4);
    assert_int_equal(sb.data[4000], 0);
    assert_true(sb.cap > sb.len);
    sb_free(&sb);
    assert_null(sb.data);
    ASSERT_NO_LEAKS();
}

static void strbuf_take(void **state)
{
    (void)state;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s=%d", "n", 5);
    char *s = sb_take(&sb);
    assert_string_equal(s, "n=5");
    assert_null(sb.data);
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.cap, 0);
    gl_free(s);
    /* taking an empty buffer gives an empty, freeable string */
    char *e = sb_take(&sb);
    assert_non_null(e);
    assert_string_equal(e, "");
    gl_free(e);
    /* the buffer is usable after a take */
    sb_puts(&sb, "again");
    assert_string_equal(sb.data, "again");
    sb_free(&sb);
    ASSERT_NO_LEAKS();
}

static void utf8_seq_len_cases(void **state)
{
    (void)state;
    mismatches = 0;
    static const struct {
        const char *bytes;
        size_t avail;
        int want;
    } cases[] = {
        {"a", 1, 1},
        {"\x7f", 1, 1},
        {"\x00", 1, 1},
        {"\xc3\xa9", 2, 2},            /* é */
        {"\xe2\x82\xac", 3, 3},        /* € */
        {"\xf0\x9f\x98\x80", 4, 4},    /* 😀 */
        {"\xf4\x8f\xbf\xbf", 4, 4},    /* U+10FFFF */
        {"\xef\xbb\xbf", 3, 3},        /* BOM, U+FEFF */
        {"\xc0\x80", 2, 0},            /* overlong NUL */
        {"\xc1\xbf", 2, 0},            /* overlong 0x7F */
        {"\xe0\x80\xaf", 3, 0},        /* overlong '/' */
        {"\xe0\x9f\xbf", 3, 0},        /* overlong U+07FF */
        {"\xf0\x8f\xbf\xbf", 4, 0},    /* overlong U+FFFF */
        {"\xed\xa0\x80", 3, 0},        /* surrogate U+D800 */
        {"\xed\xbf\xbf", 3, 0},        /* surrogate U+DFFF */
        {"\xed\x9f\xbf", 3, 3},        /* U+D7FF, just below */
        {"\xee\x80\x80", 3, 3},        /* U+E000, just above */
        {"\xf4\x90\x80\x80", 4, 0},    /* U+110000 */
        {"\xf5\x80\x80\x80", 4, 0},    /* lead byte beyond F4 */
        {"\xf8\x88\x80\x80\x80", 5, 0}, /* 5-byte form */
        {"\xff", 1, 0},
        {"\x80", 1, 0},                /* lone continuation */
        {"\xbf", 1, 0},
        {"\xc3", 1, 0},                /* truncated 2-byte */
        {"\xe2\x82", 2, 0},            /* truncated 3-byte */
        {"\xf0\x9f\x98", 3, 0},        /* truncated 4-byte */
        {"\xc3\xa9", 1, 0},            /* valid bytes, but avail cuts it */
        {"\xc3\x28", 2, 0},            /* bad continuation */
        {"\xe2\x28\xa1", 3, 0},
        {"\xf0\x9f\x28\x80", 4, 0},
        {"", 0, 0},                    /* nothing available */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int got = utf8_seq_len((const unsigned char *)cases[i].bytes, cases[i].avail);
        if (got != cases[i].want) MISMATCH("case %zu: utf8_seq_len = %d, want %d", i, got, cases[i].want);
    }
    assert_int_equal(mismatches, 0);
}

static void utf8_and_utf16_counts(void **state)
{
    (void)state;
    assert_int_equal(utf8_count("", 0), 0);
    assert_int_equal(utf8_count("abc", 3), 3);
    assert_int_equal(utf8_count("caf\xc3\xa9", 5), 4);
    assert_int_equal(utf8_count("\xe2\x82\xac\xf0\x9f\x98\x80", 7), 2);
    /* invalid bytes count one each */
    assert_int_equal(utf8_count("a\xff\xfe" "b", 4), 4);
    assert_int_equal(utf8_count("\xf0\x9f\x98", 3), 3);   /* truncated at the end: 3 bytes, 3 units */
    assert_int_equal(utf8_count("\xed\xa0\x80", 3), 3);   /* surrogate: 3 invalid bytes */
    assert_int_equal(utf8_count("\xc0\x80x", 3), 3);      /* overlong: 2 invalid bytes + x */
    /* counting a prefix stops at n, even mid-sequence */
    assert_int_equal(utf8_count("\xc3\xa9\xc3\xa9", 3), 2);

    assert_int_equal(utf16_count("", 0), 0);
    assert_int_equal(utf16_count("abc", 3), 3);
    assert_int_equal(utf16_count("caf\xc3\xa9", 5), 4);
    assert_int_equal(utf16_count("\xe2\x82\xac", 3), 1);            /* € is one unit */
    assert_int_equal(utf16_count("\xf0\x9f\x98\x80", 4), 2);        /* emoji: a surrogate pair */
    assert_int_equal(utf16_count("a\xf0\x9f\x98\x80" "b\xf0\x9f\x91\x8d", 10), 6);
    /* family emoji: 👨‍👩‍👧 = 3 emoji (2 each) + 2 ZWJ (1 each) */
    const char fam[] = "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7";
    assert_int_equal(utf16_count(fam, sizeof fam - 1), 8);
    assert_int_equal(utf8_count(fam, sizeof fam - 1), 5);
    /* invalid bytes: one unit each (U+FFFD) */
    assert_int_equal(utf16_count("\xff\xfe", 2), 2);
    assert_int_equal(utf16_count("\xf0\x9f\x98", 3), 3);
}

static void lineindex_endings(void **state)
{
    (void)state;
    mismatches = 0;
    static const struct {
        const char *src;
        uint32_t n_lines;
        uint32_t starts[6];
    } cases[] = {
        {"", 1, {0}},
        {"abc", 1, {0}},
        {"abc\n", 2, {0, 4}},
        {"a\nbc\nd", 3, {0, 2, 5}},
        {"a\r\nbc\r\nd", 3, {0, 3, 7}},
        {"a\rbc\rd", 3, {0, 2, 5}},
        {"a\r\n\r\nb", 3, {0, 3, 5}},       /* an empty CRLF line */
        {"a\n\rb", 3, {0, 2, 3}},           /* LF then a lone CR: two endings */
        {"a\r\r\nb", 3, {0, 2, 4}},         /* lone CR then CRLF */
        {"\n\n\n", 4, {0, 1, 2, 3}},
        {"x\r", 2, {0, 2}},                 /* trailing lone CR */
        {"x\r\n", 2, {0, 3}},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        LineIndex li;
        size_t len = strlen(cases[i].src);
        lineindex_build(&li, cases[i].src, len);
        if (li.n != cases[i].n_lines) MISMATCH("case %zu: %u lines, want %u", i, li.n, cases[i].n_lines);
        for (uint32_t k = 0; k < li.n; k++)
            if (li.starts[k] != cases[i].starts[k])
                MISMATCH("case %zu: line %u starts at %u, want %u", i, k, li.starts[k], cases[i].starts[k]);
        lineindex_free(&li);
        assert_null(li.starts);
    }
    ASSERT_NO_LEAKS();
    assert_int_equal(mismatches, 0);
}

static void lineindex_line_of_boundaries(void **state)
{
    (void)state;
    mismatches = 0;
    /* lines: "ab\n" [0,3) "\r\n" [3,5) "cde\r" [5,9) "f" [9,10) */
    const char *src = "ab\n\r\ncde\rf";
    size_t len = strlen(src);
    LineIndex li;
    lineindex_build(&li, src, len);
    assert_int_equal(li.n, 4);
    static const uint32_t want[] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3};
    for (uint32_t off = 0; off <= len; off++)
        if (lineindex_line_of(&li, off) != want[off])
            MISMATCH("offset %u: line %u, want %u", off, lineindex_line_of(&li, off), want[off]);
    assert_int_equal(lineindex_line_of(&li, 1000), 3); /* past the end: the last line */
    assert_int_equal(lineindex_line_len(&li, src, len, 0), 2);
    assert_int_equal(lineindex_line_len(&li, src, len, 1), 0);
    assert_int_equal(lineindex_line_len(&li, src, len, 2), 3);
    assert_int_equal(lineindex_line_len(&li, src, len, 3), 1);
    assert_int_equal(lineindex_line_len(&li, src, len, 4), 0); /* no such line */
    lineindex_free(&li);

    /* many lines: the index grows past its first allocation, and line_of agrees with a scan */
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < 3000; i++) sb_puts(&sb, i % 3 == 0 ? "x\n" : i % 3 == 1 ? "yy\r\n" : "\r");
    lineindex_build(&li, sb.data, sb.len);
    assert_int_equal(li.n, 3001);
    uint32_t line = 0;
    for (uint32_t off = 0; off < sb.len; off++) {
        if (lineindex_line_of(&li, off) != line) MISMATCH("offset %u: line %u, want %u", off, lineindex_line_of(&li, off), line);
        char c = sb.data[off];
        if (c == '\n' || (c == '\r' && !(off + 1 < sb.len && sb.data[off + 1] == '\n'))) line++;
    }
    lineindex_free(&li);
    sb_free(&sb);
    ASSERT_NO_LEAKS();
    assert_int_equal(mismatches, 0);
}

/* ---- strmap ---- */

static void strmap_put_get_replace(void **state)
{
    (void)state;
    StrMap m;
    strmap_init(&m);
    assert_int_equal(strmap_get(&m, "a", 1), UINT32_MAX); /* empty map */
    strmap_put(&m, "alpha", 5, 1);
    strmap_put(&m, "beta", 4, 2);
    strmap_put(&m, "", 0, 3); /* the empty key is a key */
    assert_int_equal(strmap_get(&m, "alpha", 5), 1);
    assert_int_equal(strmap_get(&m, "beta", 4), 2);
    assert_int_equal(strmap_get(&m, "", 0), 3);
    assert_int_equal(strmap_get(&m, "alph", 4), UINT32_MAX);
    assert_int_equal(strmap_get(&m, "alphabet", 5), 1); /* the length decides, not the NUL */
    assert_int_equal(m.len, 3);
    strmap_put(&m, "alpha", 5, 10);
    assert_int_equal(strmap_get(&m, "alpha", 5), 10);
    assert_int_equal(m.len, 3); /* replaced, not added */
    /* keys with embedded NULs */
    strmap_put(&m, "a\0b", 3, 7);
    strmap_put(&m, "a\0c", 3, 8);
    assert_int_equal(strmap_get(&m, "a\0b", 3), 7);
    assert_int_equal(strmap_get(&m, "a\0c", 3), 8);
    assert_int_equal(strmap_get(&m, "a", 1), UINT32_MAX);
    assert_int_equal(strmap_hash("abc", 3), strmap_hash("abcd", 3));
    assert_int_not_equal(strmap_hash("abc", 3), strmap_hash("abd", 3));
    strmap_free(&m);
    assert_null(m.slots);
    ASSERT_NO_LEAKS();
}

static void strmap_grow_10000(void **state)
{
    (void)state;
    mismatches = 0;
    enum { N = 10000 };
    Arena a;
    arena_init(&a);
    StrMap m;
    strmap_init(&m);
    char **keys = gl_malloc(N * sizeof *keys);
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = arena_printf(&a, "key_%u", i);
        strmap_put(&m, keys[i], strlen(keys[i]), i);
        assert_int_equal(m.len, i + 1);
        assert_true(m.len * 4 < m.cap * 3); /* load factor stays under 3/4 */
    }
    for (uint32_t i = 0; i < N; i++) {
        /* look up through a different pointer: the map compares bytes */
        char buf[32];
        snprintf(buf, sizeof buf, "key_%u", i);
        if (strmap_get(&m, buf, strlen(buf)) != i) MISMATCH("key_%u: got %u", i, strmap_get(&m, buf, strlen(buf)));
    }
    assert_int_equal(strmap_get(&m, "key_10000", 9), UINT32_MAX);
    assert_int_equal(strmap_get(&m, "key_", 4), UINT32_MAX);
    /* replace every other one after growth */
    for (uint32_t i = 0; i < N; i += 2) strmap_put(&m, keys[i], strlen(keys[i]), i + 1000000);
    assert_int_equal(m.len, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(strmap_get(&m, keys[i], strlen(keys[i])), i % 2 ? i : i + 1000000);
    assert_int_equal(m.cap & (m.cap - 1), 0); /* a power of two */
    strmap_free(&m);
    gl_free(keys);
    arena_free(&a);
    ASSERT_NO_LEAKS();
    assert_int_equal(mismatches, 0);
}

/* ---- suppression comments ---- */

typedef struct NoqaCase {
    const char *text;
    bool is_noqa;
    bool file_level;
    int n_codes;
    RuleId codes[3];
} NoqaCase;

static void check_noqa(const NoqaCase *c, size_t i)
{
    Noqa q;
    memset(&q, 0x5A, sizeof q); /* noqa_parse must clear what it does not set */
    bool got = noqa_parse(c->text, strlen(c->text), &q);
    if (got != c->is_noqa) MISMATCH("case %zu '%s': is_noqa = %d, want %d", i, c->text, got, c->is_noqa);
    if (!got) return;
    if (q.file_level != c->file_level)
        MISMATCH("case %zu '%s': file_level = %d, want %d", i, c->text, q.file_level, c->file_level);
    if ((int)q.n_codes != c->n_codes) {
        MISMATCH("case %zu '%s': %u codes, want %d", i, c->text, q.n_codes, c->n_codes);
        return;
    }
    for (int k = 0; k < c->n_codes; k++)
        if (q.codes[k] != c->codes[k])
            MISMATCH("case %zu '%s': code %d is %s, want %s", i, c->text, k, rule_info(q.codes[k])->code,
                     rule_info(c->codes[k])->code);
    for (int k = 0; k <= RULE_COUNT; k++)
        if (q.used[k]) MISMATCH("case %zu '%s': used[%d] set by parse", i, c->text, k);
}

static void noqa_parse_cases(void **state)
{
    (void)state;
    mismatches = 0;
    static const NoqaCase cases[] = {
        {"# noqa", true, false, 0, {0}},
        {"#noqa", true, false, 0, {0}},
        {"# NOQA", true, false, 0, {0}},
        {"# NoQa", true, false, 0, {0}},
        {"#   \tnoqa", true, false, 0, {0}},
        {"# noqa: GL101", true, false, 1, {RULE_GL101}},
        {"# noqa:GL101,GL302", true, false, 2, {RULE_GL101, RULE_GL302}},
        {"# noqa: GL101, GL302", true, false, 2, {RULE_GL101, RULE_GL302}},
        {"# noqa: GL101 GL302", true, false, 2, {RULE_GL101, RULE_GL302}},
        {"# noqa:  GL101 ,  GL302  ", true, false, 2, {RULE_GL101, RULE_GL302}},
        {"# NOQA: gl301", true, false, 1, {RULE_GL301}}, /* codes are case-insensitive */
        {"# noqa: empty-cache-in-step-loop", true, false, 1, {RULE_GL301}}, /* by name */
        {"# noqa: GL101 because the loss is a float", true, false, 1, {RULE_GL101}},
        {"# noqa: GL101, GL101", true, false, 2, {RULE_GL101, RULE_GL101}},
        /* codes gradleak does not know (another linter's, or a typo) suppress nothing: the
         * comment is a noqa with no code of ours (Noqa.foreign) */
        {"# noqa: GL999", true, false, 0, {0}},
        {"# noqa:", true, false, 0, {0}},
        {"# noqa: ", true, false, 0, {0}},
        {"# noqa - reason", true, false, 0, {0}},
        {"# noqa, reason", true, false, 0, {0}},
        /* known codes before an unknown one are kept */
        {"# noqa: GL101, GL999", true, false, 1, {RULE_GL101}},
        {"# gradleak: noqa", true, true, 0, {0}},
        {"# gradleak:noqa", true, true, 0, {0}},
        {"# GRADLEAK: NOQA", true, true, 0, {0}},
        {"# gradleak: noqa: GL301", true, true, 1, {RULE_GL301}},
        {"# gradleak: noqa:GL301,GL401", true, true, 2, {RULE_GL301, RULE_GL401}},
        {"# noqax", false, false, 0, {0}},
        {"# noqa1", false, false, 0, {0}},
        {"# noqaGL101", false, false, 0, {0}},
        {"# something noqa", false, false, 0, {0}},
        {"# something noqa: GL101", false, false, 0, {0}},
        {"# gradleak: something", false, false, 0, {0}},
        {"# gradleak noqa", false, false, 0, {0}},
        {"# noq", false, false, 0, {0}},
        {"#", false, false, 0, {0}},
        {"", false, false, 0, {0}},
        {"noqa", false, false, 0, {0}}, /* not a comment */
        {" # noqa", true, false, 0, {0}}, /* any # in the comment token may start a noqa */
        {"# expect: GL101", false, false, 0, {0}},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) check_noqa(&cases[i], i);
    assert_int_equal(mismatches, 0);
}

static void noqa_parse_bounded(void **state)
{
    (void)state;
    Noqa q;
    /* only len bytes are read: "# noqa: GL301" followed by more text that is not part of it */
    const char *buf = "# noqa: GL301GL302";
    assert_true(noqa_parse(buf, 13, &q));
    assert_int_equal(q.n_codes, 1);
    assert_int_equal(q.codes[0], RULE_GL301);
    /* "# noqa" cut before the last letter is not a noqa */
    assert_false(noqa_parse("# noqa", 5, &q));
    /* "# noqa" with a letter after it, outside len: a noqa */
    assert_true(noqa_parse("# noqax", 6, &q));
    assert_int_equal(q.n_codes, 0);
    /* a buffer that is not NUL-terminated */
    char raw[8];
    memcpy(raw, "# noqa:G", 8);
    assert_true(noqa_parse(raw, 8, &q));
    assert_int_equal(q.n_codes, 0);
}

/* Known gradleak bugs/limitations in noqa_parse, pinned as ruff behaves (DESIGN.md §5 models the
 * CLI on ruff). These fail today; see the report that added them. */
static void noqa_parse_after_unknown_code(void **state)
{
    (void)state;
    mismatches = 0;
    /* ruff: unknown codes in a noqa list are ignored, the known ones still apply. gradleak stops at
     * the first unknown code, so GL301 here is dropped: the finding is reported AND GL901 calls the
     * line's GL302 unused. */
    NoqaCase c = {"# noqa: GL302, GL999, GL301", true, false, 2, {RULE_GL302, RULE_GL301}};
    check_noqa(&c, 0);
    assert_int_equal(mismatches, 0);
}

static void noqa_parse_noqa_after_other_comment(void **state)
{
    (void)state;
    mismatches = 0;
    /* tree-sitter makes `# type: ignore  # noqa` ONE comment, so the comment in suppress.c ("is its
     * own comment") does not hold: the noqa is never seen. ruff accepts a noqa after `#` anywhere. */
    NoqaCase c = {"# type: ignore  # noqa: GL301", true, false, 1, {RULE_GL301}};
    check_noqa(&c, 0);
    assert_int_equal(mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest alloc_tests[] = {
        cmocka_unit_test_setup_teardown(arena_many_allocations, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(arena_alignment_and_zero, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(arena_reuse_after_free, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(arena_strings, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(array_push_pop, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(array_reserve_growth, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(strbuf_basics, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(strbuf_take, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(lineindex_endings, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(lineindex_line_of_boundaries, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(strmap_put_get_replace, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(strmap_grow_10000, count_alloc_setup, count_alloc_teardown),
    };
    const struct CMUnitTest text_tests[] = {
        cmocka_unit_test(utf8_seq_len_cases),
        cmocka_unit_test(utf8_and_utf16_counts),
    };
    const struct CMUnitTest suppress_tests[] = {
        cmocka_unit_test(noqa_parse_cases),
        cmocka_unit_test(noqa_parse_bounded),
        cmocka_unit_test(noqa_parse_after_unknown_code),
        cmocka_unit_test(noqa_parse_noqa_after_other_comment),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("base (allocating)", alloc_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("base (text)", text_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("suppress", suppress_tests, NULL, NULL);
    return failed ? 1 : 0;
}
