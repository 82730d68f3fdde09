/** Hears what an {@link OutputBuffer} keeps and drops (a worker forwards it to its parent). */
export interface OutputListener {
  /** A line (or the part of it that fit) was kept. */
  kept(line: string): void;
  /** The characters dropped so far. */
  dropped(total: number): void;
}

/** What a script printed, up to a character limit: the rest is counted, not kept. */
export class OutputBuffer {
  readonly #lines: string[] = [];
  #kept = 0;
  #dropped = 0;

  constructor(
    private readonly maxChars: number,
    private readonly listener?: OutputListener,
  ) {}

  /** Adds one printed line; `warn` and `error` lines are marked so the model can tell them apart. */
  write(level: string, text: string): void {
    const line = level === 'warn' || level === 'error' ? `[${level}] ${text}` : text;
    this.add(line);
  }

  /** Adds text as a line, keeping what fits. */
  add(line: string): void {
    const room = this.maxChars - this.#kept;
    if (room <= 0) {
      this.addDropped(line.length);
      return;
    }
    const kept = line.length > room ? line.slice(0, room) : line;
    this.#lines.push(kept);
    this.#kept += kept.length + 1;
    this.listener?.kept(kept);
    if (line.length > kept.length) this.addDropped(line.length - kept.length);
  }

  /** Counts characters dropped elsewhere (by a worker's own buffer). */
  addDropped(count: number): void {
    if (count <= 0) return;
    this.#dropped += count;
    this.listener?.dropped(this.#dropped);
  }

  /** Characters dropped past the limit. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The kept lines, and a note when some were dropped. */
  text(): string {
    const text = this.#lines.join('\n');
    if (this.#dropped === 0) return text;
    return `${text}\n[output truncated: ${this.#dropped} more characters over the ${this.maxChars}-character limit; print less, or return a summary]`;
  }
}
