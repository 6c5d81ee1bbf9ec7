/* Reading a whole file (base/file.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/file.h"
#include "base/strbuf.h"

char *gl_read_file(const char *path, size_t max, size_t *len)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused below) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > (uint64_t)max) {
        int e = EIO;
        if (S_ISDIR(st.st_mode)) e = EISDIR;
        else if (!S_ISREG(st.st_mode)) e = ENODEV; /* FIFO, socket, device: "No such device" */
        else if ((uint64_t)st.st_size > (uint64_t)max) e = EFBIG;
        close(fd);
        errno = e;
        return NULL;
    }
    StrBuf sb;
    sb_init(&sb);
    sb_append(&sb, "", 0);
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            close(fd);
            sb_free(&sb);
            errno = EIO;
            return NULL;
        }
        /* a file that grows while it is read still stops at max */
        if (sb.len + (size_t)n > max) {
            close(fd);
            sb_free(&sb);
            errno = EFBIG;
            return NULL;
        }
        sb_append(&sb, buf, (size_t)n);
    }
    close(fd);
    *len = sb.len;
    return sb_take(&sb);
}
