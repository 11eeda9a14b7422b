/**
 * Callers waiting for the view to apply a revision (a write's own, or the head revision a
 * sync() read). Released in revision order, right after the view applied each revision, so a
 * write resolves after its onChange listeners ran and before the next revision is applied.
 */

interface Waiter {
  revision: number;
  atApply: (() => void) | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class RevisionWaiters {
  /** Sorted by revision (few at a time: one per write in flight and one per sync read). */
  readonly #waiters: Waiter[] = [];

  wait(revision: number, atApply?: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      let i = this.#waiters.length;
      while (i > 0 && this.#waiters[i - 1]!.revision > revision) i--;
      this.#waiters.splice(i, 0, { revision, atApply, resolve, reject });
    });
  }

  /** The view has applied `revision`: release everyone waiting for it or an earlier one. */
  release(revision: number): void {
    let n = 0;
    while (n < this.#waiters.length && this.#waiters[n]!.revision <= revision) n++;
    if (n === 0) return;
    for (const w of this.#waiters.splice(0, n)) {
      w.atApply?.();
      w.resolve();
    }
  }

  failAll(err: Error): void {
    for (const w of this.#waiters.splice(0)) w.reject(err);
  }
}
