/* libFuzzer target: the notebook reader (src/nb). Reads the input as a .ipynb and checks the
 * documented invariants: an error is one line; the masked code and the text have the same length
 * and the same line breaks; cells are in order and inside the joined source; the blob round-trips;
 * the unfixed code splits back into the cells' own sources; writing those back changes no byte;
 * and one changed cell written back reads back as written. */
#include <stdio.h>
#include "nb/nb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz__fail(const char *what)
{
    fprintf(stderr, "fuzz_nb: invariant broken: %s\n", what);
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *json = (const char *)data;
    Notebook nb;
    char err[512];
    err[0] = 0;
    NbStatus st = nb_read(json, size, &nb, err, sizeof err);
    if (st != NB_OK) {
        if (!err[0] || strchr(err, '\n')) fuzz__fail("an error that is empty or not one line");
        return 0;
    }
    for (size_t i = 0; i < nb.len; i++)
        if ((nb.code[i] == '\n') != (nb.text[i] == '\n')) fuzz__fail("masking moved a line break");
    uint32_t prev_end = 0, prev_index = 0;
    for (uint32_t k = 0; k < nb.n_cells; k++) {
        const NbCell *c = &nb.cells[k];
        if (c->start != prev_end || c->end < c->start || c->end > nb.len) fuzz__fail("cells not contiguous");
        if (c->index <= prev_index || c->index > nb.n_all) fuzz__fail("cell index out of order");
        if (c->end > c->start && nb_cell_of_byte(nb.cells, nb.n_cells, c->start) != c) fuzz__fail("cell_of_byte");
        prev_end = c->end, prev_index = c->index;
    }
    if (prev_end != nb.len) fuzz__fail("cells do not cover the source");

    StrBuf blob;
    sb_init(&blob);
    nb_blob_encode(&nb, &blob);
    Notebook v;
    if (nb_blob_view(blob.data, blob.len, &v) != 0 || v.len != nb.len || v.n_cells != nb.n_cells ||
        memcmp(v.code, nb.code, nb.len) != 0)
        fuzz__fail("blob round trip");
    sb_free(&blob);

    StrBuf fs;
    sb_init(&fs);
    nb_fix_source(&nb, &fs);
    char **texts;
    if (nb_new_texts(&nb, fs.data, fs.len, &texts, err, sizeof err) != 0) fuzz__fail("unfixed code does not split back");
    for (uint32_t k = 0; k < nb.n_cells; k++) {
        char *t = nb_cell_source(&nb, k);
        if (strcmp(t, texts[k]) != 0) fuzz__fail("unfixed cell text differs");
        gl_free(t);
    }
    StrBuf out;
    sb_init(&out);
    int n = nb_write_back(&nb, json, size, texts, &out, err, sizeof err);
    if (n > 0 || (n == 0 && (out.len != size || memcmp(out.data, json, size) != 0)))
        fuzz__fail("writing back unchanged cells changed the file");
    if (n == 0 && nb.n_cells) {
        /* one changed cell: it reads back as written (nb_write_back checks), or a clean error */
        gl_free(texts[0]);
        texts[0] = gl_strdup("x = 1\n# \xc3\xa9 \"q\" \\\n\tz = '\\u0000'");
        sb_clear(&out);
        n = nb_write_back(&nb, json, size, texts, &out, err, sizeof err);
        if (n < 0 && (!err[0] || strchr(err, '\n'))) fuzz__fail("write-back error not one line");
    }
    sb_free(&out);
    nb_texts_free(texts, nb.n_cells);
    sb_free(&fs);
    nb_free(&nb);
    return 0;
}
