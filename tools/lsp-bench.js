// `gradleak lsp` benchmark (not a test): edit-to-diagnostics latency and memory over many edits.
//
//   NODE_PATH=build/node/node_modules node tools/lsp-bench.js [build/gradleak] [--edits 200] [--memory-edits 10000] [--burst 1]
//
// A 5,000-line training file is built from fixtures/examples (whole training scripts repeated), opened,
// and then edited in the middle, the way typing does: one character inserted into a line, then
// removed again, so the file stays the same size. Latency: from sending each didChange to receiving the
// publishDiagnostics of that version (--edits of them; p50/p95/max). Memory: the server's RSS (VmRSS)
// after opening and every 1,000 of --memory-edits further edits; with --burst K the client sends K
// edits and then waits for the diagnostics of the last (the server lints when its input is idle).
'use strict';
const cp = require('child_process');
const fs = require('fs');
const path = require('path');
const rpc = require('vscode-jsonrpc/node');

const args = process.argv.slice(2);
const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : def;
};
const GL = args[0] && !args[0].startsWith('--') ? args[0] : 'build/gradleak';
const N_EDITS = opt('--edits', 200);
const N_MEM = opt('--memory-edits', 10000);
const BURST = opt('--burst', 1);

const root = path.join(__dirname, '..');
const parts = ['fixtures/examples/train.py', 'fixtures/examples/train_bptt.py', 'fixtures/examples/charlm/evaluate.py',
    'fixtures/examples/charlm/model.py'].map((f) => fs.readFileSync(path.join(root, f), 'utf8'));
let text = '';
for (let i = 0; text.split('\n').length < 5000; i++) text += parts[i % parts.length] + '\n';
const lines = text.split('\n');
const nLines = lines.length - 1;
// the edit point: the end of a code line in the middle of the file
let editLine = Math.floor(nLines / 2);
while (!/^\s+\S.*\)$/.test(lines[editLine])) editLine++;
const editChar = lines[editLine].length; // ASCII line: UTF-16 units = bytes

const proc = cp.spawn(GL, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
let want = -1, resolveWant = null, lastCount = 0;
conn.onNotification('textDocument/publishDiagnostics', (p) => {
    if (p.version === want && resolveWant) {
        lastCount = p.diagnostics.length;
        const r = resolveWant;
        resolveWant = null;
        r();
    }
});
conn.listen();
const waitVersion = (v) => new Promise((r) => { want = v; resolveWant = r; });
const rss = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
};
const uri = 'file:///bench/train_5000.py';
let version = 1;
function edit(i) {
    version++;
    // odd: insert a space before the end of the line; even: remove it again
    const ins = i % 2 === 0;
    const change = ins
        ? { range: { start: { line: editLine, character: editChar }, end: { line: editLine, character: editChar } }, text: ' ' }
        : { range: { start: { line: editLine, character: editChar }, end: { line: editLine, character: editChar + 1 } }, text: '' };
    conn.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [change] });
    return version;
}
const pct = (a, q) => a[Math.min(a.length - 1, Math.ceil(q * a.length) - 1)];

(async () => {
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    conn.sendNotification('initialized', {});
    let t = process.hrtime.bigint();
    let w = waitVersion(1);
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
    await w;
    const openMs = Number(process.hrtime.bigint() - t) / 1e6;
    console.log(`file: ${nLines} lines, ${Buffer.byteLength(text)} bytes, ${lastCount} findings; edits at line ${editLine + 1}`);
    console.log(`didOpen -> diagnostics: ${openMs.toFixed(1)} ms`);
    // warm-up
    for (let i = 0; i < 10; i++) { w = waitVersion(version + 1); edit(i); await w; }
    const lat = [];
    for (let i = 0; i < N_EDITS; i++) {
        t = process.hrtime.bigint();
        w = waitVersion(version + 1);
        edit(i);
        await w;
        lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    lat.sort((a, b) => a - b);
    console.log(`didChange -> publishDiagnostics over ${N_EDITS} edits: p50 ${pct(lat, 0.5).toFixed(1)} ms, ` +
        `p95 ${pct(lat, 0.95).toFixed(1)} ms, max ${lat[lat.length - 1].toFixed(1)} ms (${lastCount} findings each)`);
    const rssStart = rss();
    const samples = [rssStart.toFixed(1)];
    const t0 = Date.now();
    for (let i = 0; i < N_MEM; i++) {
        const v = edit(i);
        if ((i + 1) % BURST === 0 || i === N_MEM - 1) {
            w = waitVersion(v);
            await w;
        }
        if ((i + 1) % 1000 === 0) samples.push(rss().toFixed(1));
    }
    const rssEnd = rss();
    console.log(`RSS over ${N_MEM} edits (burst ${BURST}, ${((Date.now() - t0) / 1000).toFixed(1)} s): start ${rssStart.toFixed(1)} MB, ` +
        `end ${rssEnd.toFixed(1)} MB; every 1,000: ${samples.join(' ')}`);
    await conn.sendRequest('shutdown', null);
    conn.sendNotification('exit');
    proc.on('exit', (code) => { console.log(`server exit ${code}`); process.exit(0); });
})();
