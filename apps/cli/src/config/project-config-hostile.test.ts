// Every file the CLI reads from a project at start, with content that is not what it expects
// (unknown keys, wrong types, broken JSON, huge or binary files, a FIFO or a folder in its place):
// the CLI warns, naming the file, and runs — untrusted or trusted. A cloned repository (or one
// written for a newer version) used to stop every `agent` in it (exit 1, "unknown setting").
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(() => assertBuilt());

/** How a case fills its file: text (or bytes), a folder, or a FIFO in its place. */
type Content = string | Buffer | { folder: true } | { fifo: true };

const settings = '.agent/settings.json';
const local = '.agent/settings.local.json';
const mcp = '.mcp.json';
const invalidUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
const huge = `{"model":"${'x'.repeat(2 * 1024 * 1024)}"}`;
const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;

const cases: { name: string; file: string; content: Content }[] = [
  { name: 'an unknown key', file: settings, content: '{"bogus":1}' },
  { name: 'a non-string allow rule', file: settings, content: '{"permissions":{"allow":[5]}}' },
  {
    name: 'an allow list that is a string',
    file: settings,
    content: '{"permissions":{"allow":"Read"}}',
  },
  { name: 'an unusable deny rule', file: settings, content: '{"permissions":{"deny":["Bash("]}}' },
  { name: 'an unknown permission key', file: settings, content: '{"permissions":{"later":true}}' },
  { name: 'permissions as a list', file: settings, content: '{"permissions":[]}' },
  {
    name: "another agent's mode",
    file: settings,
    content: '{"permissions":{"defaultMode":"yolo"}}',
  },
  {
    name: 'keepGrants as a string',
    file: settings,
    content: '{"permissions":{"keepGrants":"yes"}}',
  },
  { name: 'a model that is a number', file: settings, content: '{"model":5}' },
  { name: 'an unknown provider', file: settings, content: '{"provider":"nope"}' },
  { name: 'an unknown sandbox mode', file: settings, content: '{"sandbox":"maybe"}' },
  { name: 'env with a number', file: settings, content: '{"env":{"A":5}}' },
  { name: 'env as a list', file: settings, content: '{"env":[1,2]}' },
  { name: 'env as null', file: settings, content: '{"env":null}' },
  { name: 'hooks of an unknown event', file: settings, content: '{"hooks":{"Later":[]}}' },
  { name: 'hooks as a number', file: settings, content: '{"hooks":5}' },
  {
    name: 'a hook without command',
    file: settings,
    content: '{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}',
  },
  { name: 'mcpServers as a number', file: settings, content: '{"mcpServers":5}' },
  { name: 'a server that is a number', file: settings, content: '{"mcpServers":{"x":5}}' },
  {
    name: 'a server with an unknown key',
    file: settings,
    content: '{"mcpServers":{"x":{"command":"true","later":1}}}',
  },
  { name: 'mcpTimeout below zero', file: settings, content: '{"mcpTimeout":-1}' },
  { name: 'tools as a number', file: settings, content: '{"tools":5}' },
  { name: 'tools naming nothing known', file: settings, content: '{"tools":["-no such tool!"]}' },
  { name: 'a user-only key of the wrong type', file: settings, content: '{"compaction":"big"}' },
  { name: 'a JSON list', file: settings, content: '[]' },
  { name: 'JSON null', file: settings, content: 'null' },
  { name: 'broken JSON', file: settings, content: '{"model": ' },
  { name: 'an empty file', file: settings, content: '' },
  { name: 'bytes that are not UTF-8', file: settings, content: invalidUtf8 },
  { name: 'a file over the size limit', file: settings, content: huge },
  { name: 'deeply nested JSON', file: settings, content: deep },
  { name: 'a folder', file: settings, content: { folder: true } },
  { name: 'a FIFO', file: settings, content: { fifo: true } },
  { name: 'an unknown key', file: local, content: '{"bogus":1}' },
  { name: 'broken JSON', file: local, content: '{' },
  { name: 'a JSON list', file: mcp, content: '[]' },
  { name: 'mcpServers as a number', file: mcp, content: '{"mcpServers":5}' },
  { name: 'no mcpServers', file: mcp, content: '{"servers":{}}' },
  {
    name: 'a server with a url that is a number',
    file: mcp,
    content: '{"mcpServers":{"x":{"url":5}}}',
  },
  { name: 'broken JSON', file: mcp, content: '{"mcpServers":' },
  { name: 'a FIFO', file: mcp, content: { fifo: true } },
  { name: 'bytes that are not UTF-8', file: 'AGENTS.md', content: invalidUtf8 },
  { name: 'a FIFO', file: 'AGENTS.md', content: { fifo: true } },
  { name: 'a folder', file: 'AGENTS.md', content: { folder: true } },
  {
    name: 'broken front matter',
    file: '.agent/skills/x/SKILL.md',
    content: '---\nname: [\n---\nbody',
  },
  {
    name: 'front matter of the wrong types',
    file: '.agent/skills/x/SKILL.md',
    content: '---\nname: 5\ndescription: {a: 1}\n---\nbody',
  },
  { name: 'a FIFO', file: '.agent/skills/x/SKILL.md', content: { fifo: true } },
  { name: 'broken front matter', file: '.agent/agents/x.md', content: '---\nname: [\n---\nbody' },
  {
    name: 'front matter of the wrong types',
    file: '.agent/agents/x.md',
    content: '---\nname: 5\ntools: 7\nmodel: []\n---\nbody',
  },
  { name: 'bytes that are not UTF-8', file: '.agent/agents/x.md', content: invalidUtf8 },
  { name: 'a FIFO', file: '.agent/agents/x.md', content: { fifo: true } },
  { name: 'broken front matter', file: '.claude/agents/x.md', content: '---\n: :\n---\n' },
];

/** A temp folder removed when the test's `await using` ends (the cases run concurrently). */
async function disposableTempDir() {
  const dir = await tempDir('agent-cli-hostile-config-');
  return { path: dir.path, [Symbol.asyncDispose]: dir.dispose };
}

async function place(path: string, content: Content): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  if (typeof content === 'string' || Buffer.isBuffer(content)) await writeFile(path, content);
  else if ('folder' in content) await mkdir(path);
  else execFileSync('mkfifo', [path]);
}

/** Cases run in a trusted folder too (the rest only untrusted: the files are read the same way). */
const trustedToo = new Set(['an unknown key', 'a non-string allow rule', 'broken JSON', 'a FIFO']);

describe.concurrent('a project file the CLI cannot use', () => {
  it.each(
    cases.flatMap((item) =>
      [false, true]
        .filter((trusted) => !trusted || trustedToo.has(item.name))
        .map((trusted) => ({ ...item, trusted })),
    ),
  )('$file holding $name (trusted: $trusted): the CLI runs', async ({ file, content, trusted }) => {
    await using dir = await disposableTempDir();
    const home = join(dir.path, 'home');
    const workspace = join(dir.path, 'ws');
    await mkdir(home);
    await mkdir(workspace);
    await place(join(workspace, file), content);
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', workspace, ...(trusted ? ['--trust'] : [])],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('answered');
    // A settings file it could not use is named on stderr.
    if (file === settings || file === local || file === mcp)
      expect(run.stderr).toContain(join(workspace, file));
  });
});

describe('a deny rule the CLI cannot use, in a project file', () => {
  it.each([
    { rule: '"Bash(rm -rf"', asks: 'Bash asks' },
    { rule: '5', asks: 'every tool asks' },
  ])(
    '$rule: said loudly, and what it could match asks first (-p: refused)',
    async ({ rule, asks }) => {
      await using dir = await disposableTempDir();
      const home = join(dir.path, 'home');
      const workspace = join(dir.path, 'ws');
      await mkdir(home);
      await place(
        join(workspace, settings),
        `{"permissions":{"deny":[${rule}, "Read(./secret)"],"allow":["Bash"]}}`,
      );
      const marker = join(workspace, 'ran');
      const script = await writeScript(dir.path, [
        { toolCalls: [{ name: 'bash', arguments: { command: `touch ${marker}` } }] },
        { text: 'answered' },
      ]);
      const run = await runCli(
        [
          '-p',
          'go',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--trust',
          '--mode',
          'full-access',
          '--sandbox',
          'off',
        ],
        { env: cleanEnv({ AGENT_HOME: home }) },
      );
      // 4: a call needed approval and -p could not ask.
      expect(run.code, run.stderr).toBe(4);
      expect(run.stdout).toContain('answered');
      expect(run.stderr).toContain(`${join(workspace, settings)}: permissions.deny[0]`);
      expect(run.stderr).toContain(asks);
      expect(existsSync(marker)).toBe(false);
    },
  );
});

describe.concurrent('a PreToolUse guard the CLI cannot use, in a trusted project file', () => {
  const guard = '{"type":"command","command":"exit 2"}';
  it.each([
    {
      name: 'an entry without a command',
      content: '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command"}]}]}}',
      asks: 'Bash asks',
    },
    {
      name: 'a matcher of two names, one entry broken',
      content: `{"hooks":{"PreToolUse":[{"matcher":"Edit|Bash","hooks":[${guard}, 7]}]}}`,
      asks: 'Edit, Bash ask',
    },
    {
      name: 'a matcher that is not a string',
      content: `{"hooks":{"PreToolUse":[{"matcher":5,"hooks":[${guard}]}]}}`,
      asks: 'every tool asks',
    },
    {
      name: 'a regular expression for a matcher, an entry broken',
      content: `{"hooks":{"PreToolUse":[{"matcher":"Ba.*","hooks":[${guard}, 7]}]}}`,
      asks: 'every tool asks',
    },
    {
      name: 'PreToolUse not a list',
      content: `{"hooks":{"PreToolUse":{"matcher":"Bash","hooks":[${guard}]}}}`,
      asks: 'every tool asks',
    },
    {
      name: 'a typo of PreToolUse',
      content: `{"hooks":{"PreToolUs":[{"matcher":"Bash","hooks":[${guard}]}]}}`,
      asks: 'every tool asks',
    },
    { name: 'hooks not an object', content: `{"hooks":[${guard}]}`, asks: 'every tool asks' },
    {
      name: 'the whole file broken JSON',
      content: `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[${guard}]}]}`,
      asks: 'every tool asks',
    },
  ])(
    '$name: said loudly, and what it guards asks first (-p: refused)',
    async ({ content, asks }) => {
      await using dir = await disposableTempDir();
      const { run, ran } = await bashWith(dir.path, content);
      // 4: a call needed approval and -p could not ask.
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toContain(join(dir.path, 'ws', settings));
      expect(run.stderr).toContain(asks);
      expect(ran).toBe(false);
    },
  );

  it('the control: a PostToolUse entry that cannot be used is only left out', async () => {
    await using dir = await disposableTempDir();
    const { run, ran } = await bashWith(
      dir.path,
      '{"hooks":{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command"}]}]}}',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('PostToolUse');
    expect(ran).toBe(true);
  });
});

describe.concurrent('an unreadable settings file or unusable guard, by trust', () => {
  // In an untrusted folder the project's hooks never run, and its deny rules only narrow what the
  // user allows: a broken file there is as if there were none — a cloned repository must not make
  // every call ask (in -p: refused, exit 4). In a trusted one the guards it held are unknown.
  it.each([
    { name: 'broken JSON', content: '{"permissions":{"deny":["Bash"]' },
    { name: 'not an object', content: '[1]' },
    {
      name: 'a PreToolUse entry without a command',
      content: '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command"}]}]}}',
    },
    { name: 'hooks not an object', content: '{"hooks":[1]}' },
  ])('$name: untrusted, the call runs; trusted, it asks (-p: refused)', async ({ content }) => {
    await using dir = await disposableTempDir();
    const untrusted = await bashWith(join(dir.path, 'a'), content, false);
    expect(untrusted.run.code, untrusted.run.stderr).toBe(0);
    expect(untrusted.run.stderr).toContain(join(dir.path, 'a', 'ws', settings));
    expect(untrusted.ran).toBe(true);
    const trusted = await bashWith(join(dir.path, 'b'), content);
    expect(trusted.run.code, trusted.run.stderr).toBe(4);
    expect(trusted.ran).toBe(false);
  });
});

/**
 * A project (trusted unless `trusted` is false) whose settings file holds `content`, and one bash
 * call in it (`-p`, full-access, no sandbox: nothing but the rules and the hooks stands in its
 * way); whether it ran.
 */
async function bashWith(dir: string, content: string, trusted = true) {
  const home = join(dir, 'home');
  const workspace = join(dir, 'ws');
  await mkdir(home, { recursive: true });
  await place(join(workspace, settings), content);
  const marker = join(workspace, 'ran');
  const script = await writeScript(dir, [
    { toolCalls: [{ name: 'bash', arguments: { command: `touch ${marker}` } }] },
    { text: 'answered' },
  ]);
  const run = await runCli(
    [
      ...['-p', 'go', '--scripted', script, '--cwd', workspace, ...(trusted ? ['--trust'] : [])],
      ...['--mode', 'full-access', '--sandbox', 'off'],
    ],
    { env: cleanEnv({ AGENT_HOME: home }) },
  );
  return { run, ran: existsSync(marker) };
}

describe("the user's own settings", () => {
  it('an unknown key (a newer version’s) is said, and the CLI runs', async () => {
    await using dir = await disposableTempDir();
    const home = join(dir.path, 'home');
    await place(join(home, 'settings.json'), '{"later":1,"model":"kept"}');
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', dir.path], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${join(home, 'settings.json')}: unknown setting "later"`);
  });

  it('a value that cannot be used is an error naming file and key', async () => {
    await using dir = await disposableTempDir();
    const home = join(dir.path, 'home');
    await place(join(home, 'settings.json'), '{"permissions":{"allow":[5]}}');
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', dir.path], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${join(home, 'settings.json')}: permissions.allow[0]`);
  });
});
