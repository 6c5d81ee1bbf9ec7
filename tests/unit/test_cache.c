/* Unit tests for src/cache/ and the result encoding it stores (engine/result_codec.c: round trip,
 * damaged blobs), the hash, get/put
 * through a real database, and the validation history. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <unistd.h>
#include "count_alloc.h"
#include "cache/cache.h"
#include "cache/history.h"
#include "engine/result_codec.h"

static void make_diags(Arena *a, DiagList *l)
{
    array_init(l);
    Diag d;
    memset(&d, 0, sizeof d);
    d.rule = 3;
    d.severity = SEV_WARNING;
    d.growth = GROWTH_HOST;
    d.span = (Span){10, 20, 1, 4, 1, 14};
    d.message = "'total' keeps the graph";
    d.hint = "Use 'loss.item()'";
    d.n_related = 2;
    d.related = ARENA_NEW_N(a, Related, 2);
    d.related[0] = (Related){{1, 2, 0, 1, 0, 2}, "the graph comes from here"};
    d.related[1] = (Related){{5, 6, 0, 5, 0, 6}, "\xc3\xa9 unicode"};
    d.fix = ARENA_NEW(a, Fix);
    d.fix->message = "Replace";
    d.fix->safety = FIX_UNSAFE;
    d.fix->n_edits = 1;
    d.fix->edits = ARENA_NEW(a, Edit);
    d.fix->edits[0] = (Edit){10, 20, "loss.item()"};
    d.trace = "loop at line 2";
    d.loop_line = 2;
    array_push(l, d);
    Diag e;
    memset(&e, 0, sizeof e);
    e.rule = 0;
    e.message = "plain";
    array_push(l, e);
}

static void test_roundtrip(void **state)
{
    (void)state;
    LintResult in;
    memset(&in, 0, sizeof in);
    arena_init(&in.arena);
    make_diags(&in.arena, &in.diags);
    in.notes = "syntax error at 3:5";
    in.syntax_error = true;
    in.n_exports = 1;
    in.exports = ARENA_NEW(&in.arena, ExportedFunc);
    in.exports[0].name = "repackage_hidden";
    in.exports[0].summary = (ExternSummary){.kind = 1, .grad = 2, .elem = 3, .nparams = 4, .flags = 0x1234,
                                            .pmask = 0x8001, .cmask = 0x81, .keep_acc = 0x05, .keep_coll = 0x82,
                                            .trains = 1, .evaluates = 1, .backprops = 1, .ret_tuple = 3,
                                            .ret_plain = 0x8002, .ret_weak = 0x0004, .ret_zero = 0x4001};
    in.n_calls = 2;
    in.calls = ARENA_NEW_N(&in.arena, ImportedCall, 2);
    in.calls[0] = (ImportedCall){.qual = "utils.f", .graph_arg = true, .grad_off = true};
    in.calls[1] = (ImportedCall){.qual = "::rl::Storage::add", .module_arg = true, .per_step = true};
    StrBuf sb;
    sb_init(&sb);
    lint_result_encode(&sb, &in);
    LintResult out;
    assert_int_equal(lint_result_decode(sb.data, sb.len, &out), 0);
    assert_int_equal(out.diags.len, 2);
    assert_string_equal(out.notes, "syntax error at 3:5");
    assert_true(out.syntax_error);
    assert_false(out.skipped);
    assert_int_equal(out.n_exports, 1);
    assert_string_equal(out.exports[0].name, "repackage_hidden");
    const ExternSummary *es = &out.exports[0].summary;
    assert_true(es->kind == 1 && es->grad == 2 && es->elem == 3 && es->nparams == 4 && es->flags == 0x1234 &&
                es->pmask == 0x8001 && es->cmask == 0x81 && es->keep_acc == 0x05 && es->keep_coll == 0x82 &&
                es->trains == 1 && es->evaluates == 1 && es->backprops == 1 && es->ret_tuple == 3 &&
                es->ret_plain == 0x8002 &&
                es->ret_weak == 0x0004 && es->ret_zero == 0x4001);
    assert_int_equal(out.n_calls, 2);
    assert_string_equal(out.calls[1].qual, "::rl::Storage::add");
    assert_true(out.calls[0].graph_arg && !out.calls[0].module_arg && !out.calls[0].per_step && out.calls[0].grad_off);
    assert_true(!out.calls[1].graph_arg && out.calls[1].module_arg && out.calls[1].per_step && !out.calls[1].grad_off);
    const Diag *d = &out.diags.items[0];
    assert_int_equal(d->rule, 3);
    assert_int_equal(d->severity, SEV_WARNING);
    assert_int_equal(d->growth, GROWTH_HOST);
    assert_memory_equal(&d->span, &in.diags.items[0].span, sizeof(Span));
    assert_string_equal(d->message, in.diags.items[0].message);
    assert_string_equal(d->hint, in.diags.items[0].hint);
    assert_int_equal(d->n_related, 2);
    assert_string_equal(d->related[1].message, "\xc3\xa9 unicode");
    assert_int_equal(d->related[1].span.start, 5);
    assert_non_null(d->fix);
    assert_int_equal(d->fix->safety, FIX_UNSAFE);
    assert_string_equal(d->fix->edits[0].text, "loss.item()");
    assert_string_equal(d->trace, "loop at line 2");
    assert_int_equal(d->loop_line, 2);
    assert_null(out.diags.items[1].hint);
    assert_null(out.diags.items[1].fix);
    assert_null(out.diags.items[1].trace);
    lint_result_free(&out);

    /* every truncation and many single-byte changes: decode fails cleanly or gives a result,
     * never reads past the blob (ASan watches) */
    for (size_t cut = 0; cut < sb.len; cut++) {
        char *copy = gl_malloc(cut ? cut : 1);
        memcpy(copy, sb.data, cut);
        assert_int_equal(lint_result_decode(copy, cut, &out), -1);
        assert_int_equal(out.diags.len, 0);
        lint_result_free(&out);
        gl_free(copy);
    }
    uint64_t seed = 42;
    for (int i = 0; i < 2000; i++) {
        char *copy = gl_malloc(sb.len);
        memcpy(copy, sb.data, sb.len);
        seed = seed * 6364136223846793005ull + 1;
        copy[(seed >> 33) % sb.len] ^= (char)(1 + (seed >> 20) % 255);
        lint_result_decode(copy, sb.len, &out);
        lint_result_free(&out);
        gl_free(copy);
    }
    /* a row whose rule this build does not have is refused (a Diag's rule is always a RuleId) */
    {
        LintResult one;
        memset(&one, 0, sizeof one);
        arena_init(&one.arena);
        Diag e;
        memset(&e, 0, sizeof e);
        e.rule = RULE_GL101;
        e.message = "m";
        array_push(&one.diags, e);
        StrBuf a, b;
        sb_init(&a);
        sb_init(&b);
        lint_result_encode(&a, &one);
        one.diags.items[0].rule = (RuleId)RULE_COUNT;
        lint_result_encode(&b, &one);
        assert_int_equal(lint_result_decode(a.data, a.len, &out), 0);
        lint_result_free(&out);
        assert_int_equal(lint_result_decode(b.data, b.len, &out), -1);
        lint_result_free(&out);
        sb_free(&a);
        sb_free(&b);
        lint_result_free(&one);
    }
    /* a huge count is refused before any allocation */
    static const unsigned char huge[] = {'G', 'L', 'R', '2', 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    assert_int_equal(lint_result_decode(huge, sizeof huge, &out), -1);
    lint_result_free(&out);
    sb_free(&sb);
    lint_result_free(&in);
}

static void test_hash(void **state)
{
    (void)state;
    char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)i;
    /* every length (the tails) and every single-bit change gives another hash */
    for (size_t n = 1; n < sizeof buf; n++) {
        uint64_t h = cache_hash64(buf, n, 0);
        assert_true(h != cache_hash64(buf, n - 1, 0));
        buf[n / 2] ^= 1;
        assert_true(h != cache_hash64(buf, n, 0));
        buf[n / 2] ^= 1;
        assert_true(h == cache_hash64(buf, n, 0));
        assert_true(h != cache_hash64(buf, n, 1));
    }
}

static char dir[256];

static void fresh_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/gradleak-test-cache.XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_get_put(void **state)
{
    (void)state;
    fresh_dir();
    char cdir[300];
    snprintf(cdir, sizeof cdir, "%s/a/b/.gradleak_cache", dir); /* made with its parents */
    Cache *c = cache_open(cdir);
    assert_true(cache_enabled(c));
    assert_null(cache_warning(c));
    void *blob;
    size_t len;
    assert_int_equal(cache_get(c, "/x.py", 1, 2, 3, &blob, &len), 0);
    cache_put(c, "/x.py", 1, 2, 3, "abc", 3);
    assert_int_equal(cache_get(c, "/x.py", 1, 2, 3, &blob, &len), 0); /* not written before the flush */
    assert_int_equal(cache_flush(c), 0);
    cache_close(c);

    c = cache_open(cdir);
    assert_int_equal(cache_get(c, "/x.py", 1, 2, 3, &blob, &len), 1);
    assert_int_equal(len, 3);
    assert_memory_equal(blob, "abc", 3);
    gl_free(blob);
    assert_int_equal(cache_get(c, "/x.py", 9, 2, 3, &blob, &len), 0); /* other settings */
    assert_int_equal(cache_get(c, "/x.py", 1, 7, 3, &blob, &len), 0); /* other content */
    assert_int_equal(cache_get(c, "/x.py", 1, 2, 4, &blob, &len), 0); /* other size */
    assert_int_equal(cache_get(c, "/y.py", 1, 2, 3, &blob, &len), 0);
    /* a new content replaces the old row */
    cache_put(c, "/x.py", 1, 5, 3, "def", 3);
    assert_int_equal(cache_flush(c), 0);
    assert_int_equal(cache_get(c, "/x.py", 1, 2, 3, &blob, &len), 0);
    assert_int_equal(cache_get(c, "/x.py", 1, 5, 3, &blob, &len), 1);
    gl_free(blob);
    cache_close(c);
    StrBuf out;
    sb_init(&out);
    assert_int_equal(cache_check(cdir, &out), 0);
    assert_non_null(strstr(out.data, "integrity: ok"));
    assert_non_null(strstr(out.data, "files: 1\n"));
    sb_free(&out);

    /* garbage instead of a database: off, one warning, and the next open starts afresh */
    char db[400];
    snprintf(db, sizeof db, "%s/cache.db", cdir);
    FILE *f = fopen(db, "w");
    assert_non_null(f);
    for (int i = 0; i < 4096; i++) fputc("garbage!"[i % 8], f);
    fclose(f);
    c = cache_open(cdir);
    assert_false(cache_enabled(c));
    assert_non_null(strstr(cache_warning(c), "damaged"));
    assert_int_equal(cache_get(c, "/x.py", 1, 5, 3, &blob, &len), 0);
    cache_put(c, "/x.py", 1, 5, 3, "def", 3);
    assert_int_equal(cache_flush(c), 0); /* nothing queued when off */
    cache_close(c);
    c = cache_open(cdir);
    assert_true(cache_enabled(c));
    assert_int_equal(cache_get(c, "/x.py", 1, 5, 3, &blob, &len), 0);
    cache_close(c);
    remove_dir();
}

static int count_rows(void *ctx, const ValidationRun *r)
{
    int *n = ctx;
    if (*n == 0) {
        assert_string_equal(r->path, "train.py");
        assert_string_equal(r->rule, "GL101");
        assert_int_equal(r->line, 21);
        assert_string_equal(r->device, "NVIDIA H100 80GB HBM3");
        assert_string_equal(r->torch_version, "2.11.0");
        assert_int_equal(r->iterations, 50);
        assert_true(r->leaky_bytes_per_iter == 4.2e6);
        assert_true(r->fixed_bytes_per_iter == 0.0);
        assert_true(r->r2 == 0.999);
        assert_string_equal(r->verdict, "confirmed");
        assert_true(r->duration_s == 12.5);
        assert_true(r->time == 1700000000);
    } else {
        assert_true(r->time > 1700000000); /* 0 = now */
        assert_null(r->device);
    }
    (*n)++;
    return 0;
}

static void test_history(void **state)
{
    (void)state;
    fresh_dir();
    ValidationRun run = {"train.py", "GL101", 21, "NVIDIA H100 80GB HBM3", "2.11.0", 50, 4.2e6, 0.0, 0.999,
                         "confirmed", 12.5, 1700000000};
    char err[512];
    assert_int_equal(history_add_validation(dir, &run, err, sizeof err), 0);
    ValidationRun second = {"train.py", "GL103", 40, NULL, NULL, 10, 0, 0, 0, "not reproduced", 3, 0};
    assert_int_equal(history_add_validation(dir, &second, err, sizeof err), 0);
    int n = 0;
    assert_int_equal(history_each_validation(dir, count_rows, &n, err, sizeof err), 2);
    assert_int_equal(n, 2);
    ValidationRun bad = {NULL, "GL101", 1, NULL, NULL, 0, 0, 0, 0, "confirmed", 0, 0};
    assert_int_equal(history_add_validation(dir, &bad, err, sizeof err), -1);
    char tag[400];
    snprintf(tag, sizeof tag, "%s/CACHEDIR.TAG", dir);
    assert_int_equal(access(tag, F_OK), 0);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_hash, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_get_put, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_history, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
