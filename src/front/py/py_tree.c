/* The syntax tree a document keeps between lints (py.h's PyTree): its edits, and the trees tree-sitter
 * cannot free safely. */
#include <pthread.h>
#include "front/py/py_tree.h"

/* libtree-sitter 0.20.7 keeps a node's child count in 16 bits. Error recovery can build an ERROR node
 * with 65,536 children or more (65,533 unclosed brackets, 70,000 `else:` lines): its count wraps, the
 * node silently drops its first children, and ts_tree_delete frees a pointer into the middle of the
 * children array (heap corruption; found by tests/badinput). The dropped children take their bytes
 * with them, so such a tree ends before the last non-blank byte of the file. */
bool py_tree_truncated(const char *src, size_t len, TSNode root)
{
    size_t end = len;
    while (end && (src[end - 1] == ' ' || src[end - 1] == '\t' || src[end - 1] == '\n' || src[end - 1] == '\r' ||
                   src[end - 1] == '\f' || src[end - 1] == '\v' || src[end - 1] == 0))
        end--;
    return ts_node_end_byte(root) < end;
}

/* Trees that cannot be freed safely are kept here, reachable, for the life of the process: the cost
 * is bounded by the size of the (pathological) files that produce them. */
static pthread_mutex_t py_quarantine_mu = PTHREAD_MUTEX_INITIALIZER;
static Array(TSTree *) py_quarantine;

void py_tree_quarantine(TSTree *t)
{
    pthread_mutex_lock(&py_quarantine_mu);
    array_push(&py_quarantine, t);
    pthread_mutex_unlock(&py_quarantine_mu);
}

PyTree *py_tree_new(bool reuse)
{
    PyTree *t = gl_calloc(1, sizeof(PyTree));
    t->reuse = reuse;
    py_chunk_cache_init(&t->chunks);
    return t;
}

void py_tree_free(PyTree *t)
{
    if (!t) return;
    if (t->tree) ts_tree_delete(t->tree);
    if (t->parser) ts_parser_delete(t->parser);
    py_chunk_cache_free(&t->chunks);
    gl_free(t);
}

void py_tree_reset(PyTree *t)
{
    if (!t || !t->tree) return;
    ts_tree_delete(t->tree);
    t->tree = NULL;
}

/* tree-sitter's point of byte off: rows end at '\n' only, columns are bytes. */
static TSPoint py__point(const char *src, uint32_t off)
{
    TSPoint pt = {0, 0};
    const char *p = src, *end = src + off, *nl;
    while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) pt.row++, p = nl + 1;
    pt.column = (uint32_t)(end - p);
    return pt;
}

void py_tree_edit(PyTree *t, const char *old_src, size_t old_len, uint32_t start, uint32_t old_end,
                  const char *text, size_t text_len)
{
    if (!t || !t->tree) return;
    if (old_len > UINT32_MAX / 2 || text_len > UINT32_MAX / 2) {
        /* too big to describe: forget the tree, the next parse starts afresh */
        ts_tree_delete(t->tree);
        t->tree = NULL;
        return;
    }
    if (start > old_len) start = (uint32_t)old_len;
    if (old_end > old_len) old_end = (uint32_t)old_len;
    if (old_end < start) old_end = start;
    TSInputEdit e;
    e.start_byte = start;
    e.old_end_byte = old_end;
    e.new_end_byte = start + (uint32_t)text_len;
    e.start_point = py__point(old_src, start);
    e.old_end_point = py__point(old_src, old_end);
    TSPoint add = py__point(text, (uint32_t)text_len);
    e.new_end_point.row = e.start_point.row + add.row;
    e.new_end_point.column = add.row ? add.column : e.start_point.column + add.column;
    ts_tree_edit(t->tree, &e);
}
