/** One markdown table of the bench output. */
export interface BenchSection {
  /** Heading printed above the table. */
  title: string;
  /** Column headers. */
  columns: string[];
  /** Cells, one array per row, as many cells as `columns`. */
  rows: string[][];
  /** Lines printed under the table (method, caveats, skipped steps). */
  notes?: string[];
}

/**
 * A suite module in `src/suites/`: `run()` returns its section. A suite may return several
 * sections (the runner prints each); suites written to the original contract return one.
 */
export interface BenchSuite {
  run: () => Promise<BenchSection | BenchSection[]>;
}

/** A positive integer from an environment variable, or `fallback` when it is unset or not one. */
export function positiveInt(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
}
