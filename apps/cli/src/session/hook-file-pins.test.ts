import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { assertBuilt, tempDir } from '../testing/test-support.js';
import { type HookSetup, runHookSession } from '../testing/trusted-hook-session.js';

// A trusted folder's hooks run outside the sandbox, and what they run is often a file of the
// project (`sh scripts/hooks/post.sh`;
// not under `.agent/`, which is read-only in the sandbox and asks before a file tool writes there). A sandboxed bash call or a file edit — both allowed without
// a question in workspace-write mode — rewrote that script, and the next tool call's hook ran it
// as the user, outside the sandbox: an escape from the sandbox, and past trust's pin (which is
// checked at start only).

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const scriptHook: HookSetup = {
  command: 'sh scripts/hooks/post.sh',
  files: { 'scripts/hooks/post.sh': 'echo ran >> "OUTSIDE/hook-ran"\n' },
};

/**
 * A trusted-by-flag repository whose PostToolUse hook runs its own script; the run's outcome.
 * `path`: the CLI's PATH [the tests'].
 */
function runWithHook(
  turns: (outside: string) => Turn[],
  setup: HookSetup = scriptHook,
  path?: (repo: string) => string,
) {
  return runHookSession({ turns, setup, cleanups, ...(path === undefined ? {} : { path }) });
}

const planted = (outside: string) => `touch "${join(outside, 'escaped')}"\n`;

describe("a trusted hook's script rewritten during the session", () => {
  it.each([
    [
      'by write_file',
      (outside: string): Turn => ({
        tool: {
          name: 'write_file',
          input: { path: 'scripts/hooks/post.sh', content: planted(outside) },
        },
      }),
    ],
    [
      'by a sandboxed bash command',
      (outside: string): Turn => ({
        tool: {
          name: 'bash',
          input: { command: `printf '%s' '${planted(outside)}' > scripts/hooks/post.sh` },
        },
      }),
    ],
  ])('%s: the hook does not run it outside the sandbox, and says why', async (_how, rewrite) => {
    const { run, outside, ran } = await runWithHook((outside) => [
      { tool: { name: 'list_files', input: { path: '.' } } },
      rewrite(outside),
      { tool: { name: 'list_files', input: { path: '.' } } },
      { text: 'done' },
    ]);
    expect(run.code).toBe(0);
    // The hook ran as trusted until its script changed (the control: it can write outside).
    expect(ran).toBe('ran\n');
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    expect(run.stderr).toContain(
      'PostToolUse hook "sh scripts/hooks/post.sh" did not run: the project files it runs changed during this session (scripts/hooks/post.sh)',
    );
  });

  it('an unchanged script runs after every call', async () => {
    const { run, ran } = await runWithHook(() => [
      { tool: { name: 'list_files', input: { path: '.' } } },
      { tool: { name: 'glob', input: { pattern: '*' } } },
      { text: 'done' },
    ]);
    expect(run.code).toBe(0);
    expect(ran).toBe('ran\nran\n');
    expect(run.stderr).not.toContain('did not run');
  });
});

describe('a formatter config written during the session', () => {
  // The user's formatter hook runs outside the sandbox, and a formatter loads the project's
  // config as code (`.prettierrc.cjs` runs in prettier's process): a config a sandboxed command
  // wrote would run as the user at the next tool call. This stand-in loads it as prettier does,
  // by searching for it (its text names no config file, as prettier's bin does not).
  const formatterHook: HookSetup = {
    command: './node_modules/.bin/prettier --write .',
    files: {
      'node_modules/.bin/prettier':
        '#!/bin/sh\nfor config in ./.*rc.cjs; do [ -f "$config" ] && node "$config"; done\necho ran >> "OUTSIDE/hook-ran"\n',
    },
  };
  const config = (outside: string) =>
    `require("fs").writeFileSync(${JSON.stringify(join(outside, 'escaped'))}, "")\n`;

  it.each([
    [
      'by write_file',
      (outside: string): Turn => ({
        tool: { name: 'write_file', input: { path: '.prettierrc.cjs', content: config(outside) } },
      }),
    ],
    [
      'by a sandboxed bash command',
      (outside: string): Turn => ({
        tool: {
          name: 'bash',
          input: { command: `printf '%s' '${config(outside)}' > .prettierrc.cjs` },
        },
      }),
    ],
  ])(
    '%s: the formatter hook does not run outside the sandbox, and says why',
    async (_how, write) => {
      const { run, outside, ran } = await runWithHook(
        (outside) => [
          { tool: { name: 'list_files', input: { path: '.' } } },
          write(outside),
          { tool: { name: 'list_files', input: { path: '.' } } },
          { text: 'done' },
        ],
        formatterHook,
      );
      expect(run.code).toBe(0);
      // It ran before the config existed (the control: its config could have written outside).
      expect(ran).toBe('ran\n');
      expect(existsSync(join(outside, 'escaped'))).toBe(false);
      expect(run.stderr).toContain(
        'PostToolUse hook "./node_modules/.bin/prettier --write ." did not run: the project files it runs changed during this session (.prettierrc.cjs)',
      );
    },
  );
});

describe("a formatter's config key written into package.json during the session", () => {
  // prettier takes a package.json's "prettier" key as its config, and a string there is a module
  // it requires (a shared config): `{"prettier": "./x.cjs"}` ran x.cjs in the user's formatter
  // hook, outside the sandbox. The real prettier, installed outside the project.
  const prettier = join(
    import.meta.dirname,
    '../../../../node_modules/.pnpm/prettier@2.8.8/node_modules/prettier/bin-prettier.js',
  );

  it('the hook does not run prettier again, and says why', async (context) => {
    if (!existsSync(prettier)) context.skip();
    const bin = await tempDir('agent-cli-prettier-bin-');
    cleanups.push(bin.dispose);
    await symlink(prettier, join(bin.path, 'prettier'));
    const module = (outside: string) =>
      `require("fs").writeFileSync(${JSON.stringify(join(outside, 'escaped'))}, "");\nmodule.exports = {};\n`;
    const { run, outside } = await runWithHook(
      (outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        { tool: { name: 'write_file', input: { path: 'x.cjs', content: module(outside) } } },
        {
          tool: {
            name: 'write_file',
            input: { path: 'package.json', content: '{"name":"a","prettier":"./x.cjs"}\n' },
          },
        },
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ],
      {
        command: `${join(bin.path, 'prettier')} --check a.js`,
        files: { 'a.js': 'let a = 1;\n', 'package.json': '{"name":"a"}\n' },
      },
    );
    expect(run.code).toBe(0);
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    expect(run.stderr).toContain(
      'did not run: the project files it runs changed during this session',
    );
    expect(run.stderr).toContain('package.json#prettier');
  });
});

describe("a package runner's config written during the session", () => {
  // npx and npm run read the project's .npmrc: `script-shell` is the shell they run the command
  // with, `node-options` a NODE_OPTIONS (`--require ./x.cjs`). A sandboxed command wrote one, and
  // the user's `npx …` hook ran what it named as the user, outside the sandbox. Real npx, offline.
  const runner = `PATH=${dirname(process.execPath)}:$PATH npm_config_update_notifier=false`;
  const shell = (outside: string) =>
    `#!/bin/sh\ntouch "${join(outside, 'escaped')}"\nexec /bin/sh "$@"\n`;

  it.each([
    ['npx --offline tool', 'npx'],
    ['npm run --offline lint', 'npm run'],
  ])('%s: the hook does not run again, and says why', async (command) => {
    const { run, outside, ran } = await runWithHook(
      (outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        { tool: { name: 'write_file', input: { path: 'shell.sh', content: shell(outside) } } },
        { tool: { name: 'bash', input: { command: 'chmod +x shell.sh' } } },
        {
          tool: {
            name: 'write_file',
            input: { path: '.npmrc', content: 'script-shell=./shell.sh\n' },
          },
        },
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ],
      {
        command: `${runner} ${command}`,
        files: {
          'package.json': '{"name":"a","scripts":{"lint":"tool"}}\n',
          'node_modules/.bin/tool': '#!/bin/sh\necho ran >> "OUTSIDE/hook-ran"\n',
        },
      },
    );
    expect(run.code).toBe(0);
    // It ran before .npmrc existed (the control).
    expect(ran).toContain('ran\n');
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    expect(run.stderr).toContain('changed during this session (.npmrc');
  });
});

describe('a module written during the session where python -m finds it first', () => {
  // `python -m <module>` puts the folder it runs in first on sys.path: a `json.py` a sandboxed
  // command wrote at the root ran, as the user, in the trusted folder's `python3 -m json.tool`
  // hook — outside the sandbox.
  it('the hook does not run again, and says why', async () => {
    const module = (outside: string) => `open(${JSON.stringify(join(outside, 'escaped'))}, "w")\n`;
    const { run, outside } = await runWithHook(
      (outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        { tool: { name: 'write_file', input: { path: 'json.py', content: module(outside) } } },
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ],
      { command: 'python3 -m json.tool > /dev/null', files: {} },
    );
    expect(run.code).toBe(0);
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    expect(run.stderr).toContain('changed during this session (json.py)');
  });
});

describe('a program a hook runs by name, written where PATH finds it in the workspace', () => {
  // A PATH with a folder of the workspace in it (an activated `.venv/bin`, `./node_modules/.bin`,
  // a relative entry): the `black` a hook runs by name is the workspace's file there, which a
  // sandboxed command could write — and the hook ran it as the user, outside the sandbox.
  it.each([
    ['.venv/bin, inside the workspace', (repo: string) => join(repo, '.venv/bin')],
    ['a relative entry', () => '.venv/bin'],
  ])('%s: the hook does not run it, and says why', async (_how, entry) => {
    const planted = (outside: string) => `#!/bin/sh\ntouch "${join(outside, 'escaped')}"\n`;
    const { run, outside } = await runWithHook(
      (outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        {
          tool: {
            name: 'write_file',
            input: { path: '.venv/bin/black', content: planted(outside) },
          },
        },
        { tool: { name: 'bash', input: { command: 'chmod +x .venv/bin/black' } } },
        { text: 'done' },
      ],
      { command: 'black --quiet .', files: { '.venv/bin/.keep': '' } },
      (repo) => `${entry(repo)}:${process.env.PATH ?? ''}`,
    );
    expect(run.code).toBe(0);
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    // A relative entry is left out of every PATH the CLI passes on (said at start).
    expect(run.stderr).toMatch(
      /changed during this session \(\.venv\/bin\/black\)|PATH entries left out: \.venv\/bin/,
    );
  });
});
