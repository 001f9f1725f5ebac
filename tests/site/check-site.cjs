#!/usr/bin/env node
// check-site — the site `pkbench publish` wrote, as a reader's browser shows it. Starts Debian's
// headless Chromium with the DevTools protocol on a pipe (no port, no network), opens the index
// from file://, follows every link to another page of the site, and on each page reads the DOM:
//   - every table has a head and at least one row, and no row is empty;
//   - every image has loaded (complete, with a width and a height), and the kinds of page
//     --figures names show figures;
//   - no <script>, no on* handler, no stylesheet or image from anywhere but the site;
//   - every link inside the site points at a file that exists, every #anchor at an id;
//   - nothing on the console: no error logged, no exception, no resource that failed to load,
//     no Content-Security-Policy violation;
// then keeps a screenshot of each kind of page (index, study, cross-host, history) in OUT: the
// first page of its kind, or the one that shows the most figures.
//
// Usage: check-site.cjs SITE OUT [--chromium PATH] [--expect-studies N] [--figures KINDS]
//        [--expect-fail]
// KINDS: comma-separated page kinds of which at least one page must show a figure (default:
// study), so a site whose figures all went missing cannot pass.
// --expect-fail inverts the verdict: the site given is broken on purpose and must be caught.
// Exit status: 0 every check passed (or, with --expect-fail, at least one failed); 1 otherwise;
// 2 bad usage or the browser could not be driven.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const url = require('node:url');
const { spawn } = require('node:child_process');

function usage(msg) {
    process.stderr.write(`check-site: ${msg}\nusage: check-site.cjs SITE OUT [--chromium PATH] ` +
        `[--expect-studies N] [--figures KINDS] [--expect-fail]\n`);
    process.exit(2);
}

function parseArgs(argv) {
    const a = { chromium: '/usr/bin/chromium', expectStudies: -1, figures: ['study'],
                expectFail: false, pos: [] };
    for (let i = 0; i < argv.length; i++) {
        const v = argv[i];
        const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${v} needs a value`));
        if (v === '--chromium') a.chromium = next();
        else if (v === '--expect-studies') a.expectStudies = Number(next());
        else if (v === '--figures') a.figures = next().split(',').filter(Boolean);
        else if (v === '--expect-fail') a.expectFail = true;
        else if (v === '--help') { process.stdout.write('usage: check-site.cjs SITE OUT ...\n'); process.exit(0); }
        else if (v.startsWith('--')) usage(`unknown option '${v}'`);
        else a.pos.push(v);
    }
    if (a.pos.length !== 2) usage('needs SITE and OUT');
    if (!Number.isInteger(a.expectStudies)) usage('--expect-studies needs a whole number');
    return a;
}

// ---- the DevTools protocol over --remote-debugging-pipe (fd 3: to the browser, fd 4: from it) --

class Browser {
    constructor(chromium, profile) {
        const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
            '--no-first-run', '--disable-background-networking', '--disable-component-update',
            '--disable-sync', '--disable-extensions', '--disable-default-apps',
            '--hide-scrollbars', '--mute-audio', '--remote-debugging-pipe',
            `--user-data-dir=${profile}`, 'about:blank'];
        this.proc = spawn(chromium, flags, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
        this.stderr = '';
        this.proc.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
        this.proc.on('error', (e) => this.fail(`cannot start ${chromium}: ${e.message}`));
        this.proc.on('exit', (code, sig) => {
            if (!this.closing) this.fail(`the browser exited (${sig || code}) ${this.stderr}`);
        });
        this.nextId = 1;
        this.pending = new Map();
        this.listeners = [];
        this.inbox = Buffer.alloc(0);
        this.proc.stdio[4].on('data', (d) => this.receive(d));
    }
    fail(msg) {
        for (const { reject } of this.pending.values()) reject(new Error(msg));
        this.pending.clear();
        this.dead = msg;
    }
    receive(chunk) {
        this.inbox = Buffer.concat([this.inbox, chunk]);
        for (let end; (end = this.inbox.indexOf(0)) >= 0;) {
            const msg = JSON.parse(this.inbox.subarray(0, end).toString('utf8'));
            this.inbox = this.inbox.subarray(end + 1);
            if (msg.id !== undefined && this.pending.has(msg.id)) {
                const { resolve, reject, method } = this.pending.get(msg.id);
                this.pending.delete(msg.id);
                if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
                else resolve(msg.result);
            } else if (msg.method) {
                for (const l of this.listeners) l(msg);
            }
        }
    }
    send(method, params = {}, sessionId = undefined, timeoutMs = 30000) {
        if (this.dead) return Promise.reject(new Error(this.dead));
        const id = this.nextId++;
        const msg = { id, method, params };
        if (sessionId) msg.sessionId = sessionId;
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.pending.delete(id);
                reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`));
            }, timeoutMs);
            this.pending.set(id, {
                method,
                resolve: (r) => { clearTimeout(timer); resolve(r); },
                reject: (e) => { clearTimeout(timer); reject(e); },
            });
            this.proc.stdio[3].write(JSON.stringify(msg) + '\0');
        });
    }
    waitFor(pred, what, timeoutMs = 30000) {
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.listeners = this.listeners.filter((l) => l !== listener);
                reject(new Error(`no ${what} in ${timeoutMs / 1000} s`));
            }, timeoutMs);
            const listener = (msg) => {
                if (!pred(msg)) return;
                clearTimeout(timer);
                this.listeners = this.listeners.filter((l) => l !== listener);
                resolve(msg);
            };
            this.listeners.push(listener);
        });
    }
    async close() {
        this.closing = true;
        try { await this.send('Browser.close', {}, undefined, 5000); } catch (e) { /* exiting */ }
        const exited = new Promise((r) => this.proc.once('exit', r));
        const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
        if (this.proc.exitCode === null && this.proc.signalCode === null) await exited;
        clearTimeout(timer);
    }
}

// ---- what a page shows ------------------------------------------------------------------------

// Runs in the page; returns what the checks need, by value.
const READ_DOM = `(() => {
    const text = (e) => (e ? e.textContent || '' : '').trim();
    const tables = [...document.querySelectorAll('table')].map((t) => {
        const rows = [...t.querySelectorAll('tbody tr')];
        return { head: t.querySelectorAll('thead th').length, rows: rows.length,
                 empty: rows.filter((r) => [...r.cells].every((c) => text(c) === '')).length,
                 first: text(t.querySelector('th')).slice(0, 40) };
    });
    const images = [...document.images].map((im) => ({ src: im.currentSrc || im.src,
        ok: im.complete && im.naturalWidth > 0 && im.naturalHeight > 0 }));
    const handlers = [];
    for (const e of document.querySelectorAll('*'))
        for (const at of e.attributes)
            if (/^on/i.test(at.name)) handlers.push(e.tagName.toLowerCase() + ' ' + at.name);
    return {
        title: document.title, h1: text(document.querySelector('h1')).slice(0, 100), tables, images,
        figures: document.querySelectorAll('figure img').length,
        scripts: document.querySelectorAll('script').length, handlers,
        embeds: document.querySelectorAll('iframe, frame, object, embed, applet').length,
        resources: [...document.querySelectorAll('[src], link[href]')].map((e) => e.src || e.href),
        links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
        ids: [...document.querySelectorAll('[id]')].map((e) => e.id),
    };
})()`;

function kindOf(site, file) {
    const rel = path.relative(site, file).split(path.sep);
    if (rel.length === 1 && rel[0] === 'index.html') return 'index';
    return ['studies', 'cross-host', 'history'].includes(rel[0])
        ? (rel[0] === 'studies' ? 'study' : rel[0]) : 'other';
}

// One console event as a line, or null when it is not a failure.
function describe(msg, requests) {
    const p = msg.params || {};
    switch (msg.method) {
    case 'Network.requestWillBeSent':
        requests.set(p.requestId, p.request.url);
        return null;
    case 'Network.loadingFailed':
        return `failed to load ${requests.get(p.requestId) || '?'}: ${p.errorText}` +
            (p.blockedReason ? ` (blocked: ${p.blockedReason})` : '');
    case 'Runtime.consoleAPICalled':
        if (!['error', 'assert'].includes(p.type)) return null;
        return `console.${p.type}: ${(p.args || []).map((x) => x.value ?? x.description).join(' ')}`;
    case 'Runtime.exceptionThrown':
        return `exception: ${p.exceptionDetails.text} ${p.exceptionDetails.exception?.description || ''}`;
    case 'Log.entryAdded':
        return p.entry.level === 'error' ? `${p.entry.source}: ${p.entry.text} ${p.entry.url || ''}` : null;
    default:
        return null;
    }
}

// The problems of one page, from what it showed.
function judge(a, site, file, kind, dom, events) {
    const problems = [...events];
    const siteUrl = url.pathToFileURL(site).href + '/';
    if (!dom.title) problems.push('no <title>');
    if (!dom.h1) problems.push('no <h1>');
    if (dom.tables.length === 0) problems.push('no table');
    dom.tables.forEach((t, i) => {
        if (t.head === 0) problems.push(`table ${i + 1} has no head`);
        if (t.rows === 0) problems.push(`table ${i + 1} ("${t.first}") has no row`);
        if (t.empty > 0) problems.push(`table ${i + 1} ("${t.first}") has ${t.empty} empty rows`);
    });
    for (const im of dom.images) if (!im.ok) problems.push(`image not loaded: ${im.src}`);
    if (dom.scripts > 0) problems.push(`${dom.scripts} <script> elements`);
    if (dom.handlers.length > 0) problems.push(`event handlers: ${dom.handlers.join(', ')}`);
    if (dom.embeds > 0) problems.push(`${dom.embeds} embedded frames or objects`);
    for (const r of dom.resources)
        if (!r.startsWith(siteUrl)) problems.push(`a resource from outside the site: ${r}`);
    for (const l of dom.links) {
        if (!l.startsWith('file:')) continue; /* a link elsewhere is a link, not a load */
        if (!l.startsWith(siteUrl)) { problems.push(`a link out of the site: ${l}`); continue; }
        const [target, frag] = l.split('#');
        const targetFile = url.fileURLToPath(target);
        if (!fs.existsSync(targetFile)) problems.push(`a link to a missing file: ${l}`);
        else if (frag !== undefined && targetFile === file && !dom.ids.includes(decodeURIComponent(frag)))
            problems.push(`a link to a missing anchor: #${frag}`);
    }
    return problems;
}

function internalPages(site, dom) {
    const siteUrl = url.pathToFileURL(site).href + '/';
    return dom.links.filter((l) => l.startsWith(siteUrl))
        .map((l) => url.fileURLToPath(l.split('#')[0]))
        .filter((f) => f.endsWith('.html') && fs.existsSync(f));
}

// ---- the crawl --------------------------------------------------------------------------------

async function openPage(b, s, file, sink) {
    sink.length = 0;
    const loaded = b.waitFor((m) => m.method === 'Page.loadEventFired' && m.sessionId === s.id,
        `load event for ${file}`);
    const nav = await s.send('Page.navigate', { url: url.pathToFileURL(file).href });
    if (nav.errorText) throw new Error(`cannot open ${file}: ${nav.errorText}`);
    await loaded;
    const r = await s.send('Runtime.evaluate', { expression: READ_DOM, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`reading ${file}: ${r.exceptionDetails.text}`);
    return r.result.value;
}

async function crawl(a, b, s, site, out, sink) {
    const queue = [path.join(site, 'index.html')];
    const seen = new Set(queue);
    const shots = {};
    const figures = {};
    let failures = 0;
    for (let file; (file = queue.shift()) !== undefined;) {
        const kind = kindOf(site, file);
        const dom = await openPage(b, s, file, sink);
        const problems = judge(a, site, file, kind, dom, sink);
        if (kind === 'index' && a.expectStudies >= 0) {
            const studies = new Set(dom.links.filter((l) => /\/studies\/[^/]+\/index\.html$/.test(l)));
            if (studies.size !== a.expectStudies)
                problems.push(`the index links ${studies.size} studies, expected ${a.expectStudies}`);
        }
        // A screenshot per kind of page: its first page, or the one with the most figures.
        if (!shots[kind] || dom.figures > shots[kind].figures) {
            const shot = await s.send('Page.captureScreenshot', { format: 'png' });
            shots[kind] = { file: path.join(out, `${kind}.png`), figures: dom.figures };
            fs.writeFileSync(shots[kind].file, Buffer.from(shot.data, 'base64'));
        }
        figures[kind] = (figures[kind] || 0) + dom.figures;
        const rel = path.relative(site, file);
        const figs = dom.images.length;
        if (problems.length === 0) {
            console.log(`ok ${rel}: ${dom.tables.length} tables, ${figs} images`);
        } else {
            failures++;
            console.log(`not ok ${rel}:`);
            for (const p of problems) console.log(`  - ${p}`);
        }
        for (const next of internalPages(site, dom))
            if (!seen.has(next)) { seen.add(next); queue.push(next); }
    }
    for (const kind of a.figures) { /* a site whose figures all went missing must not pass */
        if (!figures[kind]) {
            failures++;
            console.log(`not ok: no ${kind} page shows a figure`);
        }
    }
    return { pages: seen.size, failures, shots };
}

async function main() {
    const a = parseArgs(process.argv.slice(2));
    const site = fs.realpathSync(path.resolve(a.pos[0]));
    const out = path.resolve(a.pos[1]);
    if (!fs.existsSync(path.join(site, 'index.html'))) usage(`${site} has no index.html`);
    fs.mkdirSync(out, { recursive: true });
    const profile = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'check-site-'));
    const b = new Browser(a.chromium, profile);
    const giveUp = setTimeout(() => {
        console.error('check-site: gave up after 180 s');
        b.proc.kill('SIGKILL');
        process.exit(2);
    }, 180000);
    let result;
    try {
        const { targetId } = await b.send('Target.createTarget', { url: 'about:blank' });
        const { sessionId } = await b.send('Target.attachToTarget', { targetId, flatten: true });
        const s = { id: sessionId, send: (m, p = {}) => b.send(m, p, sessionId) };
        const sink = [];
        const requests = new Map();
        b.listeners.push((msg) => {
            if (msg.sessionId !== sessionId) return;
            const line = describe(msg, requests);
            if (line) sink.push(line);
        });
        for (const domain of ['Page', 'Runtime', 'Log', 'Network']) await s.send(`${domain}.enable`);
        await s.send('Emulation.setDeviceMetricsOverride',
            { width: 1280, height: 2000, deviceScaleFactor: 1, mobile: false });
        result = await crawl(a, b, s, site, out, sink);
    } catch (e) {
        console.error(`check-site: ${e.message}`);
        await b.close();
        process.exit(2);
    } finally {
        clearTimeout(giveUp);
    }
    await b.close();
    fs.rmSync(profile, { recursive: true, force: true });
    for (const [kind, shot] of Object.entries(result.shots)) console.log(`screenshot ${kind}: ${shot.file}`);
    const failed = result.failures > 0;
    console.log(`${result.pages} pages checked, ${result.failures} with problems` +
        (a.expectFail ? ' (a broken site: problems expected)' : ''));
    process.exit(failed === a.expectFail ? 0 : 1);
}

main();
