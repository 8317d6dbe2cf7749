#!/usr/bin/env node
// Compare a conformance run (summary.json written by summarize.mjs) with an expected-failures
// file: the set of scenarios with a FAILURE check must equal the file's list exactly.
// Scenarios with WARNING checks only (SEP-1699 resumption checks that a stateless server
// cannot exercise) count as passed, as in the tool's own scenario verdicts; the conformance
// tool's --expected-failures mode counts them as failures, which is why this script exists.
//   node verdict.mjs OUTDIR/summary.json expected-failures.yml
import fs from 'node:fs';
const [summaryFile, expectedFile] = process.argv.slice(2);
const summary = JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
const expected = fs.readFileSync(expectedFile, 'utf8').split('\n')
  .map((l) => l.match(/^\s*-\s*([a-z0-9-]+)\s*$/)?.[1]).filter(Boolean);
const failed = summary.scenarios.filter((s) => s.status === 'FAIL').map((s) => s.scenario);
const unexpected = failed.filter((s) => !expected.includes(s));
const stale = expected.filter((s) => !failed.includes(s));
for (const s of summary.scenarios) if (s.warnings) console.log(`note: ${s.scenario} has ${s.warnings} warning(s): ${s.warningsDetail.map((w) => w.id).join(', ')}`);
console.log(`expected failures: ${expected.length}, failed: ${failed.length} (${failed.join(', ') || 'none'})`);
if (unexpected.length) console.log(`UNEXPECTED failures: ${unexpected.join(', ')}`);
if (stale.length) console.log(`expected to fail but passed (update ${expectedFile}): ${stale.join(', ')}`);
process.exit(unexpected.length || stale.length ? 1 : 0);
