/**
 * How long processes waited for a CPU (Linux's /proc/<pid>/task/<tid>/
 * schedstat: time runnable but not running), so a benchmark can tell a
 * request that waited for the machine from one that waited for its own
 * work. Off Linux it reads nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Watched {
  pids: number[];
  /** The main thread alone (a Node process's event loop), or every one. */
  threads: 'main' | 'all';
}

/**
 * Milliseconds the threads of `pid` have waited on a run queue so far.
 * `proc` is where procfs is mounted (a test gives a tree of its own).
 */
export function runQueueWaitMs(
  pid: number,
  threads: Watched['threads'],
  proc = '/proc',
): number {
  let waitedNs = 0;
  let tasks: string[];
  try {
    tasks =
      threads === 'main' ? [String(pid)] : readdirSync(`${proc}/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      const fields = readFileSync(
        `${proc}/${pid}/task/${tid}/schedstat`,
        'utf8',
      );
      waitedNs += Number(fields.split(' ')[1] ?? 0);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return waitedNs / 1e6;
}

/** Each named process's wait since the previous call, in milliseconds. */
export class RunQueueWaits {
  readonly #watched: Map<string, Watched>;
  readonly #proc: string;
  #last = new Map<string, number>();

  constructor(watched: Record<string, Watched>, proc = '/proc') {
    this.#watched = new Map(Object.entries(watched));
    this.#proc = proc;
    this.take();
  }

  take(): Record<string, number> {
    const waited: Record<string, number> = {};
    for (const [name, { pids, threads }] of this.#watched) {
      const now = pids.reduce(
        (sum, pid) => sum + runQueueWaitMs(pid, threads, this.#proc),
        0,
      );
      waited[name] = now - (this.#last.get(name) ?? now);
      this.#last.set(name, now);
    }
    return waited;
  }
}
