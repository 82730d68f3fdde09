// Project root discovery: started in a subfolder of a repository, the CLI reads the repository's
// configuration (settings, hooks, AGENTS.md, .mcp.json, skills, agents) from its root, while the
// tools stay in the folder the user started in.
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { findProjectRoot, foldersDownTo } from './project-root.js';
import { agentsInstructions } from './settings.js';

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-root-');
  cleanups.push(dir.dispose);
  return dir.path;
}

describe('findProjectRoot', () => {
  it.each([
    ['a .git folder', async (root: string) => mkdir(join(root, '.git')), 'git'],
    [
      'a .git file (a worktree or submodule)',
      async (root: string) => writeFile(join(root, '.git'), 'gitdir: /elsewhere\n'),
      'git',
    ],
    ['an .agent folder', async (root: string) => mkdir(join(root, '.agent')), 'agent-folder'],
  ] as const)('finds the root marked by %s from any folder below it', async (_, mark, kind) => {
    const dir = await scratch();
    const root = join(dir, 'repo');
    const deep = join(root, 'a', 'b', 'c');
    await mkdir(deep, { recursive: true });
    await mark(root);
    for (const start of [root, join(root, 'a'), deep])
      expect(findProjectRoot(start, { home: join(dir, 'home') })).toEqual({ root, kind });
  });

  it('the git root wins over a nearer .agent folder; the nearest .git wins over an outer one', async () => {
    const dir = await scratch();
    const root = join(dir, 'repo');
    const pkg = join(root, 'packages', 'pkg');
    await mkdir(join(pkg, '.agent'), { recursive: true });
    await mkdir(join(root, '.git'));
    expect(findProjectRoot(pkg, { home: dir })).toEqual({ root, kind: 'git' });
    const submodule = join(root, 'vendor', 'lib');
    await mkdir(join(submodule, 'src'), { recursive: true });
    await writeFile(join(submodule, '.git'), 'gitdir: ../../.git/modules/lib\n');
    expect(findProjectRoot(join(submodule, 'src'), { home: dir }).root).toBe(submodule);
  });

  it('without a marker the workspace is its own root; the user’s ~/.agent and $AGENT_HOME mark nothing', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const work = join(home, 'work', 'thing');
    await mkdir(join(home, '.agent'), { recursive: true });
    await mkdir(work, { recursive: true });
    expect(findProjectRoot(work, { home })).toEqual({ root: work, kind: 'workspace' });
    const custom = join(dir, 'custom');
    await mkdir(join(custom, '.agent'), { recursive: true });
    await mkdir(join(custom, 'x'));
    expect(
      findProjectRoot(join(custom, 'x'), { home, agentHome: join(custom, '.agent') }).kind,
    ).toBe('workspace');
    // A file named .agent is not a folder of settings.
    await writeFile(join(work, '.agent'), '');
    expect(findProjectRoot(work, { home }).kind).toBe('workspace');
  });

  it('works by real path: a symlink into a repository finds the repository', async () => {
    const dir = await scratch();
    const root = join(dir, 'repo');
    await mkdir(join(root, '.git'), { recursive: true });
    await mkdir(join(root, 'sub'));
    await symlink(join(root, 'sub'), join(dir, 'link'));
    expect(findProjectRoot(join(dir, 'link'), { home: dir }).root).toBe(root);
  });

  it('foldersDownTo lists the root and each folder down to the workspace', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    expect(foldersDownTo(dir, join(dir, 'a', 'b'))).toEqual([
      dir,
      join(dir, 'a'),
      join(dir, 'a', 'b'),
    ]);
    expect(foldersDownTo(dir, dir)).toEqual([dir]);
    expect(foldersDownTo(join(dir, 'a'), dir)).toEqual([join(dir, 'a')]);
  });
});

/** A git repository with configuration at its root and a subfolder to start in. */
async function repository() {
  const dir = await scratch();
  const home = join(dir, 'home');
  const root = join(dir, 'repo');
  const sub = join(root, 'src', 'deep');
  await mkdir(home);
  await mkdir(join(root, '.git'), { recursive: true });
  await mkdir(join(root, '.agent', 'hooks'), { recursive: true });
  await mkdir(sub, { recursive: true });
  await writeFile(join(root, 'AGENTS.md'), 'Root rule: run the tests.\n');
  await writeFile(join(root, 'src', 'AGENTS.md'), 'Src rule: keep modules small.\n');
  await writeFile(join(sub, 'AGENTS.md'), 'Deep rule: no globals.\n');
  // A relative path: it works only when the hook runs in the project root.
  await writeFile(
    join(root, '.agent', 'hooks', 'block.sh'),
    'echo "blocked by the repository hook" >&2\nexit 2\n',
  );
  await writeFile(
    join(root, '.agent', 'settings.json'),
    JSON.stringify({
      permissions: { defaultMode: 'workspace-write' },
      hooks: {
        PreToolUse: [
          { matcher: 'bash', hooks: [{ type: 'command', command: 'sh .agent/hooks/block.sh' }] },
        ],
      },
    }),
  );
  return { dir, home, root, sub, env: cleanEnv({ AGENT_HOME: home }) };
}

describe('started in a subfolder of a repository', () => {
  it('the repository’s hook blocks bash (run in the root); the tools still work in the subfolder', async () => {
    const repo = await repository();
    await writeFile(join(repo.sub, 'here.txt'), 'in the subfolder\n');
    const script = await writeScript(repo.dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'touch made-by-bash' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'here.txt' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'new.txt', content: 'x' } }] },
      { text: 'done' },
    ]);
    // As a user types it: `cd repo/src/deep && agent -p …` (no --cwd).
    const run = await runCli(['-p', 'go', '--scripted', script, '--trust'], {
      cwd: repo.sub,
      env: repo.env,
    });
    expect(run.stderr).toMatch(/✗ bash \[denied\]: .*blocked by the repository hook/);
    expect(existsSync(join(repo.sub, 'made-by-bash'))).toBe(false);
    expect(run.stderr).toMatch(/✓ read_file: .*in the subfolder/);
    // The project's defaultMode (workspace-write) applied: write_file ran without a question.
    expect(await readFile(join(repo.sub, 'new.txt'), 'utf8')).toBe('x');
    expect(run.stderr).toContain(`project: ${repo.root} (`);
    expect(run.code).toBe(0);
  });

  it('sends AGENTS.md of the root and of each folder down to the workspace, outermost first', async () => {
    const repo = await repository();
    const bodies: string[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(body);
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'recorded', type: 'invalid_request_error' } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    await runCli(['-p', 'hi', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'm'], {
      cwd: repo.sub,
      env: { ...repo.env, OPENAI_API_KEY: 'sk-test-key' },
    });
    const system = bodies.join('\n');
    const order = ['Root rule', 'Src rule', 'Deep rule'].map((rule) => system.indexOf(rule));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(system).toContain('(project, src/deep)');
    // The files are read with the same function the session uses.
    const text = await agentsInstructions({ cwd: repo.sub, root: repo.root }, repo.home);
    expect(text).toContain(`Instructions from ${join(repo.root, 'AGENTS.md')} (project):`);
  });

  it('the root’s .mcp.json server starts in the root; its skills and sub-agents are offered', async () => {
    const repo = await repository();
    const memory = join(appDir, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
    await mkdir(join(repo.root, 'tools'));
    await writeFile(join(repo.root, 'tools', 'memory.mjs'), `import ${JSON.stringify(memory)};\n`);
    await writeFile(
      join(repo.root, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          memory: {
            command: process.execPath,
            args: ['tools/memory.mjs'],
            env: { MEMORY_FILE_PATH: join(repo.dir, 'memory.jsonl') },
          },
        },
      }),
    );
    const skill = join(repo.root, '.agent', 'skills', 'greeter');
    await mkdir(skill, { recursive: true });
    await writeFile(
      join(skill, 'SKILL.md'),
      '---\nname: greeter\ndescription: Greets.\n---\nSay hello.\n',
    );
    await mkdir(join(repo.root, '.agent', 'agents'));
    await writeFile(
      join(repo.root, '.agent', 'agents', 'helper.md'),
      '---\nname: helper\ndescription: Helps.\n---\nHelp.\n',
    );
    const script = await writeScript(repo.dir, [
      { toolCalls: [{ name: 'memory__read_graph', arguments: {} }] },
      { text: 'ok' },
    ]);
    const run = await runCli(
      [
        ...['-p', 'go', '--scripted', script, '--trust', '--output-format', 'stream-json'],
        // A server's readOnlyHint does not let its tools run unasked.
        ...['--allow', 'memory__read_graph'],
      ],
      { cwd: repo.sub, env: repo.env },
    );
    const start = JSON.parse(run.stdout.split('\n')[0] ?? '{}') as {
      cwd?: string;
      tools?: string[];
    };
    expect(start.cwd).toBe(repo.sub);
    expect(start.tools).toEqual(expect.arrayContaining(['memory__read_graph', 'skill', 'helper']));
    expect(run.stdout).toMatch(
      /"type":"tool-result"[^\n]*"toolName":"memory__read_graph"[^\n]*"isError":false/,
    );
    expect(run.code).toBe(0);
  });
});
