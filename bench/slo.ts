/**
 * `npm run bench -- slo [--render] [--only=a,b] [--skip=a,b]`: reruns the
 * benches cheap enough for one sitting (about 15 minutes on a 2-core
 * machine), each in a process of its own, one after the other, each writing
 * bench/results/<bench>.json; then rewrites docs/slo.md from every results
 * file there (bench/slo-page.ts). `--render` only rewrites the page.
 *
 * Left out for their time, run apart (the page renders their latest
 * results files): the scale curve (`npm run bench -- scale`), the per-row
 * sync (`npm run bench -- sync --per-row`), the graph and PQL bench (`npm
 * run bench -- graph`: its 400k-pod, 100k-host world takes longer to seed
 * than the whole sitting) and the cost page (`npm run bench -- cost`, which
 * runs nothing). The cold start is in: about 5 minutes on a quiet machine.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gitHistory, loadAllResults, renderSloPage } from './slo-page.ts';

interface Run {
  bench: string;
  args?: string[];
  env?: Record<string, string>;
}

/** What `slo` runs, in order, with the settings that keep it in budget. */
export const SLO_RUNS: readonly Run[] = [
  { bench: 'sync', env: { BENCH_SIZES: 'large' } },
  { bench: 'ingest', args: ['--steady', '--duration=60'] },
  { bench: 'api' },
  { bench: 'changes' },
  { bench: 'events' },
  { bench: 'live' },
  { bench: 'sync-lambda' },
  { bench: 'coldstart' },
];

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: {
    render: { type: 'boolean', default: false },
    only: { type: 'string' },
    skip: { type: 'string' },
  },
});
const only = values.only?.split(',');
const skip = values.skip?.split(',') ?? [];

function runBench(run: Run): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', run.bench, ...(run.args ?? [])],
      { stdio: 'inherit', env: { ...process.env, ...run.env } },
    );
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

const failed: string[] = [];
if (!values.render) {
  for (const run of SLO_RUNS) {
    if (only && !only.includes(run.bench)) continue;
    if (skip.includes(run.bench)) continue;
    if (!existsSync(new URL(`./${run.bench}.ts`, import.meta.url))) {
      console.log(
        `\n== ${run.bench}: bench/${run.bench}.ts not there yet, skipped`,
      );
      continue;
    }
    const started = Date.now();
    console.log(`\n== ${run.bench} ${(run.args ?? []).join(' ')}`);
    const code = await runBench(run);
    console.log(
      `== ${run.bench}: exit ${code} after ${((Date.now() - started) / 60_000).toFixed(1)} min`,
    );
    if (code !== 0) failed.push(run.bench);
  }
}

const page = new URL('../docs/slo.md', import.meta.url).pathname;
writeFileSync(
  page,
  renderSloPage({ results: loadAllResults(), history: gitHistory() }),
);
console.log(`\n${page} rewritten from bench/results/`);
if (failed.length > 0) {
  console.error(
    `failed: ${failed.join(', ')} (their rows keep the last figures)`,
  );
  process.exitCode = 1;
}
