#!/usr/bin/env python3
"""Score gradleak on a labelled corpus.

usage: tools/corpus-score.py CORPUS_DIR [GRADLEAK_BINARY] [-v]

CORPUS_DIR/labels.tsv: one hazard a line, tab-separated:
    path (relative to CORPUS_DIR)   lines   kind   note
  lines: N, or N-M (inclusive range), or for notebooks cK:N / cK:N-M (K = 1-based index over ALL
  cells, markdown included; N = 1-based row inside that cell's source). Lines starting with # are
  comments. kind is the rule a reader expects (GL101...), informational only.
A finding matches a label when it is in the same file and its row lies in [lo-2, hi+2] (same cell
for notebooks). Recall = labels matched / labels; precision = findings matching some label / findings.
GL901 (unused noqa) is not counted."""
import json, os, subprocess, sys, collections

def parse_lines(s):
    cell = None
    if s.startswith('c') and ':' in s:
        c, s = s[1:].split(':', 1)
        cell = int(c)
    if '-' in s:
        a, b = s.split('-', 1)
        return cell, int(a), int(b)
    return cell, int(s), int(s)

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('-')]
    verbose = '-v' in sys.argv
    root = os.path.abspath(args[0])
    binary = os.path.abspath(args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'build', 'gradleak'))  # it runs in the corpus folder
    labels = []
    for ln, line in enumerate(open(os.path.join(root, 'labels.tsv'))):
        if not line.strip() or line.startswith('#'):
            continue
        parts = line.rstrip('\n').split('\t')
        if ln == 0 and parts[:3] == ['path', 'lines', 'kind']:
            continue  # a header row
        if len(parts) < 3:
            sys.exit(f'labels.tsv:{ln+1}: needs path, lines, kind')
        cell, lo, hi = parse_lines(parts[1])
        labels.append(dict(path=parts[0], cell=cell, lo=lo, hi=hi, kind=parts[2],
                           note=parts[3] if len(parts) > 3 else ''))
        if not os.path.exists(os.path.join(root, parts[0])):
            sys.exit(f'labels.tsv:{ln+1}: no file {parts[0]}')
    env = dict(os.environ)
    pass  # C++: the default headers (the system's LibTorch when installed)
    p = subprocess.run([binary, 'check', '--isolated', '--no-cache', '--output-format', 'json', '--exit-zero', '.'],
                       cwd=root, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1, 2):
        sys.exit(f'gradleak exited {p.returncode}: {p.stderr[-2000:]}')
    findings = [f for f in json.loads(p.stdout or '[]') if f['code'] != 'GL901']
    notes = [l for l in p.stderr.splitlines() if 'not analysed' in l or 'error' in l.lower()]
    def match(f, l):
        fn = os.path.relpath(os.path.join(root, f['filename']), root)
        if fn != l['path']:
            return False
        if l['cell'] is not None and f.get('cell') != l['cell']:
            return False
        r = f['location']['row']
        return l['lo'] - 2 <= r <= l['hi'] + 2
    # doubtful cases (DOUBTS.md, free text): "path:line", "path cK:N", more lines after the path
    import re
    doubts = []
    dpath = os.path.join(root, 'DOUBTS.md')
    if os.path.exists(dpath):
        for line in open(dpath):
            cur = None
            for m in re.finditer(r'([\w./+-]+\.(?:py|ipynb|cpp|cc|h))|(?:c(\d+):)?(\d+)(?:-(\d+))?', line):
                if m.group(1):
                    cur = m.group(1)
                elif cur:  # a line, or a range of lines ("103-107")
                    lo = int(m.group(3))
                    hi = int(m.group(4)) if m.group(4) and 0 <= int(m.group(4)) - lo <= 50 else lo
                    doubts.append(dict(path=cur, cell=int(m.group(2)) if m.group(2) else None, lo=lo, hi=hi))
    def doubtful(f):
        fn = os.path.relpath(os.path.join(root, f['filename']), root)
        for d in doubts:
            if not (fn.endswith(d['path']) or d['path'].endswith(os.path.basename(fn)) and os.path.basename(d['path']) == os.path.basename(fn)):
                continue
            if d['cell'] is not None and f.get('cell') != d['cell']:
                continue
            if d['lo'] - 2 <= f['location']['row'] <= d['hi'] + 2:
                return True
        return False
    ndoubt = 0
    if doubts:
        keep = []
        for f in findings:
            if doubtful(f) and not any(match(f, l) for l in labels):
                ndoubt += 1
            else:
                keep.append(f)
        findings = keep
    found = [any(match(f, l) for f in findings) for l in labels]
    tp = [any(match(f, l) for l in labels) for f in findings]
    nloc = 0
    for dp, dn, fns in os.walk(root):
        for fn in fns:
            if fn.endswith(('.py', '.cpp', '.cc', '.h', '.hpp')):
                nloc += sum(1 for _ in open(os.path.join(dp, fn), errors='replace'))
            elif fn.endswith('.ipynb'):
                try:
                    nb = json.load(open(os.path.join(dp, fn)))
                    for c in nb.get('cells', []):
                        if c.get('cell_type') == 'code':
                            src = c.get('source', '')
                            nloc += len(''.join(src).splitlines()) if isinstance(src, list) else len(src.splitlines())
                except Exception:
                    pass
    nl, nf = len(labels), len(findings)
    r = sum(found) / nl if nl else 0
    pr = sum(tp) / nf if nf else 1
    fp = nf - sum(tp)
    print(f'labels {nl}  found {sum(found)}  recall {r:.3f}')
    print(f'findings {nf}  true {sum(tp)}  false {fp}  precision {pr:.3f}')
    print(f'findings on doubtful lines (not counted): {ndoubt}')
    print(f'lines {nloc}  false per 20k lines {fp * 20000 / max(nloc, 1):.2f}')
    bykind = collections.defaultdict(lambda: [0, 0])
    for l, ok in zip(labels, found):
        bykind[l['kind']][0] += ok; bykind[l['kind']][1] += 1
    print('by kind: ' + ', '.join(f'{k} {a}/{b}' for k, (a, b) in sorted(bykind.items())))
    for n in notes:
        print('note:', n)
    if verbose:
        print('\nMISSED:')
        for l, ok in zip(labels, found):
            if not ok:
                c = f"c{l['cell']}:" if l['cell'] else ''
                print(f"  {l['path']}:{c}{l['lo']}-{l['hi']} {l['kind']} {l['note']}")
        print('\nFALSE:')
        for f, ok in zip(findings, tp):
            if not ok:
                c = f"c{f['cell']}:" if f.get('cell') else ''
                print(f"  {f['filename']}:{c}{f['location']['row']} {f['code']} {f['message'][:150]}")
        print('\nFOUND:')
        for f, ok in zip(findings, tp):
            if ok:
                c = f"c{f['cell']}:" if f.get('cell') else ''
                print(f"  {f['filename']}:{c}{f['location']['row']} {f['code']}")

main()
