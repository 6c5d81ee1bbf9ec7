/* The spill: an unlinked temporary file written with pwrite at reserved offsets (several workers
 * at once), or a memory buffer when there is no such file. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "engine/spill.h"

/* Handles with this bit are offsets into the memory buffer; the others, into the file. */
#define SPILL_MEM_BIT (1ull << 62)

struct Spill {
    pthread_mutex_t mu;
    int fd;           /* the temporary file, or -1 */
    bool writable;    /* new bytes go to the file (until a write to it fails) */
    uint64_t end;     /* the file's next free offset */
    StrBuf mem;       /* the bytes that went to memory */
};

static Spill *spill__new(int fd)
{
    Spill *s = gl_calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = fd;
    s->writable = fd >= 0;
    sb_init(&s->mem);
    return s;
}

Spill *spill_open(const char *dir)
{
    if (!dir || !dir[0]) dir = "/tmp";
    StrBuf path;
    sb_init(&path);
    sb_printf(&path, "%s/gradleak-spill-XXXXXX", dir);
    int fd = mkostemp(path.data, O_CLOEXEC);
    if (fd >= 0) unlink(path.data); /* it goes away with the last descriptor, whatever happens */
    sb_free(&path);
    return spill__new(fd);
}

Spill *spill_open_memory(void)
{
    return spill__new(-1);
}

void spill_close(Spill *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    sb_free(&s->mem);
    pthread_mutex_destroy(&s->mu);
    gl_free(s);
}

static uint64_t spill__put_memory(Spill *s, const void *data, size_t len)
{
    pthread_mutex_lock(&s->mu);
    uint64_t at = s->mem.len | SPILL_MEM_BIT;
    sb_append(&s->mem, data, len);
    pthread_mutex_unlock(&s->mu);
    return at;
}

uint64_t spill_put(Spill *s, const void *data, size_t len)
{
    pthread_mutex_lock(&s->mu);
    bool to_file = s->writable;
    uint64_t at = s->end;
    if (to_file) s->end += len;
    pthread_mutex_unlock(&s->mu);
    if (!to_file) return spill__put_memory(s, data, len);
    for (size_t done = 0; done < len;) {
        ssize_t w = pwrite(s->fd, (const char *)data + done, len - done, (off_t)(at + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            /* a full disk: this and what follows stay in memory (what is in the file still reads) */
            pthread_mutex_lock(&s->mu);
            s->writable = false;
            pthread_mutex_unlock(&s->mu);
            return spill__put_memory(s, data, len);
        }
        done += (size_t)w;
    }
    return at;
}

char *spill_get(Spill *s, uint64_t at, size_t len)
{
    char *buf = gl_malloc(len + 1);
    buf[len] = 0;
    if (at & SPILL_MEM_BIT) {
        at &= ~SPILL_MEM_BIT;
        pthread_mutex_lock(&s->mu);
        bool ok = ALWAYS(at + len <= s->mem.len);
        if (ok) memcpy(buf, s->mem.data + at, len);
        pthread_mutex_unlock(&s->mu);
        if (!ok) {
            gl_free(buf);
            errno = EINVAL;
            return NULL;
        }
        return buf;
    }
    for (size_t done = 0; done < len;) {
        ssize_t r = pread(s->fd, buf + done, len - done, (off_t)(at + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EIO; /* shorter than what was written: truncated under us */
            gl_free(buf);
            return NULL;
        }
        done += (size_t)r;
    }
    return buf;
}
