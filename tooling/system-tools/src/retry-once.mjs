// Under CI, a failed test is run once more — and a test that passed only then is said, by name.
//
// Why: CI runs every package's suite at once on 2 cores (load 15–30 at times), and a suite of
// ~4,000 tests over real processes, terminals, sandboxes and servers has lost whole runs to one
// wait that ran past its bound once (a tmux screen 30 s late, a command after an OOM kill). A
// second failure still fails the run; a pass on the retry is printed at the end of `npm test`
// (scripts/run.mjs) so the flake is seen and fixed, not hidden. Outside CI nothing is retried.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isCi, skipRecordDirectory } from './system-tools.mjs';

/** The retries of a failed test: 1 under CI=true, else 0. */
export const ciRetry = isCi() ? 1 : 0;

/** Records of tests that passed on a retry go beside the skip records, in files ending so. */
const extension = '.retried';

/** Writes a record of each test that passed only on a retry, and says it on the test output. */
export class RetriedTestsReporter {
  /** @param {{ directory?: string; root?: string }} options */
  constructor(options = {}) {
    this.directory = options.directory ?? skipRecordDirectory(process.cwd());
    this.root = options.root ?? path.resolve(process.cwd(), '..', '..');
  }

  /** @param {import('vitest/node').TestCase} testCase */
  onTestCaseResult(testCase) {
    const diagnostic = testCase.diagnostic();
    if (diagnostic === undefined || diagnostic.retryCount === 0) return;
    if (testCase.result().state !== 'passed') return;
    const file = path.relative(this.root, testCase.module.moduleId);
    const record = { file, test: testCase.fullName, retries: diagnostic.retryCount };
    console.log(`passed only on retry ${record.retries}: ${file} > ${record.test}`);
    mkdirSync(this.directory, { recursive: true });
    appendFileSync(
      path.join(this.directory, `${process.pid}${extension}`),
      `${JSON.stringify(record)}\n`,
    );
  }
}

/** What every package's vitest config adds: the retry under CI, and the reporter that says so. */
export function ciTestOptions() {
  return { retry: ciRetry, reporters: ['default', new RetriedTestsReporter()] };
}

/** Every record in `directories` (`{ file, test, retries }`), one JSON object per line. */
export function readRetryRecords(directories) {
  return directories.flatMap((directory) => {
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((name) => name.endsWith(extension))
      .flatMap((name) =>
        readFileSync(path.join(directory, name), 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line)),
      );
  });
}

/** The lines `npm test` ends with: how many passed only on a retry, then each by name. */
export function summarizeRetries(records) {
  if (records.length === 0) return [];
  const count = `${records.length} test${records.length === 1 ? '' : 's'}`;
  return [
    `${count} failed once and passed on the retry CI allows (flaky: fix them):`,
    ...records.map((record) => `  ${record.file} > ${record.test}`),
  ];
}
