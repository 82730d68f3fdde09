/** One framework running the loop-overhead workloads. */
export interface Implementation {
  /** Row label. */
  label: string;
  /** npm package and version measured. */
  packageName: string;
  /**
   * Runs 200 turns × 8 no-op calls and a final text turn; resolves to the object that holds the
   * conversation (kept alive by the caller while retained heap is measured). Throws unless every
   * call executed.
   */
  runOverhead: () => Promise<unknown>;
  /** Runs one turn of 64 parallel 100 ms calls and a final text turn. */
  runParallel: () => Promise<unknown>;
}

/** Ids of the implementations, in table order. */
export const implementationIds = ['ours', 'pi', 'ai-stream', 'ai-generate'] as const;

/** One of {@link implementationIds}. */
export type ImplementationId = (typeof implementationIds)[number];
