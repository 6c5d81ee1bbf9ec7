/* libFuzzer target: the TOML reader (src/config/toml.h). Parses, then reads every value through
 * every accessor (type mismatches included) and checks the documented invariants: positions are
 * 1-based, tables and arrays answer their lengths, the tree is no deeper than TOML_MAX_DEPTH. */
#include <stdio.h>
#include "config/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz__fail(const char *what)
{
    fprintf(stderr, "fuzz_toml: invariant broken: %s\n", what);
    __builtin_trap();
}

static void fuzz__scalars(const TomlValue *v)
{
    int64_t i;
    double f;
    bool b;
    const char *s = toml_as_string(v);
    if (s && s[toml_string_len(v)] != 0) fuzz__fail("string not NUL-terminated at its length");
    bool is_int = toml_as_int(v, &i), is_float = toml_as_float(v, &f), is_bool = toml_as_bool(v, &b);
    if ((s != NULL) + is_int + is_float + is_bool > 1) fuzz__fail("a value of two scalar types");
    if (toml_line(v) == 0 || toml_col(v) == 0) fuzz__fail("position not 1-based");
    if (!toml_type_name(toml_type(v))) fuzz__fail("no type name");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TomlError err;
    TomlValue *root = toml_parse((const char *)data, size, &err);
    if (!root) {
        if (!err.message[0] || err.line == 0 || err.col == 0) fuzz__fail("an error without message or position");
        if (!memchr(err.message, 0, sizeof err.message)) fuzz__fail("error message not terminated");
        return 0;
    }
    if (toml_type(root) != TOML_TABLE) fuzz__fail("root is not a table");
    /* iterative walk with an explicit stack (depth is bounded, but the walk does not rely on it) */
    typedef struct { const TomlValue *v; uint32_t depth; } Item;
    static Item stack[1 << 16];
    uint32_t n = 0;
    stack[n++] = (Item){root, 0};
    while (n) {
        Item it = stack[--n];
        const TomlValue *v = it.v;
        if (it.depth > TOML_MAX_DEPTH + 1) fuzz__fail("tree deeper than TOML_MAX_DEPTH");
        fuzz__scalars(v);
        if (toml_type(v) == TOML_TABLE) {
            size_t len = toml_table_len(v);
            for (size_t k = 0; k < len; k++) {
                const char *key = toml_table_key_at(v, k);
                if (!key) fuzz__fail("table key NULL");
                uint32_t line, col;
                toml_table_key_pos(v, k, &line, &col);
                if (!line || !col) fuzz__fail("key position not 1-based");
                const TomlValue *c = toml_table_value_at(v, k);
                if (!c) fuzz__fail("table value NULL");
                if (strlen(key) == toml_table_key_len(v, k) && toml_table_get(v, key) != c) fuzz__fail("table_get disagrees");
                if (n < ARRAY_LEN(stack)) stack[n++] = (Item){c, it.depth + 1};
            }
            if (toml_table_value_at(v, len) != NULL || toml_array_len(v) != 0) fuzz__fail("table answers out of range");
        } else if (toml_type(v) == TOML_ARRAY) {
            size_t len = toml_array_len(v);
            for (size_t k = 0; k < len; k++) {
                const TomlValue *c = toml_array_at(v, k);
                if (!c) fuzz__fail("array element NULL");
                if (n < ARRAY_LEN(stack)) stack[n++] = (Item){c, it.depth + 1};
            }
            if (toml_array_at(v, len) != NULL || toml_table_len(v) != 0) fuzz__fail("array answers out of range");
        }
    }
    toml_free(root);
    return 0;
}
