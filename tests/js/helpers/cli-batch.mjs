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
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

/**
 * From a test: run `jobs` (as above; `cwd` defaults to `cwd`) in one child
 * process and return their results. Throws when the batch itself fails.
 * @param {string} cwd
 * @param {Array<{ args: string[], cwd?: string, write?: [string, string][], remove?: string[], devFull?: string[] }>} jobs
 * @returns {Array<{ status: number, stdout: string, stderr: string }>}
 */
export function runBatch(cwd, jobs) {
  const scratch = mkdtempSync(join(tmpdir(), 'bloomgate-batch-'));
  try {
    writeFileSync(join(scratch, 'jobs.json'), JSON.stringify(jobs.map((job) => ({ cwd, ...job }))));
    const child = spawnSync(process.execPath, [SELF, join(scratch, 'jobs.json'), join(scratch, 'results.json')], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`cli-batch exited ${child.status}: ${child.stderr}`);
    return JSON.parse(readFileSync(join(scratch, 'results.json'), 'utf8'));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === SELF) await runJobs(...process.argv.slice(2));

async function runJobs(jobsPath, resultsPath) {
  const { main } = await import('../../../js/cli/main.js');
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
}
