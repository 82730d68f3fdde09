/**
 * An append-only event log that any number of async iterators read from the start.
 * Iterators created after `close()` still replay everything.
 */
export class EventLog<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #closed = false;
  #waiters: Array<() => void> = [];

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor = 0;
    while (true) {
      while (cursor < this.#items.length) {
        yield this.#items[cursor++] as T;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }
}
