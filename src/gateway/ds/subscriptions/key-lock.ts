/**
 * Runs async tasks one at a time per key. Every change to one subscription (requests, stream
 * events, lease expiry, webhook outcomes) runs under its id, so a task that awaits the host
 * never sees another change half done. Tasks of different subscriptions run concurrently.
 */
export class KeyLock {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const result = prev.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
