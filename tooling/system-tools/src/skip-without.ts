import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import {
  installableTools,
  installCommand,
  isCi,
  missingSystemTools,
  type SkipRecord,
  type SystemToolCommand,
  skipRecordDirectory,
} from './system-tools.mjs';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** The part of vitest's test context the hook uses (structural, so this package needs no vitest of its own). */
export interface SkippableContext {
  readonly task: { readonly name: string; readonly file?: { readonly filepath: string } };
  readonly skip: (note?: string) => never;
}

/**
 * A hook that skips the test when one of `tools` cannot be used here, and records the skip for the
 * summary at the end of `npm test`; under `CI=true` it fails the test with the same reason
 * instead (CI runs everything). Use it as `beforeEach(skipWithout('bwrap'))` at the top of a
 * file or inside a `describe`, or as `skipWithout('rg')(context)` on the first line of a test.
 */
export function skipWithout(...tools: SystemToolCommand[]): (context: SkippableContext) => void {
  return (context) => {
    const missing = missingSystemTools(tools);
    if (missing.length === 0) return;
    const reason = missing.map((entry) => entry.problem).join('; ');
    const install = installableTools(missing);
    const command = installCommand(install);
    const line = `${reason}${command === undefined ? '' : ` (${command})`}`;
    if (isCi()) throw new Error(`${line}: CI=true runs every test, so a missing tool is a failure`);
    record({
      file: path.relative(repositoryRoot, context.task.file?.filepath ?? 'unknown'),
      test: context.task.name,
      tools: missing.map((entry) => entry.command),
      install,
      reason,
    });
    context.skip(line);
  };
}

function record(entry: SkipRecord): void {
  const directory = skipRecordDirectory(process.cwd());
  mkdirSync(directory, { recursive: true });
  // One file per process and thread: appends from parallel workers never interleave.
  appendFileSync(
    path.join(directory, `${process.pid}-${threadId}.jsonl`),
    `${JSON.stringify(entry)}\n`,
  );
}
