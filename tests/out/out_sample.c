/* Writes a sample report in any output format, for tests/out/run.sh (the SARIF validator and JSON
 * parsers check what the formatters produce on awkward input: CRLF, non-ASCII, invalid UTF-8, fixes,
 * related locations, every severity and growth class).
 * Usage: out_sample FORMAT [SRCROOT] */
#include <stdio.h>
#include "out/out.h"

static const char SRC_TRAIN[] =
    "import torch\n"
    "\n"
    "def train(model, data, opt):\n"
    "    total = 0\n"
    "    for x, y in data:\n"
    "        loss = model(x).sum()\n"
    "        total += loss  # \xC3\xA9poque\n"
    "        losses.append(loss)\n"
    "        torch.cuda.empty_cache()\n"
    "        x.cuda()\n"
    "    return total\n";

static const char SRC_EVAL[] = "for b in d:\r\n\th = m(b, \xE4\xB8\xAD h)\r\n\tgc.collect()  # \xFF\r\n";

/* A span over src[start, end) with rows and byte columns as the engine computes them. */
static Span sample_span(const char *src, const char *needle, uint32_t nth)
{
    const char *p = src;
    for (uint32_t i = 0; i <= nth; i++) p = strstr(i ? p + 1 : p, needle);
    uint32_t start = (uint32_t)(p - src), end = start + (uint32_t)strlen(needle);
    Span s = {start, end, 0, 0, 0, 0};
    uint32_t ls = 0, row = 0;
    for (uint32_t i = 0; i <= end; i++) {
        if (i == start) s.row = row, s.col = i - ls;
        if (i == end) s.end_row = row, s.end_col = i - ls;
        if (src[i] == '\n' || (src[i] == '\r' && src[i + 1] != '\n')) row++, ls = i + 1;
    }
    return s;
}

int main(int argc, char **argv)
{
    OutFormat fmt;
    if (argc < 2 || out_format_parse(argv[1], &fmt) != 0) {
        fprintf(stderr, "usage: out_sample {full,concise,json,sarif,github} [SRCROOT]\n");
        return 2;
    }
    Related rel_loop[] = {{sample_span(SRC_TRAIN, "for x, y in data:", 0), "the loop runs once per batch"},
                          {sample_span(SRC_TRAIN, "loss = model(x).sum()", 0), "`loss` carries the graph of this batch"}};
    Edit ed = {sample_span(SRC_TRAIN, "loss  #", 0).start + 4, sample_span(SRC_TRAIN, "loss  #", 0).start + 4, ".item()"};
    Fix fix_item = {"Replace `loss` with `loss.item()`", FIX_UNSAFE, &ed, 1};
    Edit ed2 = {sample_span(SRC_TRAIN, "x.cuda()", 0).start, sample_span(SRC_TRAIN, "x.cuda()", 0).start, "x = "};
    Fix fix_move = {"Assign the result: `x = x.cuda()`", FIX_SAFE, &ed2, 1};
    Diag train[5];
    memset(train, 0, sizeof train);
    train[0] = (Diag){RULE_GL101, SEV_ERROR, GROWTH_DEVICE, sample_span(SRC_TRAIN, "total += loss", 0),
                      "`total` accumulates `loss`, which carries an autograd graph, across iterations: every batch's "
                      "activations stay on the GPU",
                      "Accumulate `loss.item()` instead", rel_loop, 2, &fix_item, NULL, 5};
    train[1] = (Diag){RULE_GL102, SEV_ERROR, GROWTH_DEVICE, sample_span(SRC_TRAIN, "losses.append(loss)", 0),
                      "`losses` keeps every iteration's `loss` and its graph alive", "Append `loss.item()` or "
                      "`loss.detach()`", rel_loop + 1, 1, NULL, NULL, 5};
    train[2] = (Diag){RULE_GL301, SEV_WARNING, GROWTH_NONE, sample_span(SRC_TRAIN, "torch.cuda.empty_cache()", 0),
                      "torch.cuda.empty_cache() runs every step: it synchronises, and cannot lower peak memory", NULL,
                      NULL, 0, NULL, NULL, 5};
    train[3] = (Diag){RULE_GL201, SEV_ERROR, GROWTH_NONE, sample_span(SRC_TRAIN, "x.cuda()", 0),
                      "`x.cuda()` returns a copy; the result is discarded", NULL, NULL, 0, &fix_move, NULL, 0};
    train[4] = (Diag){RULE_GL901, SEV_INFO, GROWTH_NONE, sample_span(SRC_TRAIN, "return", 0),
                      "odd message: 100% \"quoted\", a:b\nsecond line \xFF", NULL, NULL, 0, NULL, NULL, 0};
    Diag eval[2];
    memset(eval, 0, sizeof eval);
    Related rel_h = {sample_span(SRC_EVAL, "h", 1), "`h` is fed back here"};
    eval[0] = (Diag){RULE_GL104, SEV_ERROR, GROWTH_DEVICE, sample_span(SRC_EVAL, "m(b, \xE4\xB8\xAD h)", 0),
                     "The loop feeds `h` back into `m` without torch.no_grad()", "Wrap the loop in `with "
                     "torch.no_grad():`", &rel_h, 1, NULL, NULL, 1};
    eval[1] = (Diag){RULE_GL302, SEV_WARNING, GROWTH_HOST, sample_span(SRC_EVAL, "gc.collect()", 0),
                     "gc.collect() runs every step", NULL, NULL, 0, NULL, NULL, 1};
    OutFile files[] = {
        {"sample/eval loop.py", SRC_EVAL, sizeof SRC_EVAL - 1, eval, 2, NULL, 0},
        {"sample/train.py", SRC_TRAIN, sizeof SRC_TRAIN - 1, train, 5, NULL, 0},
    };
    OutOptions o;
    memset(&o, 0, sizeof o);
    o.show_fix_hints = true;
    o.srcroot = argc > 2 ? argv[2] : NULL;
    return out_write(stdout, fmt, files, 2, &o) == 0 ? 0 : 2;
}
