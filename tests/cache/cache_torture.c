/* Test helper for tests/cache: a cache writer that is always in the middle of a transaction, to be
 * killed with SIGKILL at random moments.
 *
 *   cache_torture DIR       writes forever: batches of 150 results (~600 KB) per transaction,
 *                           and one validation-history row per batch; prints "ready" after the
 *                           first batch is committed
 *   cache_torture DIR N     writes N batches and exits 0 (for timing and for ASan) */
#include <stdio.h>
#include <unistd.h>
#include "cache/cache.h"
#include "cache/history.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cache_torture DIR [BATCHES]\n");
        return 2;
    }
    long batches = argc > 2 ? strtol(argv[2], NULL, 10) : -1;
    uint64_t seed = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
    char blob[4096];
    for (long b = 0; batches < 0 || b < batches; b++) {
        Cache *c = cache_open(argv[1]);
        if (!cache_enabled(c)) {
            fprintf(stderr, "cache_torture: %s\n", cache_warning(c) ? cache_warning(c) : "cache off");
            cache_close(c);
            return 1;
        }
        for (int i = 0; i < 150; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            char path[64];
            snprintf(path, sizeof path, "/torture/f%04u.py", (unsigned)(seed >> 33) % 2000);
            for (size_t k = 0; k < sizeof blob; k++) blob[k] = (char)(seed >> (k % 56));
            cache_put(c, path, seed & 7, seed, sizeof blob, blob, sizeof blob);
        }
        int rc = cache_flush(c);
        if (rc < 0) fprintf(stderr, "cache_torture: %s\n", cache_warning(c));
        cache_close(c);
        ValidationRun run = {"/torture/train.py", "GL101", (uint32_t)b + 1, "cpu", "1.13", 20, 4.2e6, 0.0, 0.99,
                             "confirmed", 1.5, 0};
        char err[512];
        if (history_add_validation(argv[1], &run, err, sizeof err) < 0) fprintf(stderr, "cache_torture: %s\n", err);
        if (b == 0) {
            printf("ready\n");
            fflush(stdout);
        }
    }
    return 0;
}
