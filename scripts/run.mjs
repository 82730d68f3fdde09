#!/usr/bin/env node
// Runs a workspace task (`demo`, `test`, `bench`, `build`, `typecheck`) from any Node ≥ 18 with npm, setting up what it
// needs first: a Node ≥ 22 (the npm registry's `node-<platform>-<arch>` binary, cached outside the
// repo; the global node is never touched), the pinned pnpm (also cached), and `pnpm install`. It is
// what `npm run demo` / `npm test` and `pnpm demo` / `pnpm test` call, so a fresh machine with only
// Node 20 and npm needs no other step. Plain JavaScript on purpose: it runs before anything is
// installed.
//
// `test` first checks the system tools some suites need (bubblewrap, socat, ripgrep, tmux, curl,
// python3; tooling/system-tools): one line names what is missing and how to install it, the
// suites that need it skip their tests (CI=true fails instead), turbo runs every other task to the
// end, and the last lines count the skipped tests by reason. `check-tools` is that check alone.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRetryRecords, summarizeRetries } from '../tooling/system-tools/src/retry-once.mjs';
import {
  isCi,
  missingSystemTools,
  preflightMessage,
  readSkipRecords,
  summarizeSkips,
  workspaceSkipRecordDirectories,
} from '../tooling/system-tools/src/system-tools.mjs';
import { failureDigest } from './failure-digest.mjs';
import { ensureNode, ensurePnpm, ToolchainError, toolchainDirectory } from './toolchain.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nodeVersion = process.env.AGENT_NODE_VERSION ?? '24.9.0';
const pnpmVersion = JSON.parse(
  readFileSync(join(root, 'package.json'), 'utf8'),
).packageManager.replace(/^pnpm@/, '');
const cacheDir = toolchainDirectory();

/** The tasks, each a list of commands run in order with the toolchain first on PATH. */
const tasks = {
  demo: [
    ['turbo', 'run', 'build', '--filter=@agent/cli...', { quiet: 'building the CLI…' }],
    ['node', 'apps/cli/dist/main.js', 'demo'],
  ],
  test: [
    // --continue: a failing (or tool-less) package does not stop the others; the exit code still says.
    [
      'turbo',
      'run',
      'build',
      'typecheck',
      'lint',
      'test',
      '--continue',
      { skipSummary: true, digest: true },
    ],
    // Every published package's API against its committed report (tooling/release/api-report.mjs).
    ['node', 'tooling/release/api-report.mjs'],
    // changeset version + publish to a local Verdaccio, then each package installed alone with npm
    // and pnpm, its README example type-checked and run; `npx @agent/cli demo` from the registry.
    ['node', 'tooling/release/round-trip.mjs'],
  ],
  // A package that fails to build drops out of the benchmark; the others still run.
  bench: [
    [
      'turbo',
      'run',
      'build',
      '--filter=@agent/bench...',
      '--continue',
      '--output-logs=errors-only',
      { mayFail: true },
    ],
    ['pnpm', '--filter', '@agent/bench', 'run', 'bench'],
  ],
  // `npm run build` / `npm run typecheck`: turbo runs each package's script with pnpm, which a
  // machine with only Node and npm does not have on its PATH ("Unable to find package manager
  // binary"); here it is the toolchain's. Arguments go to turbo (`npm run build -- --filter=…`).
  build: [['turbo', 'run', 'build']],
  typecheck: [['turbo', 'run', 'typecheck']],
  'check-tools': [],
};

const [task, ...extra] = process.argv.slice(2);
if (!task || !(task in tasks)) {
  fail(`usage: node scripts/run.mjs <${Object.keys(tasks).join('|')}> [args for the last command]`);
}

const env = {
  ...process.env,
  // No update boxes, telemetry notices or funding lines between the user and the output.
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};
const binDirs = [];
try {
  if (majorOf(process.versions.node) < 22)
    binDirs.push(ensureNode({ cacheDir, version: nodeVersion, env }));
  binDirs.push(ensurePnpm({ cacheDir, version: pnpmVersion, env }));
} catch (error) {
  if (!(error instanceof ToolchainError)) throw error;
  fail(error.message);
}
binDirs.push(join(root, 'node_modules', '.bin'));
env.PATH = [...binDirs, env.PATH ?? ''].join(delimiter);

if (task === 'test' || task === 'check-tools') checkSystemTools();

const commands = tasks[task];
const install = ['pnpm', 'install', '--frozen-lockfile', '--reporter=silent'];
if (process.env.AGENT_SKIP_INSTALL !== '1' && commands.length > 0) {
  // The first install takes a minute with nothing on the screen (--reporter=silent): say so.
  if (!existsSync(join(root, 'node_modules', '.modules.yaml')))
    console.error(
      'run: installing the dependencies (pnpm install --frozen-lockfile; about a minute the first time)',
    );
  run(install, { failure: 'installing dependencies failed (pnpm install --frozen-lockfile)' });
}
commands.forEach((step, index) => {
  const options = typeof step.at(-1) === 'object' ? step.at(-1) : {};
  const command = step.filter((part) => typeof part === 'string');
  const last = index === commands.length - 1;
  run(last ? [...command, ...extra] : command, options);
});

/**
 * The line up front: which system tools are missing and the command that installs them. The
 * tests that need one skip (tooling/system-tools `skipWithout`), so the rest still runs; under CI
 * nothing may be skipped, so a missing tool fails here, before anything is built. The missing set
 * goes to turbo as AGENT_MISSING_SYSTEM_TOOLS (part of the test task's hash: a cached result from a
 * machine with other tools is not replayed).
 */
function checkSystemTools() {
  const missing = missingSystemTools(undefined, { env });
  const ci = isCi(env);
  env.AGENT_MISSING_SYSTEM_TOOLS = missing.map((entry) => entry.command).join(',');
  const message = preflightMessage(missing, { ci });
  if (message === undefined) {
    if (task === 'check-tools') console.error('run: every system tool the tests need works here');
    return;
  }
  console.error(`run: ${message}`);
  if (ci) process.exit(1);
}

/**
 * Starts the skip summary: old records go, and whatever way the run ends (passed, failed, or a
 * later step failed), its last lines count the tests skipped for want of a tool, by reason, and
 * name the tests that passed only on the retry CI allows (tooling/system-tools/src/retry-once.mjs).
 */
function armSkipSummary() {
  const directories = workspaceSkipRecordDirectories(root);
  for (const directory of directories) {
    rmSync(directory, { recursive: true, force: true });
    // Every test task then has an output for turbo to cache (it warns about a task with none).
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, '.keep'), '');
  }
  process.on('exit', () => {
    for (const line of summarizeSkips(readSkipRecords(directories))) console.error(`run: ${line}`);
    for (const line of summarizeRetries(readRetryRecords(directories)))
      console.error(`run: ${line}`);
  });
}

/**
 * Runs one command; `quiet` shows that line instead of the output, which is printed only on
 * failure; `digest` repeats, after a failure, the failed tasks' own failure lines last.
 */
function run(
  [command, ...args],
  { digest = false, failure, mayFail = false, quiet, skipSummary = false } = {},
) {
  if (skipSummary) armSkipSummary();
  const startedAt = Date.now();
  if (quiet) console.error(quiet);
  const result = spawnSync(command, args, {
    cwd: root,
    env,
    stdio: quiet ? ['inherit', 'pipe', 'pipe'] : 'inherit',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) fail(`${command}: ${result.error.message}`);
  if (result.status !== 0 && !mayFail) {
    if (quiet) process.stderr.write(`${result.stdout}${result.stderr}`);
    if (digest) printFailureDigest(startedAt);
    if (failure) console.error(`run: ${failure}`);
    process.exit(result.status ?? 1);
  }
}

/** What failed, from turbo's task logs (the output above may have scrolled far past it). */
function printFailureDigest(sinceMs) {
  // Log times are whole milliseconds or coarser: a second of slack keeps a log written at once.
  const lines = failureDigest(root, sinceMs - 1_000);
  if (lines.length === 0) return;
  console.error("\nrun: what failed (from each failed task's log):");
  for (const line of lines) console.error(line);
}

function majorOf(version) {
  return Number.parseInt(version.split('.')[0] ?? '0', 10);
}

function fail(message) {
  console.error(`run: ${message}`);
  process.exit(1);
}
