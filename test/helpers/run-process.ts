/**
 * A command run to its end as a user runs it: its exit code and what it
 * wrote to stdout and stderr, interleaved as it came.
 */
import { type SpawnOptions, spawn } from 'node:child_process';

export interface ProcessRun {
  code: number | null;
  output: string;
}

export function runProcess(
  command: string,
  args: readonly string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'> = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...options,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}
