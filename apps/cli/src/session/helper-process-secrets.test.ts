// The CLI keeps its keys out of its own environ block (credential-handover.ts): any process of the
// same user reads `/proc/<pid>/environ`, an unsandboxed MCP or language server polling /proc
// among them. The programs it runs for itself — ripgrep for the search tool, git, bubblewrap's
// probes, mkfifo — are such processes too, and were started with the whole `process.env`: the
// key was in their environ for as long as they ran (a search of a large tree: seconds).
// Each program here is a stand-in found first on PATH that copies its own environ block and runs
// the real one.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join, relative } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'Qw7_'.repeat(20)}`;
// Short and letters only: withheld for its name alone.
const serviceToken = 'hunterhunter';
const watched = ['rg', 'git', 'bwrap', 'mkfifo'];

function realProgram(name: string): string | undefined {
  try {
    return execFileSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

describe.runIf(process.platform === 'linux')('programs the CLI runs for itself', () => {
  it('get no credential of its environment in their environ (search, a sandboxed bash call)', async () => {
    const dir = await tempDir('agent-cli-helper-secrets-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    const bin = join(dir.path, 'bin');
    const seen = join(dir.path, 'seen');
    await mkdir(workspace);
    await mkdir(bin);
    await mkdir(seen);
    execFileSync('git', ['init', '-q', workspace]);
    await writeFile(join(workspace, 'notes.txt'), 'needle\n');
    const found: string[] = [];
    for (const name of watched) {
      const real = realProgram(name);
      if (real === undefined) continue;
      found.push(name);
      await writeFile(
        join(bin, name),
        `#!/bin/sh\ncat /proc/$$/environ > '${seen}/${name}.'$$\nexec '${real}' "$@"\n`,
      );
      await chmod(join(bin, name), 0o755);
    }
    expect(found).toContain('rg');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'search', arguments: { pattern: 'needle' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo ran' } }] },
      { text: 'done' },
    ]);
    const env = cleanEnv({
      AGENT_HOME: join(dir.path, 'home'),
      ANTHROPIC_API_KEY: providerKey,
      BILLING_SERVICE_TOKEN: serviceToken,
    });
    env.PATH = [bin, env.PATH ?? '/usr/bin:/bin'].join(delimiter);
    const run = await runCli(['-p', 'go', '--scripted', script, '--allow', 'bash'], {
      cwd: workspace,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('done');
    const copies = await readdir(seen);
    // The stand-ins ran: ripgrep for the search, git for the hooks folder.
    expect(copies.some((name) => name.startsWith('rg.'))).toBe(true);
    expect(copies.some((name) => name.startsWith('git.'))).toBe(true);
    const holding: string[] = [];
    for (const copy of copies) {
      const environ = await readFile(join(seen, copy), 'utf8');
      if (environ.includes(providerKey) || environ.includes(serviceToken)) holding.push(copy);
    }
    expect(holding.map((copy) => copy.split('.')[0])).toEqual([]);
  });
});

// The class, in the sources: every call of node:child_process in the packages the CLI runs names
// the environment it starts the program with (a credential-free one, or one made for it). A call
// without one hands the program all of `process.env`, the keys in the heap included.
const repository = join(appDir, '..', '..');
const notShipped =
  /\.test\.ts$|__fixtures__|\/testing\/|test-support|test-helpers|escape-harness|runner-suite/;

function sourceFiles(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !notShipped.test(path)) found.push(path);
  }
  return found;
}

/** The text between the parenthesis at `open` and the one that closes it. */
function callArguments(text: string, open: number): string {
  let depth = 0;
  for (let at = open; at < text.length; at++) {
    if (text[at] === '(') depth++;
    else if (text[at] === ')' && --depth === 0) return text.slice(open + 1, at);
  }
  return text.slice(open + 1);
}

describe('the sources', () => {
  it('start no program with the whole environment (each child_process call names its env)', () => {
    const folders = [
      join(repository, 'apps', 'cli', 'src'),
      ...readdirSync(join(repository, 'packages')).map((name) =>
        join(repository, 'packages', name, 'src'),
      ),
    ];
    const calls: string[] = [];
    const without: string[] = [];
    for (const file of folders.flatMap((folder) => sourceFiles(folder))) {
      const text = readFileSync(file, 'utf8');
      const imported = /import\s*\{([^}]*)\}\s*from\s*'node:child_process'/.exec(text)?.[1];
      if (imported === undefined) continue;
      const names = imported
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '' && !name.startsWith('type '))
        .map((name) => name.split(/\s+as\s+/).at(-1) ?? name)
        .filter((name) =>
          /^(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|fork)$/.test(name),
        );
      for (const name of names)
        for (const match of text.matchAll(new RegExp(`(?<![\\w.#$])${name}\\(`, 'g'))) {
          const place = `${relative(repository, file)}:${text.slice(0, match.index).split('\n').length}`;
          calls.push(place);
          if (!/\benv\b/.test(callArguments(text, match.index + name.length))) without.push(place);
        }
    }
    // The scan found the calls it is about (ripgrep's, git's, bwrap's, the browser's…).
    expect(calls.length).toBeGreaterThan(10);
    expect(without).toEqual([]);
  });
});
