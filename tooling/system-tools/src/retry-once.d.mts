// Types of retry-once.mjs (plain JavaScript so scripts/run.mjs can load it before any install).

/** The retries of a failed test: 1 under CI=true, else 0. */
export declare const ciRetry: number;

/** One test that passed only on a retry, as written by {@link RetriedTestsReporter}. */
export interface RetryRecord {
  /** The test file, relative to the repository root. */
  file: string;
  /** The test's full name. */
  test: string;
  /** The retries it took. */
  retries: number;
}

/** A vitest reporter: writes a record of each test that passed only on a retry, and says it. */
export declare class RetriedTestsReporter {
  constructor(options?: { directory?: string; root?: string });
  onTestCaseResult(testCase: unknown): void;
}

/** What every package's vitest config adds: the retry under CI, and the reporter that says so. */
export declare function ciTestOptions(): { retry: number; reporters: unknown[] };

/** Every record in `directories`. */
export declare function readRetryRecords(directories: readonly string[]): RetryRecord[];

/** The lines `npm test` ends with: how many passed only on a retry, then each by name. */
export declare function summarizeRetries(records: readonly RetryRecord[]): string[];
