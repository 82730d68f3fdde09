/**
 * Bench suite for `@agent/tools-builtin`: each built-in tool against the command-line tool it
 * stands in for, side by side in one run, as ratios (tool time / baseline time).
 * - search vs `rg` on a large tree (this repo's node_modules), with the ripgrep engine and
 *   with the pure-TypeScript engine;
 * - read_file of line 5,000,000 of a generated file vs `sed -n` (and of a line near the end, where
 *   the total is counted, so the whole file is read);
 * - bash with 1 GB of output vs the same command redirected to /dev/null, to a file, and through
 *   `cat` to a file (the tool's data path, pipe read + file write, done natively).
 * Peak RSS of this process is sampled during each tool call (delta over the RSS before it).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolContext, ToolResult } from '@agent/core';
import {
  createBashTool,
  createReadFileTool,
  createSearchTool,
  findRipgrep,
} from '@agent/tools-builtin';
import type { BenchSection } from '../types.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function context(): ToolContext {
  return {
    toolCallId: 'bench',
    toolName: 'bench',
    signal: new AbortController().signal,
    onUpdate: () => {},
    onProgress: () => {},
  };
}

/** Runs `fn`, sampling this process's RSS every 5 ms; returns ms and the peak RSS growth in bytes. */
async function measure<T>(
  fn: () => Promise<T>,
): Promise<{ ms: number; rssDelta: number; value: T }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  const started = performance.now();
  try {
    const value = await fn();
    const ms = performance.now() - started;
    peak = Math.max(peak, process.memoryUsage.rss());
    return { ms, rssDelta: peak - before, value };
  } finally {
    clearInterval(timer);
  }
}

/** Runs a shell command to completion; returns ms and its max RSS in bytes (via /usr/bin/time when present). */
function runShell(
  command: string,
  cwd: string,
): { ms: number; maxRss: number | undefined; cpuMs: number | undefined; stdout: string } {
  const timeBinary = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
  const started = performance.now();
  const child =
    timeBinary === undefined
      ? spawnSync('bash', ['-c', command], { cwd, maxBuffer: 256 * 1024 * 1024 })
      : spawnSync(timeBinary, ['-f', '__maxrss=%M __cpu=%U+%S', 'bash', '-c', command], {
          cwd,
          maxBuffer: 256 * 1024 * 1024,
        });
  const ms = performance.now() - started;
  const stderr = child.stderr?.toString() ?? '';
  const rss = /__maxrss=(\d+)/.exec(stderr)?.[1];
  const cpu = /__cpu=([\d.]+)\+([\d.]+)/.exec(stderr);
  return {
    ms,
    maxRss: rss === undefined ? undefined : Number(rss) * 1024,
    cpuMs: cpu === null ? undefined : (Number(cpu[1]) + Number(cpu[2])) * 1000,
    stdout: child.stdout?.toString() ?? '',
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const mb = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}×`;
const text = (result: ToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

async function searchRows(notes: string[]): Promise<string[][]> {
  const tree = path.join(repoRoot, 'node_modules');
  const rg = findRipgrep();
  if (rg === undefined || !fs.existsSync(tree)) {
    notes.push('search: skipped (rg not on PATH or node_modules missing).');
    return [];
  }
  const pattern = 'createInterface';
  // Same file set for everyone: hidden files included, .git skipped, symlinks not followed, and
  // ignore files off (the repo's .gitignore ignores node_modules itself).
  const common = {
    cwd: tree,
    skip: ['.git'],
    respectIgnoreFiles: false,
    maxOutputChars: Number.POSITIVE_INFINITY,
  };
  const args = { pattern, output_mode: 'files_with_matches' as const, head_limit: 1_000_000 };
  const direct = () =>
    runShell(`rg --no-config --hidden --no-ignore -g '!.git' -l -e ${pattern} . | wc -l`, tree);
  const directSorted = () =>
    runShell(
      `rg --no-config --hidden --no-ignore --sort=path -g '!.git' -l -e ${pattern} . | wc -l`,
      tree,
    );
  direct(); // warm the page cache
  const rgRuns = [direct(), direct(), direct()];
  const rgSortedRuns = [directSorted(), directSorted(), directSorted()];
  const baseline = median(rgRuns.map((run) => run.ms));
  const rows: string[][] = [
    [
      `search "${pattern}" (files_with_matches) in node_modules`,
      'rg -l (parallel)',
      ms(baseline),
      '1.00×',
      mb(Math.max(...rgRuns.map((run) => run.maxRss ?? 0)) || undefined),
      `${rgRuns[0]?.stdout.trim()} files`,
    ],
    [
      '',
      'rg -l --sort=path (one thread)',
      ms(median(rgSortedRuns.map((run) => run.ms))),
      ratio(median(rgSortedRuns.map((run) => run.ms)), baseline),
      mb(Math.max(...rgSortedRuns.map((run) => run.maxRss ?? 0)) || undefined),
      `${rgSortedRuns[0]?.stdout.trim()} files`,
    ],
  ];
  for (const engine of ['ripgrep', 'typescript'] as const) {
    const tool = createSearchTool({ ...common, engine });
    const runs = [];
    for (let i = 0; i < (engine === 'ripgrep' ? 3 : 2); i++) {
      runs.push(await measure(() => tool.execute(args, context())));
    }
    const time = median(runs.map((run) => run.ms));
    rows.push([
      '',
      `search tool, ${engine} engine`,
      ms(time),
      ratio(time, baseline),
      `+${mb(Math.max(...runs.map((run) => run.rssDelta)))}`,
      `${runs[0]?.value.details?.filesWithMatches ?? '?'} files`,
    ]);
  }
  notes.push(
    'search: the ripgrep engine streams content from rg --sort=path, and gets file lists from rg on all cores, sorted in the tool; the TypeScript engine searches its first 2,000 files in the calling thread, then a worker thread walks the rest and searches it with synchronous reads (a second worker with more than 2 cores), a literal pattern looked for in raw bytes first.',
  );
  return rows;
}

async function readFileRows(directory: string): Promise<string[][]> {
  const file = path.join(directory, 'lines.txt');
  const stream = fs.createWriteStream(file);
  const total = 6_000_000;
  for (let block = 0; block < total / 100_000; block++) {
    let chunk = '';
    for (let i = 1; i <= 100_000; i++)
      chunk += `line ${block * 100_000 + i} of the generated file\n`;
    if (!stream.write(chunk))
      await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => stream.end(resolve));
  const size = fs.statSync(file).size;
  runShell(`cat ${file} > /dev/null`, directory); // warm the page cache
  const sed = runShell(`sed -n 5000000p ${file}`, directory);
  const sedQuit = runShell(`sed -n '5000000{p;q}' ${file}`, directory);
  const tool = createReadFileTool({ cwd: directory });
  const runs = [];
  for (let i = 0; i < 3; i++) {
    runs.push(
      await measure(() =>
        tool.execute({ path: 'lines.txt', offset: 5_000_000, limit: 1 }, context()),
      ),
    );
  }
  const time = median(runs.map((run) => run.ms));
  // Near the end: the rest is counted for the total, so the whole file is read (as before).
  const lateRuns = [];
  for (let i = 0; i < 3; i++) {
    lateRuns.push(
      await measure(() =>
        tool.execute({ path: 'lines.txt', offset: 5_999_990, limit: 1 }, context()),
      ),
    );
  }
  const lateTime = median(lateRuns.map((run) => run.ms));
  const shown =
    text(runs[0]?.value ?? { content: [] })
      .split('\n')[0]
      ?.trim() ?? '';
  const label = `read_file line 5,000,000 of ${total.toLocaleString('en-US')} (${mb(size)})`;
  return [
    [
      label,
      'sed -n 5000000p (whole file)',
      ms(sed.ms),
      '1.00×',
      mb(sed.maxRss),
      sed.stdout.trim().slice(0, 40),
    ],
    [
      '',
      "sed -n '5000000{p;q}' (stops early)",
      ms(sedQuit.ms),
      ratio(sedQuit.ms, sed.ms),
      mb(sedQuit.maxRss),
      '',
    ],
    [
      '',
      'read_file (35 MB after it: not counted)',
      ms(time),
      ratio(time, sed.ms),
      `+${mb(Math.max(...runs.map((run) => run.rssDelta)))}`,
      shown.slice(0, 40),
    ],
    [
      '',
      'read_file line 5,999,990 (rest counted: whole file)',
      ms(lateTime),
      ratio(lateTime, sed.ms),
      `+${mb(Math.max(...lateRuns.map((run) => run.rssDelta)))}`,
      '',
    ],
  ];
}

/** CPU time of this process and of its reaped children, in ms (children from /proc: Linux only). */
function cpuNow(): number {
  const self = process.cpuUsage();
  let children = 0;
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'latin1');
    // Fields after `(comm)`: state is field 3; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    // No /proc: this process only.
  }
  return (self.user + self.system) / 1000 + children;
}

async function bashRows(directory: string): Promise<string[][]> {
  const bytes = 1_000_000_000;
  const runs = Number(process.env.BENCH_BASH_RUNS ?? 3);
  const command = `yes 'the quick brown fox jumps over the lazy dog' | head -c ${bytes}`;
  const file = path.join(directory, 'out.bin');
  // Unsandboxed, like the shell baselines it is compared with (the sandbox suite measures that cost).
  const tool = createBashTool({
    cwd: directory,
    spillDir: path.join(directory, 'spill'),
    sandbox: 'off',
  });
  type Sample = { ms: number; cpuMs: number | undefined; rss: number | undefined };
  const samples: Record<'devNull' | 'toFile' | 'throughCat' | 'tool', Sample[]> = {
    devNull: [],
    toFile: [],
    throughCat: [],
    tool: [],
  };
  let last: Awaited<ReturnType<typeof tool.execute>> | undefined;
  // Interleaved, so a burst of load on the shared machine hits every variant alike.
  for (let i = 0; i < runs; i++) {
    const devNull = runShell(`${command} > /dev/null`, directory);
    samples.devNull.push({ ms: devNull.ms, cpuMs: devNull.cpuMs, rss: devNull.maxRss });
    const toFile = runShell(`${command} > ${file}`, directory);
    samples.toFile.push({ ms: toFile.ms, cpuMs: toFile.cpuMs, rss: toFile.maxRss });
    fs.rmSync(file, { force: true });
    // The same path the tool's bytes take (read from a pipe, written to a file), done natively.
    const throughCat = runShell(`${command} | cat > ${file}`, directory);
    samples.throughCat.push({ ms: throughCat.ms, cpuMs: throughCat.cpuMs, rss: throughCat.maxRss });
    fs.rmSync(file, { force: true });
    const cpuBefore = cpuNow();
    const run = await measure(() => tool.execute({ command }, context()));
    samples.tool.push({ ms: run.ms, cpuMs: cpuNow() - cpuBefore, rss: run.rssDelta });
    last = run.value;
    const details = last.details;
    const spilled =
      details?.stdoutPath !== undefined &&
      fs.existsSync(details.stdoutPath) &&
      fs.statSync(details.stdoutPath).size === bytes;
    if (!spilled) throw new Error('bash bench: the spill file does not hold the whole output');
    fs.rmSync(path.join(directory, 'spill'), { recursive: true, force: true });
  }
  const wall = (name: keyof typeof samples) => median(samples[name].map((sample) => sample.ms));
  const cpu = (name: keyof typeof samples) => {
    const values = samples[name].map((sample) => sample.cpuMs);
    return values.every((value) => value !== undefined) ? median(values as number[]) : undefined;
  };
  const cpuCell = (name: keyof typeof samples) => {
    const value = cpu(name);
    const base = cpu('toFile');
    return value === undefined
      ? ''
      : `CPU ${ms(value)}${base === undefined || name === 'toFile' ? '' : ` = ${ratio(value, base)} cmd > file's`}`;
  };
  const peak = (name: keyof typeof samples) =>
    Math.max(...samples[name].map((sample) => sample.rss ?? 0));
  const details = last?.details;
  return [
    [
      `bash: 1 GB of output (median of ${runs}, interleaved)`,
      'cmd > /dev/null',
      ms(wall('devNull')),
      '1.00×',
      mb(peak('devNull')),
      cpuCell('devNull'),
    ],
    [
      '',
      'cmd > file',
      ms(wall('toFile')),
      ratio(wall('toFile'), wall('devNull')),
      mb(peak('toFile')),
      cpuCell('toFile'),
    ],
    [
      '',
      'cmd | cat > file (pipe read + file write, native)',
      ms(wall('throughCat')),
      ratio(wall('throughCat'), wall('devNull')),
      mb(peak('throughCat')),
      `${ratio(wall('throughCat'), wall('toFile'))} cmd > file; ${cpuCell('throughCat')}`,
    ],
    [
      '',
      'bash tool (head + tail kept, all spilled to a file)',
      ms(wall('tool')),
      ratio(wall('tool'), wall('devNull')),
      `+${mb(peak('tool'))}`,
      `${ratio(wall('tool'), wall('toFile'))} cmd > file; ${cpuCell('tool')} (this process + the command); ${details?.stdoutBytes?.toLocaleString('en-US') ?? '?'} bytes, spill file ok; ${last === undefined ? 0 : text(last).length.toLocaleString('en-US')} chars to the model`,
    ],
  ];
}

/** Runs the suite (about a minute on 2 cores) and cleans up its temp files. */
export async function run(): Promise<BenchSection> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-tools-builtin-'));
  const notes: string[] = [];
  try {
    const rows = [
      ...(await searchRows(notes)),
      ...(await readFileRows(directory)),
      ...(await bashRows(directory)),
    ];
    notes.push(
      'Ratio: time / the first baseline row of each group. Memory: max RSS of the command (GNU time) for shell baselines; for tools, the peak growth of this process’s RSS during the call (sampled every 5 ms).',
      'Medians of 3 runs (2 for the TypeScript search engine); page cache warmed first.',
    );
    return {
      title: '@agent/tools-builtin vs command-line tools',
      columns: ['Task', 'Runner', 'Time', 'Ratio', 'Memory', 'Result'],
      rows,
      notes,
    };
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}
