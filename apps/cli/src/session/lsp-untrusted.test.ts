// A cloned repository's own language servers are its code: `node_modules/.bin/typescript-language-server`
// ran (in the sandbox, writing in the workspace) as soon as the model called a read-only lsp tool
// in a folder the user never trusted — `agent -p "explain this"` was enough. Every place a
// server is looked for that the repository controls is tried here; each server only leaves a
// canary in the workspace. With --trust the same server runs (the canary works).
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A server that only leaves `RAN` in the folder it starts in (the workspace) and exits. */
const server = '#!/bin/sh\necho "$0" > "$PWD/RAN"\n';

/** PATH without any language server: node's folder and the system's. */
const plainPath = [dirname(process.execPath), '/usr/bin', '/bin'].join(':');

interface Variant {
  /** Files of the repository (relative path → content; executable when it is `server`). */
  files: Record<string, string>;
  /** The workspace inside the repository ('' for its root). */
  workspace?: string;
  /** The file the model asks about. */
  file: string;
  /** PATH of the CLI [plainPath]. */
  path?: string;
}

const variants: [string, Variant][] = [
  [
    "node_modules/.bin's typescript-language-server",
    { files: { 'node_modules/.bin/typescript-language-server': server }, file: 'a.ts' },
  ],
  [
    "node_modules/.bin's pyright-langserver",
    { files: { 'node_modules/.bin/pyright-langserver': server }, file: 'a.py' },
  ],
  [
    "node_modules/.bin's tsc of a TypeScript 7",
    {
      files: {
        'node_modules/.bin/tsc': server,
        'node_modules/typescript/package.json': '{"name":"typescript","version":"7.0.0"}',
      },
      file: 'a.ts',
    },
  ],
  [
    "the repository root's node_modules/.bin, started in a subfolder",
    {
      files: { 'node_modules/.bin/typescript-language-server': server },
      workspace: 'packages/app',
      file: 'a.ts',
    },
  ],
  [
    'a relative PATH entry (tools)',
    {
      files: { 'tools/typescript-language-server': server },
      file: 'a.ts',
      path: `tools:${plainPath}`,
    },
  ],
  [
    'PATH holding .',
    { files: { 'pyright-langserver': server }, file: 'a.py', path: `.:${plainPath}` },
  ],
];

async function repository(variant: Variant) {
  const dir = await tempDir('agent-cli-lsp-untrusted-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const workspace = join(repo, variant.workspace ?? '');
  await mkdir(join(repo, '.git'), { recursive: true });
  await mkdir(workspace, { recursive: true });
  for (const [path, content] of Object.entries(variant.files)) {
    // A relative PATH entry is looked up from the workspace (the CLI's working directory).
    const file = join(path.startsWith('node_modules') ? repo : workspace, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
    if (content === server) await chmod(file, 0o755);
  }
  await writeFile(join(workspace, variant.file), 'export const x = 1;\n');
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'lsp_diagnostics', arguments: { path: variant.file } }] },
    { text: 'done' },
  ]);
  const run = (extra: string[]) =>
    runCli(['-p', 'explain', '--scripted', script, ...extra], {
      cwd: workspace,
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home'), PATH: variant.path ?? plainPath }),
    });
  return { workspace, run };
}

describe("an untrusted folder's own language servers do not run", () => {
  it.each(variants)('%s', async (_label, variant) => {
    const { workspace, run } = await repository(variant);
    const untrusted = await run([]);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(existsSync(join(workspace, 'RAN')), untrusted.stderr).toBe(false);
    const trusted = await run(['--trust']);
    expect(trusted.code, trusted.stderr).toBe(0);
    if (variant.path === undefined) {
      expect(untrusted.stderr).toContain(
        "this folder's own language servers (node_modules) run once you trust it",
      );
      // Trusted (for this run), the folder's server is the one used.
      expect(existsSync(join(workspace, 'RAN')), trusted.stderr).toBe(true);
    } else {
      // A relative PATH entry is dropped at start (absolute-path.ts), trusted or not.
      expect(untrusted.stderr).toContain('agent: PATH entries left out:');
      expect(existsSync(join(workspace, 'RAN')), trusted.stderr).toBe(false);
    }
  });
});
