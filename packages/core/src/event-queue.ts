/**
 * Fans events out to async iterators. Each iterator buffers the events pushed after it was
 * created and drops them as it reads them, so a run nobody iterates retains nothing.
 * An iterator created after `close()` ends at once.
 */
export class EventFanout<T> implements AsyncIterable<T> {
  readonly #subscribers = new Set<Subscriber<T>>();
  #closed = false;

  push(item: T): void {
    for (const subscriber of this.#subscribers) subscriber.push(item);
  }

  /** Whether an iterator would receive what is pushed now. */
  get hasSubscribers(): boolean {
    return this.#subscribers.size > 0;
  }

  close(): void {
    this.#closed = true;
    for (const subscriber of this.#subscribers) subscriber.close();
    this.#subscribers.clear();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    const subscriber = new Subscriber<T>(() => this.#subscribers.delete(subscriber));
    if (this.#closed) subscriber.close();
    else this.#subscribers.add(subscriber);
    return subscriber;
  }
}

class Subscriber<T> implements AsyncIterator<T> {
  #items: T[] = [];
  #head = 0;
  #closed = false;
  #wake: ((result: IteratorResult<T>) => void) | undefined;
  readonly #unsubscribe: () => void;

  constructor(unsubscribe: () => void) {
    this.#unsubscribe = unsubscribe;
  }

  push(item: T): void {
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake({ value: item, done: false });
      return;
    }
    this.#items.push(item);
  }

  close(): void {
    this.#closed = true;
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#head < this.#items.length) {
      const value = this.#items[this.#head] as T;
      this.#head++;
      if (this.#head === this.#items.length) {
        this.#items = [];
        this.#head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.#closed = true;
    this.#items = [];
    this.#head = 0;
    this.#unsubscribe();
    return Promise.resolve({ value: undefined, done: true });
  }
}
