// Build and run bench/native_bench.c (the C core compiled natively).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const benchDir = path.dirname(fileURLToPath(import.meta.url));

/**
 * Returns { status: 'ok', result } with the parsed JSON of native_bench,
 * { status: 'skipped', reason } when there is no C toolchain, or throws when
 * the build or the run fails for another reason (that is a crash to report).
 */
export function runNative({ n, batch, rounds, minMs, errorRate }) {
  const build = spawnSync('sh', [path.join(benchDir, 'build-native.sh')], { encoding: 'utf8' });
  if (build.error) return { status: 'skipped', reason: `cannot run sh (${build.error.code})` };
  if (build.status === 3) return { status: 'skipped', reason: 'skipped (no C compiler or xxhash.h)' };
  if (build.status !== 0) throw new Error(`native build failed:\n${build.stderr}`);
  const binary = build.stdout.trim().split('\n').pop();
  const args = ['--n', n, '--batch', batch, '--rounds', rounds, '--min-ms', minMs, '--error-rate', errorRate];
  const run = spawnSync(binary, args.map(String), { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.error) throw new Error(`native bench could not start: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`native bench failed (exit ${run.status}):\n${run.stderr}`);
  return { status: 'ok', result: JSON.parse(run.stdout), binary };
}
