/**
 * Per-group ordering: one agent's snapshots reach the queue in stream order.
 *
 * When a message is naked it comes back later, after the stream's newer
 * messages of the same FIFO group may already have been pulled. The order
 * remembers, per group, the stream sequences naked and not yet forwarded,
 * each with the time after which to stop waiting for it (another bridge may
 * have taken it, or it was terminated elsewhere). A message waits while an
 * older one of its group is still outstanding.
 */
export class GroupOrder {
  /** group → (stream sequence → epoch ms after which it is forgotten) */
  readonly #naked = new Map<string, Map<number, number>>();

  /** Remembers a naked message of the group until `forgetAt` (epoch ms). */
  markNaked(group: string, seq: number, forgetAt: number): void {
    let seqs = this.#naked.get(group);
    if (seqs === undefined) {
      seqs = new Map();
      this.#naked.set(group, seqs);
    }
    seqs.set(seq, forgetAt);
  }

  /** The message was forwarded or terminated: nothing waits for it any more. */
  settled(group: string, seq: number): void {
    const seqs = this.#naked.get(group);
    seqs?.delete(seq);
    if (seqs?.size === 0) this.#naked.delete(group);
  }

  /**
   * The oldest naked sequence of the group older than `seq`, ignoring those
   * already taken into the batch being built (they go first anyway).
   * Entries past their time are forgotten on the way.
   */
  olderOutstanding(
    group: string,
    seq: number,
    taken: ReadonlySet<number> = new Set(),
    now: number = Date.now(),
  ): number | undefined {
    const seqs = this.#naked.get(group);
    if (seqs === undefined) return undefined;
    let oldest: number | undefined;
    for (const [naked, forgetAt] of seqs) {
      if (now > forgetAt) {
        seqs.delete(naked);
      } else if (
        naked < seq &&
        !taken.has(naked) &&
        (oldest === undefined || naked < oldest)
      ) {
        oldest = naked;
      }
    }
    if (seqs.size === 0) this.#naked.delete(group);
    return oldest;
  }

  /** Groups with something outstanding (for tests and logs). */
  get size(): number {
    return this.#naked.size;
  }
}
