/**
 * Many `bloomgate` runs in one process: `node cli-batch.mjs JOBS.json RESULTS.json`.
 * A spawn a run costs ~0.2 s; main() (js/cli/main.js) in a loop costs ~1 ms, which
 * is what lets a test put thousands of damaged inputs through every command. It
 * runs in its own process because it captures stdout and stderr by replacing
 * their write(), which a test runner's own reporting must not meet.
 *
 * Each job: { cwd, args, write?: [[path, base64]], remove?: [path], devFull?: [output] }.
 * `devFull`: the temporary file this process would write for each output
 * (`OUT.tmp-<pid>`, js/cli/output.js) is made a link to /dev/full first, where
 * every write fails with ENOSPC. Results: [{ status, stdout, stderr }] in order.
 */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { main } from '../../../js/cli/main.js';

const [jobsPath, resultsPath] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsPath, 'utf8'));
const results = [];
const out = process.stdout.write;
const err = process.stderr.write;
for (const job of jobs) {
  for (const path of job.remove ?? []) rmSync(path, { recursive: true, force: true });
  for (const [path, base64] of job.write ?? []) writeFileSync(path, Buffer.from(base64, 'base64'));
  for (const output of job.devFull ?? []) {
    const temporary = `${output}.tmp-${process.pid}`;
    rmSync(temporary, { force: true });
    symlinkSync('/dev/full', temporary);
  }
  let stdout = '';
  let stderr = '';
  process.stdout.write = (chunk) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
    return true;
  };
  process.stderr.write = (chunk) => {
    stderr += String(chunk);
    return true;
  };
  process.chdir(job.cwd);
  let status;
  try {
    status = await main(job.args);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  results.push({ status, stdout, stderr });
}
writeFileSync(resultsPath, JSON.stringify(results));
