// The gradleak language server with notebook documents (LSP 3.17 notebookDocumentSync), driven by
// npm's vscode-jsonrpc with the message sequence VS Code's Jupyter extension sends through
// vscode-languageclient: notebookDocument/didOpen with the cells' text documents (markdown cells
// too), didChange with textContent edits, cells added (structure + didOpen), removed (structure +
// didClose) and moved (structure only), didSave, didClose. Diagnostics are published per cell URI
// with cell-relative positions; a code action on a cell edits that cell. "ok <id>" / "FAIL <id> <why>".
//
//   node tests/lsp/notebook.js GRADLEAK_BINARY
'use strict';
const cp = require('child_process');
const rpc = require('vscode-jsonrpc/node');

const GL = process.argv[2];
let fails = 0;
const ok = (id) => console.log('ok ' + id);
const fail = (id, why) => { console.log('FAIL ' + id + ' ' + why); fails++; };
const check = (id, cond, why) => (cond ? ok(id) : fail(id, why));
const show = (x) => JSON.stringify(x).slice(0, 600);

const proc = cp.spawn(GL, ['lsp'], { stdio: ['pipe', 'pipe', 'pipe'] });
let stderr = '';
proc.stderr.on('data', (d) => { stderr += d; });
const exited = new Promise((res) => proc.on('exit', (code, sig) => res(code === null ? 'signal ' + sig : code)));
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
const pubs = [];
const waiters = new Set();
conn.onNotification('textDocument/publishDiagnostics', (p) => { pubs.push(p); for (const w of waiters) w(); });
conn.onRequest('client/registerCapability', () => null);
conn.listen();

// the latest publish for uri at or after index since, once pred holds (or null after ms)
function waitPub(uri, pred, since, ms = 5000) {
    return new Promise((resolve) => {
        let timer;
        const look = () => {
            for (let i = pubs.length - 1; i >= since; i--) {
                if (pubs[i].uri !== uri) continue;
                if (!pred || pred(pubs[i])) {
                    clearTimeout(timer);
                    waiters.delete(look);
                    resolve(pubs[i]);
                    return true;
                }
                break;
            }
            return false;
        };
        if (look()) return;
        waiters.add(look);
        timer = setTimeout(() => { waiters.delete(look); resolve(null); }, ms);
    });
}
const codes = (p) => (p ? p.diagnostics.map((d) => d.code + '@' + d.range.start.line + ':' + d.range.start.character).join(',') : 'none');

const NB = 'file:///tmp/gradleak-nb-test/train.ipynb';
// VS Code's cell URIs: the notebook's path with a fragment per cell
const cell = (n) => 'vscode-notebook-cell:/tmp/gradleak-nb-test/train.ipynb#W' + n + 'sZmlsZQ%3D%3D';
const TEXT = {
    0: '# Training',
    1: 'import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloader = [(torch.randn(2, 4), torch.randn(2, 1))] * 3',
    2: '%matplotlib inline\ntotal = 0',
    3: 'for x, y in loader:\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n    total += loss',
};
let nbVersion = 0;

(async () => {
    const init = await conn.sendRequest('initialize', {
        processId: process.pid, rootUri: 'file:///tmp', capabilities: {
            textDocument: { publishDiagnostics: { relatedInformation: true, versionSupport: true },
                codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source'] } } } },
            notebookDocument: { synchronization: { dynamicRegistration: true, executionSummarySupport: true } },
        },
    });
    const sync = init.capabilities.notebookDocumentSync;
    check('nb-lsp-1.1 announces notebookDocumentSync', sync && sync.notebookSelector &&
        sync.notebookSelector.some((s) => s.notebook && s.notebook.pattern === '**/*.ipynb'), show(init.capabilities));
    conn.sendNotification('initialized', {});

    // 1. open: a markdown cell, then three Python cells; the hazard spans cells 3 and 4
    let since = pubs.length;
    conn.sendNotification('notebookDocument/didOpen', {
        notebookDocument: { uri: NB, notebookType: 'jupyter-notebook', version: nbVersion, metadata: {},
            cells: [0, 1, 2, 3].map((n) => ({ kind: n === 0 ? 1 : 2, document: cell(n), metadata: {} })) },
        cellTextDocuments: [0, 1, 2, 3].map((n) => ({ uri: cell(n), languageId: n === 0 ? 'markdown' : 'python', version: 1, text: TEXT[n] })),
    });
    let p = await waitPub(cell(3), (x) => x.diagnostics.length > 0, since);
    check('nb-lsp-1.2 open: GL101 in cell 4 at its own line', codes(p) === 'GL101@5:4', codes(p));
    check('nb-lsp-1.3 message names cells', p && /cell 4, line 1/.test(p.diagnostics[0].message), p && p.diagnostics[0].message);
    const p2 = await waitPub(cell(2), null, since);
    check('nb-lsp-1.4 other cells published empty', p2 && p2.diagnostics.length === 0, codes(p2));
    check('nb-lsp-1.5 markdown cell not published', !pubs.slice(since).some((x) => x.uri === cell(0)), 'published for markdown');

    // 2. a code action in the cell: the fix edits that cell
    const acts = await conn.sendRequest('textDocument/codeAction', {
        textDocument: { uri: cell(3) }, range: p.diagnostics[0].range, context: { diagnostics: p.diagnostics, only: ['quickfix'] } });
    const fix = (acts || []).find((a) => /item/.test(a.title));
    const edits = fix && fix.edit && fix.edit.changes && fix.edit.changes[cell(3)];
    check('nb-lsp-2.1 quick fix edits the cell', edits && edits.length === 1 && edits[0].range.start.line === 5 && edits[0].newText === 'loss.item()',
        show(acts));

    const all = await conn.sendRequest('textDocument/codeAction', {
        textDocument: { uri: cell(3) }, range: p.diagnostics[0].range, context: { diagnostics: [], only: ['source.fixAll.gradleak'] } });
    const fa = (all || []).find((a) => a.kind === 'source.fixAll.gradleak');
    const fe = fa && fa.edit && fa.edit.changes && fa.edit.changes[cell(3)];
    check('nb-lsp-2.2 fix-all edits the cell only', fe && fe.length === 1 && /\.item\(\)/.test(fe[0].newText) &&
        Object.keys(fa.edit.changes).length === 1, show(all));

    // 3. edit: the fix typed into cell 4 (textContent) clears it
    since = pubs.length;
    conn.sendNotification('notebookDocument/didChange', {
        notebookDocument: { uri: NB, version: ++nbVersion },
        change: { cells: { textContent: [{ document: { uri: cell(3), version: 2 },
            changes: [{ range: { start: { line: 5, character: 13 }, end: { line: 5, character: 17 } }, rangeLength: 4, text: 'loss.item()' }] }] } },
    });
    p = await waitPub(cell(3), (x) => x.version === 2, since);
    check('nb-lsp-3.1 edited cell is clean', p && p.diagnostics.length === 0, codes(p));

    // 4. add a cell after cell 4 (structure + didOpen): an evaluation loop with a hazard of its own
    since = pubs.length;
    conn.sendNotification('notebookDocument/didChange', {
        notebookDocument: { uri: NB, version: ++nbVersion },
        change: { cells: { structure: { array: { start: 4, deleteCount: 0, cells: [{ kind: 2, document: cell(4), metadata: {} }] },
            didOpen: [{ uri: cell(4), languageId: 'python', version: 1, text: 'x = torch.randn(3)\nx.cuda()\nprint(x)' }] } } },
    });
    p = await waitPub(cell(4), (x) => x.diagnostics.length > 0, since);
    check('nb-lsp-4.1 added cell linted', codes(p) === 'GL201@1:0', codes(p));

    // 5. move the new cell to the top (structure only, as VS Code sends a move): positions stay cell-relative
    since = pubs.length;
    conn.sendNotification('notebookDocument/didChange', {
        notebookDocument: { uri: NB, version: ++nbVersion },
        change: { cells: { structure: { array: { start: 4, deleteCount: 1 } } } },
    });
    conn.sendNotification('notebookDocument/didChange', {
        notebookDocument: { uri: NB, version: ++nbVersion },
        change: { cells: { structure: { array: { start: 1, deleteCount: 0, cells: [{ kind: 2, document: cell(4) }] },
            didOpen: [{ uri: cell(4), languageId: 'python', version: 1, text: 'import torch\nx = torch.randn(3)\nx.cuda()\nprint(x)' }] } } },
    });
    p = await waitPub(cell(4), (x) => x.diagnostics.length > 0 && x.diagnostics[0].range.start.line === 2, since);
    check('nb-lsp-5.1 moved cell keeps cell-relative positions', codes(p) === 'GL201@2:0', codes(p));

    // 6. remove cell 3 (total = 0): cell 4's loop now adds to an undefined name; no crash, published
    since = pubs.length;
    conn.sendNotification('notebookDocument/didChange', {
        notebookDocument: { uri: NB, version: ++nbVersion },
        change: { cells: { structure: { array: { start: 3, deleteCount: 1 }, didClose: [{ uri: cell(2) }] } } },
    });
    p = await waitPub(cell(2), (x) => x.diagnostics.length === 0, since);
    check('nb-lsp-6.1 removed cell cleared', p !== null, 'no empty publish for the removed cell');

    // 7. save, hover on a cell that has a finding, close
    conn.sendNotification('notebookDocument/didSave', { notebookDocument: { uri: NB } });
    const hov = await conn.sendRequest('textDocument/hover', { textDocument: { uri: cell(4) }, position: { line: 2, character: 2 } });
    check('nb-lsp-7.1 hover in a cell', hov && /GL201/.test(hov.contents.value), show(hov));
    since = pubs.length;
    conn.sendNotification('notebookDocument/didClose', { notebookDocument: { uri: NB }, cellTextDocuments: [1, 3, 4].map((n) => ({ uri: cell(n) })) });
    p = await waitPub(cell(4), (x) => x.diagnostics.length === 0, since);
    check('nb-lsp-7.2 close clears the cells', p !== null, 'no clearing publish');

    await conn.sendRequest('shutdown', null);
    conn.sendNotification('exit');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
    check('nb-lsp-7.3 clean exit', code === 0, 'exit ' + code + ' ' + stderr.slice(-400));
    process.exit(fails ? 1 : 0);
})().catch((e) => { fail('nb-lsp-crash', e.stack); process.exit(1); });
