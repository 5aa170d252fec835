/**
 * The garbage collector's pauses in this process, as the live benchmark's
 * --profile lines them up with its slow requests across processes: each
 * pause's start on the wall clock (epoch milliseconds, which every process
 * shares), its length and its kind.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';

export interface GcPause {
  /** Epoch milliseconds. */
  at: number;
  ms: number;
  kind: string;
}

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** Starts recording; the array returned fills as pauses happen. */
export function watchGc(): GcPause[] {
  const pauses: GcPause[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as unknown as { detail?: { kind?: number } };
      const kind = detail?.kind;
      pauses.push({
        at: performance.timeOrigin + entry.startTime,
        ms: entry.duration,
        kind: KINDS[kind ?? -1] ?? String(kind),
      });
    }
  }).observe({ entryTypes: ['gc'] });
  return pauses;
}

/** The message a child answers with its pauses. */
export const GC_PAUSES_ASKED = 'gc-pauses?';

/** Has this child process answer GC_PAUSES_ASKED with its pauses so far. */
export function answerGcPauses(): void {
  const pauses = watchGc();
  process.on('message', (message) => {
    if (message === GC_PAUSES_ASKED) process.send?.({ gcPauses: pauses });
  });
}
