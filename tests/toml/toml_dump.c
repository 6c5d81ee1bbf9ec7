/* Parses one TOML file and prints it as tagged JSON (toml-test's shape), for the tomllib difftest. */
#include <math.h>
#include <stdio.h>

#include "config/toml.h"

/* Scalars print as {"type": T, "value": V} with V a string, so that integers, floats and the
 * special floats survive JSON intact; floats use the shortest text that reads back to the same
 * double. Tables keep document order (the difftest checks it against tomllib's dict order). */

static void dump__string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20 || c == 0x7f) printf("\\u%04x", c);
        else putchar(c); /* UTF-8 passes through: toml_parse has validated it */
    }
    putchar('"');
}

static void dump__scalar(const char *type, const char *value)
{
    printf("{\"type\":\"%s\",\"value\":", type);
    dump__string(value, strlen(value));
    putchar('}');
}

static void dump__float(double f)
{
    char buf[40];
    if (isnan(f)) snprintf(buf, sizeof buf, "nan");
    else if (isinf(f)) snprintf(buf, sizeof buf, f < 0 ? "-inf" : "inf");
    else
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, f);
            if (strtod(buf, NULL) == f) break;
        }
    dump__scalar("float", buf);
}

/* Recursion is bounded: toml_parse never builds a tree deeper than TOML_MAX_DEPTH. */
static void dump__value(const TomlValue *v)
{
    char buf[32];
    int64_t i;
    bool b;
    double f;
    switch (toml_type(v)) {
    case TOML_TABLE:
        putchar('{');
        for (size_t k = 0; k < toml_table_len(v); k++) {
            if (k) putchar(',');
            dump__string(toml_table_key_at(v, k), toml_table_key_len(v, k));
            putchar(':');
            dump__value(toml_table_value_at(v, k));
        }
        putchar('}');
        break;
    case TOML_ARRAY:
        putchar('[');
        for (size_t k = 0; k < toml_array_len(v); k++) {
            if (k) putchar(',');
            dump__value(toml_array_at(v, k));
        }
        putchar(']');
        break;
    case TOML_STRING:
        printf("{\"type\":\"string\",\"value\":");
        dump__string(toml_as_string(v), toml_string_len(v));
        putchar('}');
        break;
    case TOML_INT:
        toml_as_int(v, &i);
        snprintf(buf, sizeof buf, "%lld", (long long)i);
        dump__scalar("integer", buf);
        break;
    case TOML_FLOAT:
        toml_as_float(v, &f);
        dump__float(f);
        break;
    case TOML_BOOL:
        toml_as_bool(v, &b);
        dump__scalar("bool", b ? "true" : "false");
        break;
    }
}

static char *dump__read(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = gl_malloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n, fp)) > 0;) {
        n += got;
        if (n == cap) buf = gl_realloc(buf, cap *= 2);
    }
    bool bad = ferror(fp);
    fclose(fp);
    if (bad) {
        gl_free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: toml_dump FILE.toml\n");
        return 2;
    }
    size_t len = 0;
    char *src = dump__read(argv[1], &len);
    if (!src) {
        perror(argv[1]);
        return 2;
    }
    TomlError err;
    TomlValue *root = toml_parse(src, len, &err);
    gl_free(src);
    if (!root) {
        fprintf(stderr, "error: %u:%u: %s\n", err.line, err.col, err.message);
        return 1;
    }
    dump__value(root);
    putchar('\n');
    toml_free(root);
    return 0;
}
