/* Unit tests for src/engine/spill.c, where `check` parks results until the output: round trips through
 * the temporary file and through memory, several writers at once, and the fall-back to memory when
 * there is no usable temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <cmocka.h>
#include "engine/spill.h"

#define BLOBS 600

/* Blob i: i-dependent bytes of an i-dependent length (0 included), with NULs inside. */
static size_t blob_len(uint32_t i) { return (size_t)(i * 7919u) % 3001u; }

static void blob_fill(uint32_t i, char *buf)
{
    for (size_t k = 0; k < blob_len(i); k++) buf[k] = (char)((i * 31u + k * 17u) & 0xFF);
}

static void put_all(Spill *s, uint32_t from, uint32_t to, uint64_t *at)
{
    char buf[3001];
    for (uint32_t i = from; i < to; i++) {
        blob_fill(i, buf);
        at[i] = spill_put(s, buf, blob_len(i));
        assert_true(at[i] != SPILL_NONE);
    }
}

static void check_all(Spill *s, const uint64_t *at)
{
    char want[3001];
    for (uint32_t i = 0; i < BLOBS; i++) {
        char *got = spill_get(s, at[i], blob_len(i));
        assert_non_null(got);
        blob_fill(i, want);
        assert_memory_equal(got, want, blob_len(i));
        assert_int_equal(got[blob_len(i)], 0); /* NUL-terminated */
        gl_free(got);
    }
}

static void spill_round_trip(void **state)
{
    (void)state;
    static uint64_t at[BLOBS];
    for (int memory = 0; memory <= 1; memory++) {
        Spill *s = memory ? spill_open_memory() : spill_open(NULL);
        put_all(s, 0, BLOBS, at);
        check_all(s, at);
        /* read back in any order, and twice */
        for (uint32_t i = BLOBS; i-- > 0;) gl_free(spill_get(s, at[i], blob_len(i)));
        check_all(s, at);
        spill_close(s);
    }
}

typedef struct Writer {
    Spill *s;
    uint32_t from, to;
    uint64_t *at;
} Writer;

static void *writer(void *arg)
{
    Writer *w = arg;
    char buf[3001];
    for (uint32_t i = w->from; i < w->to; i++) {
        blob_fill(i, buf);
        w->at[i] = spill_put(w->s, buf, blob_len(i));
    }
    return NULL;
}

/* Four workers put at once (the CLI's pool does): every blob reads back intact. */
static void spill_concurrent_writers(void **state)
{
    (void)state;
    static uint64_t at[BLOBS];
    for (int memory = 0; memory <= 1; memory++) {
        Spill *s = memory ? spill_open_memory() : spill_open(NULL);
        pthread_t th[4];
        Writer w[4];
        for (int t = 0; t < 4; t++) {
            w[t] = (Writer){s, (uint32_t)t * BLOBS / 4, (uint32_t)(t + 1) * BLOBS / 4, at};
            assert_int_equal(pthread_create(&th[t], NULL, writer, &w[t]), 0);
        }
        for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
        check_all(s, at);
        spill_close(s);
    }
}

/* No temporary directory (TMPDIR names none): the spill keeps the bytes in memory and works. */
static void spill_without_tmpdir(void **state)
{
    (void)state;
    static uint64_t at[BLOBS];
    Spill *s = spill_open("/nonexistent/gradleak-test");
    put_all(s, 0, BLOBS, at);
    check_all(s, at);
    spill_close(s);
}

/* The temporary file stops taking bytes part way (a full disk; here a file size limit): what it
 * holds still reads back, and the rest goes to memory. */
static void spill_disk_full_midway(void **state)
{
    (void)state;
    static uint64_t at[BLOBS];
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    Spill *s = spill_open(NULL);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
    struct rlimit small = {64 * 1024, old.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    put_all(s, 0, BLOBS, at);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    uint32_t in_file = 0;
    for (uint32_t i = 0; i < BLOBS; i++) in_file += at[i] < 64 * 1024;
    assert_true(in_file > 10);      /* the first ones went to the file... */
    assert_true(in_file < BLOBS);   /* ...the others did not */
    check_all(s, at);
    spill_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spill_round_trip),
        cmocka_unit_test(spill_concurrent_writers),
        cmocka_unit_test(spill_without_tmpdir),
        cmocka_unit_test(spill_disk_full_midway),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
