/**
 * `pnpm bench`: runs every suite in `src/suites/` one after another in this process and prints
 * one markdown table per section. A suite that is missing, fails to import, throws or times out
 * becomes a "not available: <reason>" row; the bench itself never fails because of a suite.
 *
 * Usage: tsx src/cli.ts [--only <name>[,<name>…]] [--list]
 */
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderSection } from './markdown.js';
import type { BenchSection } from './types.js';

const suitesDir = fileURLToPath(new URL('./suites/', import.meta.url));

/** Suites the bench expects, in print order; other files in `src/suites/` run after them. */
const knownSuites = [
  'loop-overhead',
  'tools-builtin',
  'providers-openai',
  'providers-anthropic-google',
  'tools-mcp',
  'tools-openapi',
  'sandbox',
  'load',
  'shell-parser',
  'json-schema-validation',
  'tool-search',
  'dialects',
  'mcp-serve',
  'package-size',
  'cli-startup',
  'html-to-markdown',
] as const;

/** A suite gets this long before it is reported as timed out [10 min; env BENCH_SUITE_TIMEOUT_MS]. */
const suiteTimeoutMs = Number(process.env.BENCH_SUITE_TIMEOUT_MS ?? 600_000);

function parseArguments(argv: readonly string[]): { only: Set<string> | undefined; list: boolean } {
  let only: Set<string> | undefined;
  let list = false;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? '';
    if (argument === '--') continue;
    if (argument === '--list') {
      list = true;
    } else if (argument === '--only' || argument.startsWith('--only=')) {
      const value = argument === '--only' ? argv[++index] : argument.slice('--only='.length);
      if (value === undefined || value === '') throw new Error('--only needs a suite name');
      only ??= new Set();
      for (const name of value.split(',')) if (name.trim() !== '') only.add(name.trim());
    } else {
      throw new Error(
        `Unknown argument "${argument}". Usage: bench [--only <name>[,<name>…]] [--list]`,
      );
    }
  }
  return { only, list };
}

function discoverSuites(): string[] {
  const found = existsSync(suitesDir)
    ? readdirSync(suitesDir)
        .filter(
          (file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.test.ts'),
        )
        .map((file) => file.slice(0, -'.ts'.length))
    : [];
  const known: string[] = [...knownSuites];
  return [...known, ...found.filter((name) => !known.includes(name)).sort()];
}

function unavailable(name: string, reason: string): BenchSection {
  return {
    title: name,
    columns: ['Suite', 'Status'],
    rows: [[name, `not available: ${reason}`]],
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

function isSection(value: unknown): value is BenchSection {
  if (value === null || typeof value !== 'object') return false;
  const section = value as Partial<BenchSection>;
  return (
    typeof section.title === 'string' &&
    Array.isArray(section.columns) &&
    Array.isArray(section.rows) &&
    section.rows.every((row) => Array.isArray(row))
  );
}

async function runSuite(name: string): Promise<BenchSection[]> {
  const file = path.join(suitesDir, `${name}.ts`);
  if (!existsSync(file)) return [unavailable(name, `src/suites/${name}.ts does not exist yet`)];
  let module: { run?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { run?: unknown };
  } catch (error) {
    return [unavailable(name, `import failed: ${describe(error)}`)];
  }
  const run = module.run;
  if (typeof run !== 'function') return [unavailable(name, 'the module exports no run() function')];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${suiteTimeoutMs} ms`)),
        suiteTimeoutMs,
      );
    });
    const output: unknown = await Promise.race([
      Promise.resolve((run as () => unknown)()),
      timeout,
    ]);
    const sections = Array.isArray(output) ? output : [output];
    if (sections.length === 0 || !sections.every(isSection))
      return [unavailable(name, 'run() did not return a BenchSection')];
    return sections;
  } catch (error) {
    return [unavailable(name, `run() failed: ${describe(error)}`)];
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function header(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return [
    '# @agent bench',
    '',
    `- node ${process.version} (V8 ${process.versions.v8}), ${process.platform}/${process.arch}`,
    `- ${os.availableParallelism()} CPUs (${model}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `- ${new Date().toISOString()}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const { only, list } = parseArguments(process.argv.slice(2));
  const all = discoverSuites();
  if (list) {
    for (const name of all) console.log(name);
    return;
  }
  if (only !== undefined) {
    const unknown = [...only].filter((name) => !all.includes(name));
    if (unknown.length > 0)
      throw new Error(`Unknown suite ${unknown.join(', ')}; known: ${all.join(', ')}`);
  }
  console.log(header());
  for (const name of all) {
    if (only !== undefined && !only.has(name)) continue;
    const started = performance.now();
    const sections = await runSuite(name);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    for (const section of sections) console.log(`\n${renderSection(section)}`);
    console.log(`\n_${name}: ${seconds} s_`);
  }
}

main().then(
  // A suite that timed out may still hold timers or sockets: exit explicitly.
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${describe(error)}`);
    process.exit(1);
  },
);
