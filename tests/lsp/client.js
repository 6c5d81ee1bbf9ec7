// The gradleak language server against npm's vscode-jsonrpc (the JSON-RPC layer of VS Code's own
// LSP client): lifecycle, push and pull diagnostics, code actions applied back as incremental
// edits, hover, UTF-16 and UTF-8 columns on a line with non-ASCII characters and an emoji, and
// malformed input written raw onto the server's stdin. One line per case: "ok <id>" or
// "FAIL <id> <why>".
//
//   node tests/lsp/client.js GRADLEAK_BINARY
//
// NODE_PATH must let require('vscode-jsonrpc/node') resolve (tests/lsp/run.sh sets it).
'use strict';
const cp = require('child_process');
const rpc = require('vscode-jsonrpc/node');

const GL = process.argv[2];
let fails = 0;
const ok = (id) => console.log('ok ' + id);
const fail = (id, why) => { console.log('FAIL ' + id + ' ' + why); fails++; };
const check = (id, cond, why) => (cond ? ok(id) : fail(id, why));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const show = (x) => JSON.stringify(x).slice(0, 400);

// ---- a server process and a vscode-jsonrpc connection to it ----

function start(label) {
    const proc = cp.spawn(GL, ['lsp'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const s = { proc, label, stderr: '', pubs: [], registrations: [], logged: [], waiters: new Set() };
    proc.stderr.on('data', (d) => { s.stderr += d; });
    proc.stdin.on('error', () => {});
    s.exit = new Promise((res) => proc.on('exit', (code, sig) => res(code === null ? 'signal ' + sig : code)));
    const logger = { error: (m) => s.logged.push(m), warn: (m) => s.logged.push(m), info: () => {}, log: () => {} };
    s.conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin), logger);
    s.conn.onNotification('textDocument/publishDiagnostics', (p) => {
        s.pubs.push(p);
        for (const w of s.waiters) w();
    });
    s.conn.onRequest('client/registerCapability', (p) => { s.registrations.push(p); return null; });
    s.conn.onRequest('workspace/diagnostic/refresh', () => null);
    s.conn.listen();
    // the first publish for uri after index `since` that satisfies pred, or null after ms
    s.waitPub = (uri, pred, since, ms = 5000) => new Promise((resolve) => {
        let timer;
        const look = () => {
            for (let i = since; i < s.pubs.length; i++) {
                const p = s.pubs[i];
                if (p.uri === uri && (!pred || pred(p))) {
                    clearTimeout(timer);
                    s.waiters.delete(look);
                    resolve(p);
                    return true;
                }
            }
            return false;
        };
        if (look()) return;
        s.waiters.add(look);
        timer = setTimeout(() => { s.waiters.delete(look); resolve(null); }, ms);
    });
    s.request = async (method, params) => {
        try {
            return { result: await s.conn.sendRequest(method, params) };
        } catch (e) {
            return { error: e };
        }
    };
    s.notify = (method, params) => s.conn.sendNotification(method, params);
    return s;
}

const CAPS = {
    textDocument: {
        publishDiagnostics: { relatedInformation: true, versionSupport: true },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source'] } }, dataSupport: true },
        hover: { contentFormat: ['markdown', 'plaintext'] },
        synchronization: { didSave: true },
    },
    workspace: { didChangeWatchedFiles: { dynamicRegistration: true } },
};

async function init(s, caps = CAPS) {
    const r = await s.request('initialize', { processId: process.pid, rootUri: 'file:///tmp', capabilities: caps });
    s.notify('initialized', {});
    return r;
}

async function stop(s) {
    await s.request('shutdown', null);
    s.notify('exit');
    const code = await Promise.race([s.exit, sleep(5000).then(() => 'timeout')]);
    if (code === 'timeout') s.proc.kill('SIGKILL');
    s.conn.dispose();
    return code;
}

// ---- documents ----

// GL201 on line 7 after "é😀" (UTF-16: the emoji is 2 units, "é" 1; UTF-8: 4 and 2 bytes);
// GL101 on line 13 (accumulated loss in a validation loop, with the loop as related information).
// Once GL201's fix moves the batch (`x = x.cuda()`), `model` is a model and GL108 reports line 6
// (the model call of the loop on line 5).
const HAZARD = [
    'import torch',
    '',
    '',
    'def train(model, loader):',
    '    for x, y in loader:',
    '        out = model(x)',
    '        note = "é😀"; x.cuda()',
    '',
    '',
    'def validate(loader):',
    '    model = torch.nn.Linear(4, 2)',
    '    total = 0',
    '    for x, y in loader:',
    '        total += torch.nn.functional.mse_loss(model(x), y)',
    '    return total',
    '',
].join('\n');

// Applies LSP TextEdits (UTF-16 positions: JS string indices) to text.
function offsetOf(text, pos) {
    const lines = text.split('\n');
    let off = 0;
    for (let i = 0; i < pos.line && i < lines.length; i++) off += lines[i].length + 1;
    return Math.min(off + pos.character, text.length);
}
function applyEdits(text, edits) {
    const sorted = edits.slice().sort((a, b) => offsetOf(text, b.range.start) - offsetOf(text, a.range.start));
    for (const e of sorted) text = text.slice(0, offsetOf(text, e.range.start)) + e.newText + text.slice(offsetOf(text, e.range.end));
    return text;
}
// The edits as didChange contentChanges: last first, so every range is valid when it is applied.
function asChanges(text, edits) {
    return edits.slice().sort((a, b) => offsetOf(text, b.range.start) - offsetOf(text, a.range.start))
        .map((e) => ({ range: e.range, text: e.newText }));
}
const codes = (p) => (p ? p.diagnostics.map((d) => d.code).join(',') : 'none');

class Doc {
    constructor(s, uri, text) { Object.assign(this, { s, uri, text, version: 1 }); }
    open() {
        const since = this.s.pubs.length;
        this.s.notify('textDocument/didOpen', { textDocument: { uri: this.uri, languageId: 'python', version: 1, text: this.text } });
        return this.s.waitPub(this.uri, (p) => p.version === 1, since);
    }
    // applies edits locally and sends them as one incremental didChange; resolves with the publish
    change(edits) {
        const since = this.s.pubs.length;
        const changes = asChanges(this.text, edits);
        this.text = applyEdits(this.text, edits);
        this.version++;
        const v = this.version;
        this.s.notify('textDocument/didChange', { textDocument: { uri: this.uri, version: v }, contentChanges: changes });
        return this.s.waitPub(this.uri, (p) => p.version === v, since);
    }
    actions(diag, only) {
        return this.s.request('textDocument/codeAction', {
            textDocument: { uri: this.uri }, range: diag ? diag.range : { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
            context: { diagnostics: diag ? [diag] : [], only },
        });
    }
}

// ---- cases ----

async function lifecycle() {
    const s = start('lifecycle');
    let r = await s.request('textDocument/hover', { textDocument: { uri: 'file:///x.py' }, position: { line: 0, character: 0 } });
    check('lsp-1.1 request before initialize is -32002', r.error && r.error.code === -32002, show(r));
    const since = s.pubs.length;
    s.notify('textDocument/didOpen', { textDocument: { uri: 'file:///early.py', languageId: 'python', version: 1, text: HAZARD } });
    r = await init(s);
    const caps = r.result && r.result.capabilities;
    check('lsp-1.2 initialize: utf-16, incremental sync, code actions, hover, no pull',
        caps && caps.positionEncoding === 'utf-16' && caps.textDocumentSync.change === 2 && caps.textDocumentSync.openClose === true &&
        caps.codeActionProvider.codeActionKinds.includes('quickfix') &&
        caps.codeActionProvider.codeActionKinds.includes('source.fixAll.gradleak') && caps.hoverProvider === true &&
        !caps.diagnosticProvider && r.result.serverInfo.name === 'gradleak', show(r));
    const early = await s.waitPub('file:///early.py', null, since, 500);
    check('lsp-1.3 notification before initialize is dropped', early === null, show(early));
    r = await s.request('initialize', { processId: null, rootUri: null, capabilities: {} });
    check('lsp-1.4 second initialize is -32600', r.error && r.error.code === -32600, show(r));
    r = await s.request('gradleak/nothing', {});
    check('lsp-1.5 unknown request is -32601', r.error && r.error.code === -32601, show(r));
    s.notify('gradleak/unknownNotification', { x: 1 });
    s.notify('$/cancelRequest', { id: 99 });
    r = await s.request('textDocument/hover', { textDocument: { uri: 'file:///early.py' }, position: { line: 6, character: 30 } });
    check('lsp-1.6 unknown notifications ignored; the dropped didOpen left no document', !r.error && r.result === null, show(r));
    await sleep(100);
    const reg = s.registrations[0];
    check('lsp-1.7 watches pyproject.toml/gradleak.toml when the client allows it',
        reg && reg.registrations[0].method === 'workspace/didChangeWatchedFiles' &&
        JSON.stringify(reg).includes('pyproject.toml') && JSON.stringify(reg).includes('gradleak.toml'), show(s.registrations));
    r = await s.request('shutdown', null);
    check('lsp-1.8 shutdown answers null', !r.error && r.result === null, show(r));
    r = await s.request('textDocument/hover', { textDocument: { uri: 'file:///x.py' }, position: { line: 0, character: 0 } });
    check('lsp-1.9 request after shutdown is -32600', r.error && r.error.code === -32600, show(r));
    s.notify('exit');
    const code = await Promise.race([s.exit, sleep(5000).then(() => 'timeout')]);
    check('lsp-1.10 exit after shutdown: exit code 0', code === 0, String(code) + ' ' + s.stderr);
    s.conn.dispose();

    const t = start('no-shutdown');
    await init(t);
    t.notify('exit');
    const c2 = await Promise.race([t.exit, sleep(5000).then(() => 'timeout')]);
    check('lsp-1.11 exit without shutdown: exit code 1', c2 === 1, String(c2));
    t.conn.dispose();

    const u = start('eof');
    await init(u);
    await sleep(100);
    u.conn.dispose();
    u.proc.stdin.end();
    const c3 = await Promise.race([u.exit, sleep(5000).then(() => 'timeout')]);
    check('lsp-1.12 end of input without shutdown: exit code 1', c3 === 1, String(c3));
}

async function diagnosticsAndActions() {
    const s = start('diagnostics');
    await init(s);
    const doc = new Doc(s, 'file:///tmp/gradleak-lsp/train.py', HAZARD);
    let p = await doc.open();
    check('lsp-2.1 didOpen publishes GL201 and GL101 with the version', p && codes(p) === 'GL201,GL101' && p.version === 1, show(p));
    if (!p) return stop(s);
    const g201 = p.diagnostics.find((d) => d.code === 'GL201');
    const g101 = p.diagnostics.find((d) => d.code === 'GL101');
    const line6 = HAZARD.split('\n')[6];
    check('lsp-2.2 code, codeDescription, severity, source',
        g201.codeDescription.href.endsWith('GL201') && g201.severity === 1 && g201.source === 'gradleak' && g201.message.length > 10, show(g201));
    check('lsp-2.3 UTF-16 columns after "é😀" (JS string indices)',
        g201.range.start.line === 6 && g201.range.start.character === line6.indexOf('x.cuda()') &&
        g201.range.end.character === line6.indexOf('x.cuda()') + 'x.cuda()'.length, show(g201.range) + ' want ' + line6.indexOf('x.cuda()'));
    check('lsp-2.4 relatedInformation carries the dataflow path (the loop)',
        g101.relatedInformation && g101.relatedInformation.length > 0 && g101.relatedInformation[0].location.uri === doc.uri &&
        g101.relatedInformation.some((r) => r.location.range.start.line === 12), show(g101.relatedInformation));
    check('lsp-2.5 the fix travels in data', g201.data && g201.data.fix && g201.data.fix.applicability === 'safe' &&
        g201.data.fix.edits.length === 1, show(g201.data));

    // hover
    let r = await s.request('textDocument/hover', { textDocument: { uri: doc.uri }, position: g201.range.start });
    const hv = r.result && r.result.contents && r.result.contents.value;
    check('lsp-2.6 hover on a diagnostic shows the rule doc', hv && hv.includes('GL201') && hv.includes('## What it does') &&
        r.result.contents.kind === 'markdown', show(r));
    r = await s.request('textDocument/hover', { textDocument: { uri: doc.uri }, position: { line: 0, character: 2 } });
    check('lsp-2.7 hover away from diagnostics is null', !r.error && r.result === null, show(r));

    // the rule's fix, applied back as an incremental change
    r = await doc.actions(g201, ['quickfix']);
    const fix = r.result && r.result.find((a) => a.kind === 'quickfix' && a.title.startsWith('GL201:'));
    check('lsp-2.8 quick fix for GL201 with a workspace edit', fix && fix.isPreferred && fix.edit.changes[doc.uri].length === 1 &&
        fix.diagnostics[0].code === 'GL201', show(r));
    const noqa201 = r.result && r.result.find((a) => a.title === 'Disable GL201 for this line');
    check('lsp-2.9 "Disable GL201 for this line" is offered', !!noqa201, show(r));
    if (fix) {
        p = await doc.change(fix.edit.changes[doc.uri]);
        check('lsp-2.10 applying the fix clears GL201 (the moved batch makes model a model: GL108 on its loop)',
            p && codes(p) === 'GL108,GL101' && doc.text.includes('x = x.cuda()'), show(p) + ' ' + doc.text);
    }
    // "Disable for this line"
    r = await doc.actions(p.diagnostics.find((d) => d.code === 'GL101'), ['quickfix']);
    const noqa = r.result && r.result.find((a) => a.title === 'Disable GL101 for this line');
    check('lsp-2.11 noqa action for GL101', !!noqa, show(r));
    if (noqa) {
        p = await doc.change(noqa.edit.changes[doc.uri]);
        check('lsp-2.12 the noqa silences GL101 (and is not unused)', p && codes(p) === 'GL108' &&
            doc.text.includes('total += torch.nn.functional.mse_loss(model(x), y)  # noqa: GL101'), show(p) + '\n' + doc.text);
    }
    // a noqa for another linter on the line: merged
    const merge = new Doc(s, 'file:///tmp/gradleak-lsp/merge.py',
        'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        x.cuda()  # noqa: F401\n');
    p = await merge.open();
    r = await merge.actions(p && p.diagnostics[0], ['quickfix']);
    const mq = r.result && r.result.find((a) => a.title === 'Disable GL201 for this line');
    if (mq) p = await merge.change(mq.edit.changes[merge.uri]);
    check('lsp-2.13 noqa merges into an existing "# noqa: F401"', mq && p && codes(p) === '' &&
        merge.text.includes('x.cuda()  # noqa: F401, GL201'), show(r) + '\n' + merge.text);

    // fix-all
    const many = new Doc(s, 'file:///tmp/gradleak-lsp/many.py',
        'import torch\n\n\ndef f(loader, model):\n    for x, y in loader:\n        x.cuda()\n        y.cuda()\n' +
        '        loss = model(x).sum()\n        loss.backward(retain_variables=True)\n');
    p = await many.open();
    r = await many.actions(null, ['source.fixAll.gradleak']);
    const all = r.result && r.result.find((a) => a.kind === 'source.fixAll.gradleak');
    check('lsp-2.14 fix-all source action (only: source.fixAll.gradleak)', all && r.result.every((a) => a.kind === 'source.fixAll.gradleak'),
        show(r));
    if (all) p = await many.change(all.edit.changes[many.uri]);
    {
        // the same result as `gradleak check --fix` on the same text (one fix engine for both)
        const fs = require('fs');
        const os = require('os');
        const path = require('path');
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gradleak-lsp-fix-'));
        const f = path.join(dir, 'many.py');
        const before = 'import torch\n\n\ndef f(loader, model):\n    for x, y in loader:\n        x.cuda()\n        y.cuda()\n' +
            '        loss = model(x).sum()\n        loss.backward(retain_variables=True)\n';
        fs.writeFileSync(f, before);
        cp.spawnSync(GL, ['check', '--fix', '--exit-zero', '--isolated', f]);
        const cli = fs.readFileSync(f, 'utf8');
        fs.rmSync(dir, { recursive: true, force: true });
        check('lsp-2.15a fix-all gives what `check --fix` writes', cli === many.text && cli !== before, JSON.stringify(cli) + ' vs ' + JSON.stringify(many.text));
    }
    check('lsp-2.15 fix-all leaves no fixable finding', p && p.diagnostics.every((d) => !(d.data && d.data.fix && d.data.fix.applicability === 'safe')) &&
        many.text.includes('x = x.cuda()') && many.text.includes('y = y.cuda()') && many.text.includes('retain_graph=True'),
    show(p) + '\n' + many.text);

    // several incremental changes in one notification, then a full replacement
    const inc = new Doc(s, 'file:///tmp/gradleak-lsp/inc.py', 'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        pass\n');
    p = await inc.open();
    check('lsp-2.16 clean file: empty diagnostics', p && p.diagnostics.length === 0, show(p));
    p = await inc.change([
        { range: { start: { line: 5, character: 8 }, end: { line: 5, character: 12 } }, newText: 's = "ü🎉🎉"; y.cpu()' },
        { range: { start: { line: 4, character: 0 }, end: { line: 4, character: 0 } }, newText: '    # añadido\n' },
    ]);
    const l6 = inc.text.split('\n')[6];
    check('lsp-2.17 two ranged changes in one didChange; UTF-16 column after two emoji',
        p && codes(p) === 'GL201' && p.diagnostics[0].range.start.line === 6 && p.diagnostics[0].range.start.character === l6.indexOf('y.cpu()'),
        show(p) + ' want 6:' + l6.indexOf('y.cpu()'));
    let since = s.pubs.length;
    s.notify('textDocument/didChange', { textDocument: { uri: inc.uri, version: 10 }, contentChanges: [{ text: 'x = 1\n' }] });
    p = await s.waitPub(inc.uri, (q) => q.version === 10, since);
    check('lsp-2.18 full-text change', p && p.diagnostics.length === 0, show(p));

    // didSave of a Python file and a didChange for an unknown document are harmless
    s.notify('textDocument/didSave', { textDocument: { uri: doc.uri } });
    s.notify('textDocument/didChange', { textDocument: { uri: 'file:///nope.py', version: 3 }, contentChanges: [{ text: 'x' }] });
    since = s.pubs.length;
    s.notify('textDocument/didClose', { textDocument: { uri: merge.uri } });
    p = await s.waitPub(merge.uri, null, since);
    check('lsp-2.19 didClose clears the diagnostics', p && p.diagnostics.length === 0, show(p));
    r = await s.request('textDocument/codeAction', { textDocument: { uri: merge.uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
    check('lsp-2.20 a closed document has no actions', r.result && r.result.length === 0, show(r));
    const code = await stop(s);
    check('lsp-2.21 clean exit', code === 0, String(code) + ' ' + s.stderr);
}

async function utf8Negotiated() {
    const s = start('utf8');
    const caps = JSON.parse(JSON.stringify(CAPS));
    caps.general = { positionEncodings: ['utf-8', 'utf-16'] };
    const r = await init(s, caps);
    check('lsp-3.1 utf-8 negotiated when offered', r.result && r.result.capabilities.positionEncoding === 'utf-8', show(r));
    const doc = new Doc(s, 'file:///tmp/gradleak-lsp/u8.py', HAZARD);
    const p = await doc.open();
    const line6 = HAZARD.split('\n')[6];
    const want = Buffer.byteLength(line6.slice(0, line6.indexOf('x.cuda()')));
    const g = p && p.diagnostics.find((d) => d.code === 'GL201');
    check('lsp-3.2 UTF-8 columns are bytes', g && g.range.start.character === want, show(g) + ' want ' + want);
    await stop(s);
}

async function pullDiagnostics() {
    const s = start('pull');
    const caps = JSON.parse(JSON.stringify(CAPS));
    caps.textDocument.diagnostic = { dynamicRegistration: false };
    const r = await init(s, caps);
    check('lsp-4.1 diagnosticProvider advertised when the client pulls', r.result && r.result.capabilities.diagnosticProvider &&
        r.result.capabilities.diagnosticProvider.identifier === 'gradleak', show(r));
    const doc = new Doc(s, 'file:///tmp/gradleak-lsp/pull.py', HAZARD);
    const pushed = await doc.open().then(() => null, () => null);
    await sleep(300);
    check('lsp-4.2 no push when the client pulls', s.pubs.length === 0 && pushed === null, show(s.pubs));
    let d = await s.request('textDocument/diagnostic', { textDocument: { uri: doc.uri } });
    check('lsp-4.3 pull: full report', d.result && d.result.kind === 'full' && d.result.items.map((x) => x.code).join(',') === 'GL201,GL101',
        show(d));
    const rid = d.result && d.result.resultId;
    d = await s.request('textDocument/diagnostic', { textDocument: { uri: doc.uri }, previousResultId: rid });
    check('lsp-4.4 pull again, nothing changed: unchanged', d.result && d.result.kind === 'unchanged' && d.result.resultId === rid, show(d));
    s.notify('textDocument/didChange', { textDocument: { uri: doc.uri, version: 2 }, contentChanges: [{ text: 'x = 1\n' }] });
    d = await s.request('textDocument/diagnostic', { textDocument: { uri: doc.uri }, previousResultId: rid });
    check('lsp-4.5 pull after a change: a new full report', d.result && d.result.kind === 'full' && d.result.items.length === 0 &&
        d.result.resultId !== rid, show(d));
    await stop(s);
}

// The project's configuration: read for each document's folder, reloaded when a configuration file
// changes (workspace/didChangeWatchedFiles, or didSave of it in the editor).
async function configuration() {
    const fs = require('fs');
    const os = require('os');
    const path = require('path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gradleak-lsp-cfg-'));
    const cfgFile = path.join(dir, 'gradleak.toml');
    fs.writeFileSync(cfgFile, 'ignore = ["GL201"]\n');
    fs.mkdirSync(path.join(dir, 'gen'));
    const s = start('config');
    const messages = [];
    s.conn.onNotification('window/showMessage', (p) => messages.push(p));
    await init(s);
    const doc = new Doc(s, 'file://' + path.join(dir, 'train.py'), HAZARD);
    let p = await doc.open();
    check('lsp-6.1 gradleak.toml in the folder applies (ignore GL201)', p && codes(p) === 'GL101', show(p));
    fs.writeFileSync(cfgFile, 'select = ["GL2"]\n');
    let since = s.pubs.length;
    s.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: 'file://' + cfgFile, type: 2 }] });
    p = await s.waitPub(doc.uri, null, since);
    check('lsp-6.2 didChangeWatchedFiles reloads it (select GL2)', p && codes(p) === 'GL201', show(p));
    fs.writeFileSync(cfgFile, 'select = ["GL2"\nbogus = 1\n');
    since = s.pubs.length;
    s.notify('textDocument/didSave', { textDocument: { uri: 'file://' + cfgFile } });
    p = await s.waitPub(doc.uri, null, since);
    await sleep(100);
    check('lsp-6.3 a broken configuration: shown to the user, defaults used', p && codes(p) === 'GL201,GL101' &&
        messages.length === 1 && messages[0].type === 1 && messages[0].message.includes('gradleak.toml:'), show(p) + ' ' + show(messages));
    fs.writeFileSync(cfgFile, 'exclude = ["gen"]\n');
    since = s.pubs.length;
    s.notify('textDocument/didSave', { textDocument: { uri: 'file://' + cfgFile } });
    p = await s.waitPub(doc.uri, null, since);
    const gen = new Doc(s, 'file://' + path.join(dir, 'gen', 'train.py'), HAZARD);
    const pg = await gen.open();
    check('lsp-6.4 didSave of gradleak.toml reloads it; excluded files get no diagnostics', p && codes(p) === 'GL201,GL101' &&
        pg && pg.diagnostics.length === 0, show(p) + ' ' + show(pg));
    await stop(s);
    fs.rmSync(dir, { recursive: true, force: true });
}

// Raw bytes onto the server's stdin; vscode-jsonrpc's reader parses what comes back.
async function malformed() {
    const proc = cp.spawn(GL, ['lsp'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const exit = new Promise((res) => proc.on('exit', (code, sig) => res(code === null ? 'signal ' + sig : code)));
    const got = [];
    const waiters = new Set();
    const reader = new rpc.StreamMessageReader(proc.stdout);
    reader.listen((m) => { got.push(m); for (const w of waiters) w(); });
    const raw = (s) => proc.stdin.write(s);
    const frame = (body) => raw('Content-Length: ' + Buffer.byteLength(body) + '\r\n\r\n' + body);
    // the next message after index `since` matching pred
    const next = (pred, since, ms = 5000) => new Promise((resolve) => {
        let timer;
        const look = () => {
            for (let i = since; i < got.length; i++) {
                if (pred(got[i])) { clearTimeout(timer); waiters.delete(look); resolve(got[i]); return true; }
            }
            return false;
        };
        if (look()) return;
        waiters.add(look);
        timer = setTimeout(() => { waiters.delete(look); resolve(null); }, ms);
    });
    const ask = async (id, body, write = frame) => {
        const since = got.length;
        write(body);
        return next((m) => m.id === id, since);
    };
    const askNull = async (write) => {
        const since = got.length;
        write();
        return next((m) => m.id === null && m.error, since);
    };
    let m = await askNull(() => frame('{bad json'));
    check('lsp-5.1 invalid JSON: -32700 with id null', m && m.error.code === -32700, show(m));
    m = await askNull(() => frame('[{"jsonrpc":"2.0","id":1,"method":"initialize"}]'));
    check('lsp-5.2 a batch (array): -32600', m && m.error.code === -32600, show(m));
    m = await ask(7, '{"jsonrpc":"2.0","id":7,"method":5}');
    check('lsp-5.3 method of the wrong type: -32600 with the id', m && m.error && m.error.code === -32600, show(m));
    m = await askNull(() => frame('{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}'));
    check('lsp-5.4 id of the wrong type: -32600 with id null', m && m.error.code === -32600, show(m));
    m = await ask(8, '{"id":8,"method":"initialize","params":{}}');
    check('lsp-5.5 no "jsonrpc": "2.0": -32600', m && m.error && m.error.code === -32600, show(m));
    m = await ask(9, '{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{}}');
    check('lsp-5.6 request before initialize: -32002', m && m.error && m.error.code === -32002, show(m));
    m = await ask(10, '{"jsonrpc":"2.0","id":10,"method":"initialize","params":"x"}');
    check('lsp-5.7 params not an object: -32602', m && m.error && m.error.code === -32602, show(m));
    m = await ask(11, JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'initialize', params: { capabilities: { general: 5, textDocument: [] } } }));
    check('lsp-5.8 initialize with capabilities of the wrong types still initializes', m && m.result &&
        m.result.capabilities.positionEncoding === 'utf-16', show(m));
    frame('{"jsonrpc":"2.0","method":"initialized","params":{}}');
    m = await ask(12, JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'textDocument/codeAction', params: { textDocument: { uri: 'file:///a.py' } } }));
    check('lsp-5.9 codeAction without a range: -32602', m && m.error && m.error.code === -32602, show(m));
    m = await ask(13, JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'textDocument/hover', params: { textDocument: { uri: 'file:///a.py' }, position: { line: 'a', character: -1 } } }));
    check('lsp-5.10 hover with a malformed position: -32602', m && m.error && m.error.code === -32602, show(m));
    frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: 'file:///b.py', text: 5 } } }));
    frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: 'file:///c.py', languageId: 'python', version: 1, text: HAZARD } } }));
    frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri: 'file:///c.py', version: 2 }, contentChanges: [{ range: { start: { line: 'x' } }, text: 'zzz' }] } }));
    frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri: 'file:///c.py', version: 3 }, contentChanges: [{ range: { start: { line: 99999, character: 99999 }, end: { line: 0, character: 0 } }, text: '' }] } }));
    m = await ask(14, JSON.stringify({ jsonrpc: '2.0', id: 14, method: 'textDocument/diagnostic', params: { textDocument: { uri: 'file:///c.py' } } }));
    check('lsp-5.11 malformed notifications are dropped; an out-of-range edit is clamped (the server keeps serving)',
        m && m.result && m.result.kind === 'full' && !got.some((x) => x.id === null && x.error && x.error.code !== -32700 && x.error.code !== -32600),
        show(m));
    // the short body is recognised when the next message's header arrives inside it
    let since = got.length;
    raw('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0"}');
    const r15 = await ask(15, '{"jsonrpc":"2.0","id":15,"method":"gradleak/ping"}');
    m = await next((x) => x.id === null && x.error, since);
    check('lsp-5.12 Content-Length larger than the body: an error, then the next message is served',
        m && m.error.code === -32700 && r15 && r15.error && r15.error.code === -32601, show(m) + ' ' + show(r15));
    m = await askNull(() => raw('Content-Length: 99999999999999\r\n\r\n'));
    const r16 = await ask(16, '{"jsonrpc":"2.0","id":16,"method":"gradleak/ping"}');
    check('lsp-5.13 absurd Content-Length: an error, then the next message is served',
        m && /over the limit/.test(m.error.message) && r16 && r16.error.code === -32601, show(m) + ' ' + show(r16));
    m = await askNull(() => raw('Content-Length: twelve\r\n\r\n{}'));
    const r17 = await ask(17, '{"jsonrpc":"2.0","id":17,"method":"gradleak/ping"}');
    check('lsp-5.14 non-numeric Content-Length', m && /invalid Content-Length/.test(m.error.message) && r17 && r17.error.code === -32601,
        show(m) + ' ' + show(r17));
    m = await askNull(() => frame('['.repeat(200000)));
    const r18 = await ask(18, '{"jsonrpc":"2.0","id":18,"method":"gradleak/ping"}');
    check('lsp-5.15 200,000 nested brackets: parse error, no crash', m && m.error.code === -32700 && r18 && r18.error.code === -32601,
        show(m) + ' ' + show(r18));
    m = await ask(19, '{"jsonrpc":"2.0","id":19,"method":"shutdown"}');
    frame('{"jsonrpc":"2.0","method":"exit"}');
    const code = await Promise.race([exit, sleep(5000).then(() => 'timeout')]);
    check('lsp-5.16 still alive at the end: shutdown, exit 0', m && m.result === null && code === 0, show(m) + ' exit ' + code + ' ' + stderr.slice(-300));
    reader.dispose();
}

(async () => {
    for (const t of [lifecycle, diagnosticsAndActions, utf8Negotiated, pullDiagnostics, configuration, malformed]) {
        try {
            await t();
        } catch (e) {
            fail('lsp-' + t.name, 'threw: ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e));
        }
    }
    process.exit(fails ? 1 : 0);
})();
