// `--tools` and the "tools" setting through the built CLI: a scripted model calls Kiro's tool
// names and they resolve; removals and unknown names; what a project file may and may not do.
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface SavedResult {
  role: string;
  toolName?: string;
  isError?: boolean;
  content?: { type: string; text?: string }[];
}

async function setup() {
  const dir = await tempDir('agent-cli-tools-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace, { recursive: true });
  await mkdir(home, { recursive: true });
  // The project's settings are its own (a git root would be found further up otherwise).
  await mkdir(join(workspace, '.agent'));
  // A stand-in for the AWS CLI (AWS cannot be reached here), inside the workspace so the
  // sandboxed command sees it: prints each argument it got.
  const bin = join(workspace, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'aws'), '#!/bin/sh\nfor a in "$@"; do printf "<%s>\\n" "$a"; done\n');
  await chmod(join(bin, 'aws'), 0o755);
  const env = cleanEnv({ AGENT_HOME: home, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` });
  return { dir: dir.path, workspace, home, env };
}

/** Runs one scripted -p session and returns the tool results it saved, in call order. */
async function runCalls(
  context: Awaited<ReturnType<typeof setup>>,
  calls: { name: string; arguments: Record<string, unknown> }[],
  flags: string[],
) {
  const script = await writeScript(context.dir, [
    ...calls.map((call) => ({ toolCalls: [call] })),
    { text: 'done' },
  ]);
  const save = join(context.dir, 'saved.json');
  const run = await runCli(
    [
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      context.workspace,
      '--mode',
      'full-access',
      '--save',
      save,
      ...flags,
    ],
    { env: context.env },
  );
  expect(run.code, run.stderr).toBe(0);
  const saved = JSON.parse(await readFile(save, 'utf8')) as { messages: SavedResult[] };
  const results = saved.messages.filter((message) => message.role === 'toolResult');
  expect(results).toHaveLength(calls.length);
  const outcomes = results.map((result) => ({
    isError: result.isError === true,
    text: (result.content ?? []).map((part) => part.text ?? '').join(''),
  }));
  // The run's notices too, for tests about what was said at start.
  return Object.assign(outcomes, { stderr: run.stderr });
}

const kiroCalls = [
  { name: 'thinking', arguments: { thought: 'The buckets first, then the notes.' } },
  {
    name: 'use_aws',
    arguments: {
      service_name: 's3api',
      operation_name: 'list-buckets',
      region: 'us-west-2',
      label: 'List buckets',
    },
  },
  {
    name: 'knowledge',
    arguments: { command: 'add', name: 'notes', value: 'The deploy bucket is called tern.' },
  },
  { name: 'knowledge', arguments: { command: 'search', query: 'deploy bucket' } },
  { name: 'introspect', arguments: { query: 'aws' } },
];

describe('--tools', () => {
  it("default,kiro: Kiro's names resolve and run (thinking, use_aws with a fake aws, knowledge, introspect)", async () => {
    const context = await setup();
    const [think, aws, add, search, introspect] = await runCalls(context, kiroCalls, [
      '--tools',
      'default,kiro',
    ]);
    expect(think).toEqual({ isError: false, text: 'Thought recorded.' });
    expect(aws?.isError, aws?.text).toBe(false);
    expect(aws?.text.match(/<[^>]*>/g)).toEqual([
      '<s3api>',
      '<list-buckets>',
      '<--region>',
      '<us-west-2>',
    ]);
    expect(add?.isError, add?.text).toBe(false);
    expect(search?.isError, search?.text).toBe(false);
    expect(search?.text).toContain('The deploy bucket is called tern.');
    expect(introspect?.isError, introspect?.text).toBe(false);
    expect(introspect?.text).toContain('use_aws');
    // The default set is still there.
    const [bash] = await runCalls(
      context,
      [{ name: 'bash', arguments: { command: 'echo hi' } }],
      ['--tools=default,kiro'],
    );
    expect(bash).toMatchObject({ isError: false });
    expect(bash?.text).toContain('hi');
  });

  it('each opt-in name alone adds just that tool to default', async () => {
    const context = await setup();
    const [think, introspect] = await runCalls(
      context,
      [kiroCalls[0], kiroCalls[4]].filter((call) => call !== undefined),
      ['--tools', 'default,think'],
    );
    expect(think).toEqual({ isError: false, text: 'Thought recorded.' });
    expect(introspect).toEqual({
      isError: true,
      text: expect.stringContaining('Tool not found: introspect'),
    });
  });

  it("without the flag the opt-in tools stay out (today's set)", async () => {
    const context = await setup();
    const results = await runCalls(context, kiroCalls, []);
    for (const [index, result] of results.entries()) {
      expect(result.isError).toBe(true);
      expect(result.text).toContain(`Tool not found: ${kiroCalls[index]?.name}`);
    }
  });

  it.each([['--tools=-bash'], ['--tools=default,-bash'], ['--tools=default,kiro,-bash']])(
    '%s removes bash and keeps the rest',
    async (flag) => {
      const context = await setup();
      await writeFile(join(context.workspace, 'note.txt'), 'kept\n');
      const [bash, read] = await runCalls(
        context,
        [
          { name: 'bash', arguments: { command: 'echo hi' } },
          { name: 'read_file', arguments: { path: 'note.txt' } },
        ],
        [flag],
      );
      expect(bash).toEqual({
        isError: true,
        text: expect.stringContaining('Tool not found: bash'),
      });
      expect(read).toMatchObject({ isError: false, text: expect.stringContaining('kept') });
    },
  );

  it.each([['default,nope'], ['-nope'], ['kiro,'], ['Bash'], ['default,,think']])(
    'an unknown or empty name (%s) is a usage error listing the valid names',
    async (list) => {
      const run = await runCli(['-p', 'go', `--tools=${list}`], { env: cleanEnv() });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--tools: unknown tool "[^"]*"/);
      expect(run.stderr).toContain('valid: default, kiro, bash,');
      expect(run.stderr).toContain('use_aws, knowledge, introspect, code');
    },
  );
});

describe('--tools kiro and code', () => {
  /** PATH with node, the system tools and the fake aws: no language server on it. */
  const serverlessPath = (context: Awaited<ReturnType<typeof setup>>) =>
    [join(context.workspace, 'bin'), dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);

  it('code is added only when the LSP tools are on (here: pyright in node_modules/.bin)', async () => {
    const context = await setup();
    context.env.PATH = serverlessPath(context);
    await writeFile(
      join(context.workspace, 'geometry.py'),
      'def area(w: int, h: int) -> int:\n    return w * h\n',
    );
    const code = {
      name: 'code',
      arguments: { operation: 'get_document_symbols', file_path: 'geometry.py' },
    };
    // No language server: no LSP tools, so no code either.
    const [without] = await runCalls(context, [code], ['--tools=default,kiro']);
    expect(without).toEqual({
      isError: true,
      text: expect.stringContaining('Tool not found: code'),
    });
    // The workspace's own pyright-langserver (a script running the one @agent/tools-lsp installs).
    const lspPackage = dirname(
      createRequire(import.meta.url).resolve('@agent/tools-lsp/package.json'),
    );
    const bin = join(context.workspace, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, 'pyright-langserver'),
      `#!/bin/sh\nexec "${join(lspPackage, 'node_modules', '.bin', 'pyright-langserver')}" "$@"\n`,
    );
    await chmod(join(bin, 'pyright-langserver'), 0o755);
    // The folder's own server runs only in a folder the user trusts (here: for this run).
    const [symbols] = await runCalls(context, [code], ['--tools=default,kiro', '--trust']);
    expect(symbols?.isError, symbols?.text).toBe(false);
    expect(symbols?.text).toContain('area');
    // ...and -code takes it away again.
    const [removed] = await runCalls(context, [code], ['--tools=default,kiro,-code']);
    expect(removed).toEqual({
      isError: true,
      text: expect.stringContaining('Tool not found: code'),
    });
  });
});

describe('"tools" in settings', () => {
  it('the user settings choose; a project file may remove; the flag applies last', async () => {
    const context = await setup();
    await writeFile(
      join(context.home, 'settings.json'),
      JSON.stringify({ tools: ['default', 'kiro'] }),
    );
    await writeFile(
      join(context.workspace, '.agent', 'settings.json'),
      JSON.stringify({ tools: ['-use_aws'] }),
    );
    const [think, aws, , , introspect] = await runCalls(context, kiroCalls, [
      '--tools=-introspect',
    ]);
    expect(think).toEqual({ isError: false, text: 'Thought recorded.' });
    expect(aws).toEqual({
      isError: true,
      text: expect.stringContaining('Tool not found: use_aws'),
    });
    expect(introspect).toEqual({
      isError: true,
      text: expect.stringContaining('Tool not found: introspect'),
    });
  });

  it.each([
    [['kiro'], ['"kiro"'], false],
    [['default', '-bash'], ['"default"'], true],
    [['-bash', 'use_aws'], ['"use_aws"'], true],
    ['think', ['"think"'], false],
  ] as const)(
    'a project file that would add tools (%j): the adding items are ignored, named; removing ones apply',
    async (tools, named, bashRemoved) => {
      const context = await setup();
      const file = join(context.workspace, '.agent', 'settings.json');
      await writeFile(file, JSON.stringify({ tools }));
      const outcomes = await runCalls(
        context,
        [...kiroCalls.slice(0, 2), { name: 'bash', arguments: { command: 'echo ran' } }],
        ['--trust'],
      );
      const [think, aws, bash] = outcomes;
      for (const added of [think, aws])
        expect(added).toEqual({ isError: true, text: expect.stringContaining('Tool not found') });
      expect(bash?.isError).toBe(bashRemoved);
      expect(outcomes.stderr).toContain(`ignored ${named.join(', ')} of "tools" in ${file}`);
    },
  );

  it('an unknown name in a settings file names the file and the valid names', async () => {
    const context = await setup();
    const file = join(context.home, 'settings.json');
    await writeFile(file, JSON.stringify({ tools: ['default', 'fs_read'] }));
    const run = await runCli(['-p', 'go', '--cwd', context.workspace], { env: context.env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${file}: "tools": unknown tool "fs_read" (valid: default, kiro,`);
  });
});

describe('use_aws is a bash call', () => {
  const awsCall = kiroCalls[1] ?? { name: 'use_aws', arguments: {} };

  it.each([
    ['--tools=default,kiro,-bash'],
    ['--tools=-bash,use_aws'],
    ['--tools=use_aws,read_file'],
  ])('%s: without bash there is no use_aws, and the CLI says why', async (flag) => {
    const context = await setup();
    const script = await writeScript(context.dir, [{ toolCalls: [awsCall] }, { text: 'done' }]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', context.workspace, '--mode', 'full-access', flag],
      { env: context.env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('use_aws left out: it runs its aws command as a bash call');
    expect(run.stderr).toContain('Tool not found: use_aws');
  });

  it.each([['bash(aws *)'], ['bash(aws s3api list-buckets*)'], ['Bash(aws s3api:*)'], ['bash']])(
    '--deny %s denies use_aws’s call as it denies bash’s, and the aws command never runs',
    async (rule) => {
      const context = await setup();
      // This aws leaves a mark when it runs.
      const marker = join(context.workspace, 'aws-ran');
      await writeFile(join(context.workspace, 'bin', 'aws'), `#!/bin/sh\ntouch '${marker}'\n`);
      const [aws, bash] = await runCalls(
        context,
        [
          awsCall,
          { name: 'bash', arguments: { command: 'aws s3api list-buckets --region us-west-2' } },
        ],
        ['--tools=default,kiro', '--deny', rule],
      );
      expect(aws).toEqual({ isError: true, text: expect.stringContaining('Denied by rule') });
      expect(bash).toEqual({ isError: true, text: expect.stringContaining('Denied by rule') });
      expect(existsSync(marker)).toBe(false);
    },
  );

  it('an allow rule on bash lets it run in a mode that would ask (-p: nobody to ask otherwise)', async () => {
    const context = await setup();
    const script = await writeScript(context.dir, [{ toolCalls: [awsCall] }, { text: 'done' }]);
    const base = [
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      context.workspace,
      '--tools=default,kiro',
    ];
    const asked = await runCli([...base, '--mode', 'read-only'], { env: context.env });
    expect(asked.code).toBe(4);
    expect(asked.stderr).toContain("--allow 'bash(aws s3api list-buckets --region us-west-2)'");
    const allowed = await runCli([...base, '--mode', 'read-only', '--allow', 'bash(aws s3api *)'], {
      env: context.env,
    });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain('✓ use_aws: <s3api>');
  });
});
