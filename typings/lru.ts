/** A least-recently-used map bounded by entry count. */
export class LruCache<K, V> {
  readonly #max: number;
  readonly #entries = new Map<K, V>();

  /** `max`: entries kept (at least 1); setting one more evicts the least recently used. */
  constructor(max: number) {
    this.#max = Math.max(1, Math.floor(max));
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as K);
  }
}
