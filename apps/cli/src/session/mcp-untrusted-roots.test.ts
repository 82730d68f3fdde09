// The user's own MCP server, innocent, working in the roots the CLI lists for it (as git, linter
// and indexer servers do): it runs git status and git diff, npx prettier, python -m and make
// there, once initialised (before anyone said a word) and at its tool's call. The folder is a
// cloned repository the user has not trusted. The repository makes each of them
// run its payload: core.fsmonitor, a hooksPath hook, a clean filter, diff.external,
// node_modules/.bin, a module shadowing the standard library, a Makefile's $(shell). The payload
// writes a canary in the user's home and copies the user's SSH key into the workspace. Real
// processes throughout: the built CLI through -p, real git, npx, python3, make and bubblewrap.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
beforeEach(skipWithout('bwrap', 'python3'));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const server = join(appDir, 'src/__fixtures__/workspace-commands-server.mjs');
// The server's node, and npx's: not under /root, which the sandbox hides as root's own home when
// HOME is another folder (this test's), as this toolchain's node is.
const node =
  ['/usr/local/bin/node', '/usr/bin/node'].find((path) => existsSync(path)) ?? process.execPath;
const systemPath = `${dirname(node)}:/usr/local/bin:/usr/bin:/bin`;
const sshKey = 'hostile-test-private-key';
/** Each vector's label: the canary its payload leaves when it runs. */
const vectors = ['fsmonitor', 'hook', 'filter', 'diff-external', 'npx', 'python', 'make'];

/** The user's home (with a key and a settings file naming the server) and the hostile clone. */
async function setup(options: { entry?: Record<string, unknown> } = {}) {
  const dir = await tempDir('agent-cli-mcp-sandbox-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const agentHome = join(home, '.agent');
  const outside = join(home, 'outside');
  const repo = join(dir.path, 'repo');
  await mkdir(agentHome, { recursive: true });
  await mkdir(join(home, '.ssh'));
  await mkdir(outside);
  await mkdir(repo);
  await writeFile(join(home, '.ssh', 'id_ed25519'), `${sshKey}\n`);
  // The payload: a canary outside the workspace, and the key copied into it.
  await writeFile(
    join(repo, 'payload.sh'),
    `touch '${outside}'/"$1"\ncat '${join(home, '.ssh', 'id_ed25519')}' > '${repo}'/leak-"$1" 2>/dev/null\nexit 0\n`,
  );
  const payload = (label: string) => `sh '${join(repo, 'payload.sh')}' ${label}`;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  await writeFile(join(repo, 'notes.txt'), 'one\n');
  await writeFile(join(repo, '.gitattributes'), 'notes.txt filter=evil\n');
  git('add', 'notes.txt', '.gitattributes');
  git('-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'first');
  await mkdir(join(repo, 'hooks'));
  await writeFile(join(repo, 'hooks', 'post-index-change'), `#!/bin/sh\n${payload('hook')}\n`);
  await chmod(join(repo, 'hooks', 'post-index-change'), 0o755);
  git('config', 'core.fsmonitor', `${payload('fsmonitor')}; false #`);
  git('config', 'core.hooksPath', join(repo, 'hooks'));
  git('config', 'filter.evil.clean', `${payload('filter')}; cat`);
  git('config', 'diff.external', payload('diff-external'));
  await writeFile(join(repo, 'notes.txt'), 'one\ntwo\n');
  // npx runs the folder's own prettier; python -m imports the folder's json.py first.
  await mkdir(join(repo, 'node_modules', '.bin'), { recursive: true });
  await writeFile(join(repo, 'package.json'), '{"name":"cloned","version":"1.0.0"}');
  await writeFile(join(repo, 'node_modules', '.bin', 'prettier'), `#!/bin/sh\n${payload('npx')}\n`);
  await chmod(join(repo, 'node_modules', '.bin', 'prettier'), 0o755);
  await writeFile(
    join(repo, 'json.py'),
    `import subprocess\nsubprocess.run(['sh', ${JSON.stringify(join(repo, 'payload.sh'))}, 'python'])\n`,
  );
  await writeFile(join(repo, 'Makefile'), `X := $(shell ${payload('make')})\nall:\n\t@true\n`);
  const commands = [
    ['git', 'status', '--porcelain'],
    ['git', 'diff'],
    ['npx', '--no', '--', 'prettier', '--check', '.'],
    ['python3', '-m', 'json.tool', '--help'],
    ['make', '-n'],
  ];
  await writeFile(
    join(agentHome, 'settings.json'),
    JSON.stringify({
      mcpServers: {
        workspace: {
          command: node,
          args: [server, JSON.stringify(commands)],
          ...options.entry,
        },
      },
    }),
  );
  const saved = join(dir.path, 'conversation.json');
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'workspace__run', arguments: {} }] },
    { text: 'done' },
  ]);
  const env = cleanEnv({
    HOME: home,
    AGENT_HOME: agentHome,
    PATH: systemPath,
    npm_config_update_notifier: 'false',
  });
  const args = ['-p', 'go', '--scripted', script, '--cwd', repo, '--mode', 'full-access'];
  const run = (extra: string[] = [], runEnv = env) =>
    runCli([...args, '--save', saved, ...extra], { cwd: repo, env: runEnv });
  /** The text of each tool result of the run. */
  const results = async () => {
    const data = JSON.parse(await readFile(saved, 'utf8')) as {
      messages: { role: string; toolName?: string; content: { text?: string }[] }[];
    };
    return data.messages
      .filter((message) => message.role === 'toolResult')
      .map((message) => `${message.toolName}: ${message.content[0]?.text ?? ''}`);
  };
  /** The canaries the payload left, and what it copied of the key. */
  const reached = async () => {
    const leaked: string[] = [];
    for (const name of await readdir(repo))
      if (name.startsWith('leak-') && (await readFile(join(repo, name), 'utf8')).includes(sshKey))
        leaked.push(name.slice('leak-'.length));
    return { canaries: (await readdir(outside)).sort(), leaked: leaked.sort() };
  };
  return { dir: dir.path, home, repo, env, run, results, reached };
}

describe("the user's MCP server that works in its roots, in a folder not trusted", () => {
  it('outside the sandbox: listed no roots, it runs nothing of the folder — at start or at a call', async () => {
    const t = await setup();
    const run = await t.run();
    expect(run.code, run.stderr).toBe(0);
    expect(await t.reached()).toEqual({ canaries: [], leaked: [] });
    expect(run.stderr).toContain(
      'mcp: workspace run outside the OS sandbox, so they are not given this folder as a root until you trust it',
    );
    // Said once, with the start in the home directory.
    expect(run.stderr.split('not given this folder as a root')).toHaveLength(2);
    expect(run.stderr).toContain(`mcp: workspace start in ${t.home}, not in this folder`);
    // The server is there and answers; it has no folder to work in.
    const results = await t.results();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/^workspace__run: .*\nno roots\n/s);
  });

  it('trusted (--trust): the folder is its root, as before — each vector is live (the control)', async () => {
    const t = await setup();
    const run = await t.run(['--trust']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('not given this folder as a root');
    expect((await t.results()).join('\n')).toContain('git status --porcelain: exit 0: M notes.txt');
    expect(await t.reached()).toEqual({
      canaries: [...vectors].sort(),
      leaked: [...vectors].sort(),
    });
  });

  it('an entry that asks for the sandbox keeps the folder as its root: it works there, contained', async () => {
    const t = await setup({ entry: { sandbox: true } });
    const run = await t.run();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('not given this folder as a root');
    const result = (await t.results()).join('\n');
    expect(result).toContain(`${t.repo}: git status --porcelain: exit 0: M notes.txt`);
    expect(result).toContain('prettier --check .: exit 0');
    expect(result).toContain('make -n: exit 0');
    expect(await t.reached()).toEqual({ canaries: [], leaked: [] });
  });
});
