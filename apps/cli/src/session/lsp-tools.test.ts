import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executeTool, type ToolResultMessage } from '@agent/core';
import { createSandbox } from '@agent/sandbox';
import { defaultTools } from '@agent/tools-builtin';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { loadLspTools } from './lsp-tools.js';

const cleanups: (() => Promise<void>)[] = [];
const savedPath = process.env.PATH;
afterEach(async () => {
  process.env.PATH = savedPath;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** PATH with node and the system tools only: no language server on it. */
function pathWithoutServers(): string {
  return [dirname(process.execPath), '/usr/bin', '/bin'].join(':');
}

const textOf = (result: ToolResultMessage) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('loadLspTools', () => {
  it('offers nothing when no language server is installed', async () => {
    process.env.PATH = pathWithoutServers();
    const dir = await tempDir('agent-cli-lsp-');
    cleanups.push(dir.dispose);
    expect(await loadLspTools(dir.path, [])).toBeUndefined();
  });

  it('offers the LSP tools when pyright is installed, and reports writes of the built-in tools to it', async () => {
    process.env.PATH = pathWithoutServers();
    const dir = await tempDir('agent-cli-lsp-');
    cleanups.push(dir.dispose);
    // The workspace's node_modules/.bin holds pyright-langserver (here: a script running the
    // one @agent/tools-lsp installs for its own tests).
    const lspPackage = dirname(
      createRequire(import.meta.url).resolve('@agent/tools-lsp/package.json'),
    );
    const bin = join(dir.path, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, 'pyright-langserver'),
      `#!/bin/sh\nexec "${join(lspPackage, 'node_modules', '.bin', 'pyright-langserver')}" "$@"\n`,
    );
    await chmod(join(bin, 'pyright-langserver'), 0o755);
    await writeFile(
      join(dir.path, 'geometry.py'),
      'def add(a: int, b: int) -> int:\n    return a + b\n',
    );
    await writeFile(join(dir.path, 'app.py'), 'from geometry import add\n\nprint(add(1, 2))\n');

    const tools = defaultTools({ cwd: dir.path });
    // In the session's sandbox, as the CLI runs it (bubblewrap where available).
    // (This repository may be under /tmp, which the sandbox hides: its pyright stays readable.)
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [dir.path],
      readableRoots: [join(appDir, '..', '..')],
    });
    cleanups.push(() => sandbox.close());
    const lsp = await loadLspTools(dir.path, tools, { sandbox });
    if (lsp === undefined) throw new Error('pyright was not found');
    cleanups.push(lsp.close);
    expect(lsp.source).toBe('lsp python (8)');
    expect(lsp.tools.map((tool) => tool.name)).toContain('lsp_definition');
    const tool = (name: string) => {
      const found = [...tools, ...lsp.tools].find((candidate) => candidate.name === name);
      if (found === undefined) throw new Error(`no ${name}`);
      return found;
    };
    expect(textOf(await executeTool(tool('lsp_diagnostics'), { path: 'app.py' }))).toBe(
      'No problems in app.py.',
    );
    // geometry.py is not open in pyright: only the report of write_file makes it re-read.
    const written = await executeTool(tool('write_file'), {
      path: 'geometry.py',
      content: 'def total(a: int, b: int) -> int:\n    return a + b\n',
    });
    expect(written.isError).toBe(false);
    expect(textOf(await executeTool(tool('lsp_diagnostics'), { path: 'app.py' }))).toContain(
      'app.py:1:22 error [reportAttributeAccessIssue]: "add" is unknown import symbol',
    );
    // bash changes it back: the source files it changed are reported after the command.
    const shell = await executeTool(tool('bash'), {
      command: "printf 'def add(a: int, b: int) -> int:\\n    return a + b\\n' > geometry.py",
    });
    expect(shell.isError).toBe(false);
    expect(textOf(await executeTool(tool('lsp_diagnostics'), { path: 'app.py' }))).toBe(
      'No problems in app.py.',
    );
  });
});

describe("a repository's TypeScript files that are not files, through the CLI", () => {
  it('a FIFO as node_modules/typescript/package.json: the session starts all the same', async () => {
    assertBuilt();
    const dir = await tempDir('agent-cli-lsp-fifo-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, 'repo');
    const bin = join(repo, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    await mkdir(join(repo, 'node_modules', 'typescript'));
    execFileSync('git', ['init', '-q', repo]);
    await writeFile(join(bin, 'tsc'), '#!/bin/sh\necho tsc\n');
    await chmod(join(bin, 'tsc'), 0o755);
    // Which server to offer is decided at start, by the version in this file.
    execFileSync('mkfifo', [join(repo, 'node_modules', 'typescript', 'package.json')]);
    const script = await writeScript(dir.path, [{ text: 'started' }]);
    const run = await new Promise<{ code: number | null; stdout: string; hung: boolean }>(
      (resolve) => {
        const child = spawn(process.execPath, [cliPath, '-p', 'hi', '--scripted', script], {
          cwd: repo,
          env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        let stdout = '';
        let hung = false;
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
        });
        // A start blocked in the FIFO's open never ends by itself (nor on SIGINT).
        const guard = setTimeout(() => {
          hung = true;
          child.kill('SIGKILL');
        }, 60_000);
        child.on('close', (code) => {
          clearTimeout(guard);
          resolve({ code, stdout, hung });
        });
      },
    );
    expect(run.hung).toBe(false);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('started');
  });
});
