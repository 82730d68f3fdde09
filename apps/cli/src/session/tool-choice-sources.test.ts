// `--tools` reaches every tool the CLI offers, through the built CLI: web, the REPLs, skills,
// code mode's run_script, the config tools, MCP servers' tools (a server whose tools are all
// left out is not started) and OpenAPI documents' tools; names that match nothing are said.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createReplTools } from '@agent/tools-repl';
import { skillToolName } from '@agent/tools-skills';
import { createWebFetchTool, createWebSearchTool } from '@agent/tools-web';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toolChoiceNames } from '../config/tool-choice.js';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { codeModeToolName } from './code-mode.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const dir = await tempDir('agent-cli-tool-sources-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(join(workspace, '.agent', 'skills', 'hello'), { recursive: true });
  await mkdir(home, { recursive: true });
  // Two sub-agents (called below with arguments that fail validation: no child run starts).
  await mkdir(join(workspace, '.agent', 'agents'), { recursive: true });
  for (const name of ['reviewer', 'helper'])
    await writeFile(
      join(workspace, '.agent', 'agents', `${name}.md`),
      `---\nname: ${name}\ndescription: The ${name}.\ntools: [read_file]\n---\nHelp.\n`,
    );
  await writeFile(
    join(workspace, '.agent', 'skills', 'hello', 'SKILL.md'),
    '---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n',
  );
  // An MCP server with two tools that leaves a line in `started` each time it starts.
  const toolsFile = join(dir.path, 'tools.json');
  await writeFile(
    toolsFile,
    JSON.stringify([
      { name: 'one', description: 'The first.' },
      { name: 'two', description: 'The second.' },
    ]),
  );
  const started = join(dir.path, 'started');
  const mcpConfig = join(dir.path, 'mcp.json');
  await writeFile(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        srv: {
          command: process.execPath,
          args: [join(appDir, 'src/__fixtures__/shifting-server.mjs'), toolsFile, started],
        },
      },
    }),
  );
  // A small OpenAPI document with two operations (never called here).
  const openapi = join(dir.path, 'pets.json');
  await writeFile(
    openapi,
    JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'pets', version: '1' },
      servers: [{ url: 'http://127.0.0.1:9' }],
      paths: {
        '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } },
        '/pets/{id}': {
          get: {
            operationId: 'getPet',
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    }),
  );
  return {
    dir: dir.path,
    workspace,
    home,
    mcpConfig,
    openapi,
    started,
    env: cleanEnv({ AGENT_HOME: home }),
  };
}

type Context = Awaited<ReturnType<typeof setup>>;

/** A call of each tool of the sources (arguments that are valid; the results are not the point). */
const calls = {
  web_fetch: { url: 'http://127.0.0.1:9/' },
  js_repl: { code: '40 + 2' },
  skill: { name: 'hello' },
  config: { setting: 'cwd' },
  config_set: { setting: 'mode', value: 'read-only' },
  run_script: { code: 'return 1;' },
  srv__one: {},
  srv__two: {},
  listPets: {},
  exit_plan_mode: {},
  reviewer: {},
  helper: {},
  read_file: { path: 'missing.txt' },
} as const;

type CallName = keyof typeof calls;

/** Runs a scripted -p session calling `names`; each result's text (or "missing" when not found). */
async function offered(
  context: Context,
  names: readonly CallName[],
  flags: string[],
): Promise<{ found: Record<string, boolean>; stderr: string; code: number | null }> {
  const script = await writeScript(context.dir, [
    ...names.map((name) => ({ toolCalls: [{ name, arguments: calls[name] }] })),
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
      'read-only',
      '--mcp-config',
      context.mcpConfig,
      '--openapi',
      `${context.openapi}=pets`,
      '--save',
      save,
      ...flags,
    ],
    { env: context.env },
  );
  const found: Record<string, boolean> = {};
  if (run.code !== 0 && run.code !== 4) return { found, stderr: run.stderr, code: run.code };
  const saved = JSON.parse(await readFile(save, 'utf8')) as {
    messages: { role: string; toolName?: string; content?: { text?: string }[] }[];
  };
  const results = saved.messages.filter((message) => message.role === 'toolResult');
  expect(results).toHaveLength(names.length);
  results.forEach((result, index) => {
    const text = (result.content ?? []).map((part) => part.text ?? '').join('');
    found[names[index] ?? '?'] = !text.includes('Tool not found');
  });
  return { found, stderr: run.stderr, code: run.code };
}

const everyName = Object.keys(calls) as CallName[];

describe('--tools reaches every source', () => {
  it('without a list every source is there (run_script with --code-mode)', async () => {
    const context = await setup();
    const { found } = await offered(context, everyName, ['--code-mode']);
    expect(found).toEqual(Object.fromEntries(everyName.map((name) => [name, true])));
    expect(existsSync(context.started)).toBe(true);
  });

  it('removals take out web, REPL, skill, config, run_script, one MCP tool and OpenAPI', async () => {
    const context = await setup();
    const { found, stderr } = await offered(context, everyName, [
      '--code-mode',
      '--tools=-web_fetch,-js_repl,-skill,-config_set,-run_script,-mcp__srv__one,-openapi__pets',
    ]);
    expect(found).toEqual({
      web_fetch: false,
      js_repl: false,
      skill: false,
      config: true,
      config_set: false,
      run_script: false,
      srv__one: false,
      srv__two: true,
      listPets: false,
      exit_plan_mode: true,
      reviewer: true,
      helper: true,
      read_file: true,
    });
    expect(stderr).toContain('code mode is on, but the tools list leaves out run_script');
  });

  it.each([['-mcp__srv'], ['-mcp__srv__*'], ['-mcp__*'], ['-mcp__s*']])(
    '%s removes the server’s tools and does not start it',
    async (item) => {
      const context = await setup();
      const { found, stderr } = await offered(
        context,
        ['srv__one', 'srv__two', 'js_repl'],
        [`--tools=${item}`],
      );
      expect(found).toEqual({ srv__one: false, srv__two: false, js_repl: true });
      expect(existsSync(context.started)).toBe(false);
      expect(stderr).not.toContain('mcp srv');
    },
  );

  it('a list of names is exactly those: mcp__srv__two and read_file, nothing else', async () => {
    const context = await setup();
    const { found } = await offered(
      context,
      ['srv__one', 'srv__two', 'js_repl', 'config'],
      ['--tools', 'read_file,mcp__srv__two'],
    );
    expect(found).toEqual({ srv__one: false, srv__two: true, js_repl: false, config: false });
    // Without mcp__… the server is not started at all.
    const context2 = await setup();
    await offered(context2, ['js_repl'], ['--tools', 'read_file,js_repl']);
    expect(existsSync(context2.started)).toBe(false);
  });

  it('exit_plan_mode and sub-agents: removed by name or glob, chosen by agent__<name>', async () => {
    const context = await setup();
    const removed = await offered(
      context,
      ['exit_plan_mode', 'reviewer', 'helper', 'js_repl'],
      ['--tools=-exit_plan_mode,-agent__reviewer'],
    );
    expect(removed.found).toEqual({
      exit_plan_mode: false,
      reviewer: false,
      helper: true,
      js_repl: true,
    });
    const chosen = await offered(
      context,
      ['exit_plan_mode', 'reviewer', 'helper', 'read_file'],
      ['--tools', 'read_file,agent__help*'],
    );
    expect(chosen.found).toEqual({
      exit_plan_mode: false,
      reviewer: false,
      helper: true,
      read_file: true,
    });
    const none = await offered(context, ['reviewer', 'helper'], ['--tools=-agent__*']);
    expect(none.found).toEqual({ reviewer: false, helper: false });
  });

  it.each([
    ['default,mcp__nope', '"mcp__nope" names no tool (there are: srv)'],
    [
      '-mcp__srv__three',
      '"-mcp__srv__three" names no tool (there are: mcp__srv__one, mcp__srv__two',
    ],
    ['-openapi__cats', '"-openapi__cats" names no tool (there are: pets)'],
    ['-agent__writer', '"-agent__writer" names no tool (there are: helper, reviewer)'],
    [
      'default,openapi__pets__deletePet',
      '"openapi__pets__deletePet" names no tool (there are: openapi__pets__listPets, openapi__pets__getPet)',
    ],
  ])(
    '--tools=%s: an MCP, OpenAPI or sub-agent name that matches nothing is an error',
    async (list, line) => {
      const context = await setup();
      const { code, stderr } = await offered(context, ['js_repl'], [`--tools=${list}`]);
      expect(code).toBe(1);
      expect(stderr).toContain(`--tools: ${line}`);
    },
  );

  it('in a settings file such a name is a warning (it serves every workspace), and the run goes on', async () => {
    const context = await setup();
    const settings = join(context.home, 'settings.json');
    await writeFile(settings, JSON.stringify({ tools: ['-mcp__github', '-web_fetch'] }));
    // A server's readOnlyHint does not let its tools run unasked in read-only mode.
    const { code, found, stderr } = await offered(
      context,
      ['web_fetch', 'srv__one'],
      ['--allow', 'srv__one'],
    );
    expect(code).toBe(0);
    expect(found).toEqual({ web_fetch: false, srv__one: true });
    expect(stderr).toContain(
      `warning: ${settings}: "tools": "-mcp__github" names no tool (there are: srv)`,
    );
  });

  it('an untrusted project file may remove a server’s tools (not started) and web_fetch, never add', async () => {
    const context = await setup();
    await mkdir(join(context.workspace, '.agent'), { recursive: true });
    const projectSettings = join(context.workspace, '.agent', 'settings.json');
    await writeFile(projectSettings, JSON.stringify({ tools: ['-mcp__srv', '-web_*'] }));
    const { code, found } = await offered(context, ['srv__one', 'web_fetch', 'js_repl'], []);
    expect(code).not.toBe(1);
    expect(found).toEqual({ srv__one: false, web_fetch: false, js_repl: true });
    expect(existsSync(context.started)).toBe(false);
    for (const [adding, named, webFetch] of [
      [['mcp__srv'], '"mcp__srv"', true],
      [['-web_fetch', 'mcp__srv__one'], '"mcp__srv__one"', false],
      [['*'], '"*"', true],
    ] as const) {
      await writeFile(projectSettings, JSON.stringify({ tools: adding }));
      const ignored = await offered(context, ['js_repl', 'web_fetch'], []);
      expect(ignored.code, ignored.stderr).not.toBe(1);
      expect(ignored.found).toEqual({ js_repl: true, web_fetch: webFetch });
      expect(ignored.stderr).toContain(`ignored ${named} of "tools" in ${projectSettings}`);
    }
  });

  it('a named tool that cannot be made here says why', async () => {
    const context = await setup();
    const { stderr } = await offered(context, ['js_repl'], ['--tools', 'default,run_script']);
    expect(stderr).toContain(
      'run_script is not available here (it comes with --code-mode or "codeMode" in your settings)',
    );
  });
});

describe('the names --tools knows', () => {
  it('are the names the sources give their tools (written out so choosing loads none of them)', async () => {
    const repl = createReplTools({ cwd: appDir, languages: ['javascript', 'python'] });
    const names = [
      createWebFetchTool().name,
      createWebSearchTool({ backend: { type: 'searxng', baseUrl: 'http://127.0.0.1:9' } }).name,
      ...repl.tools.map((tool) => tool.name),
      skillToolName,
      codeModeToolName,
    ];
    await repl.close();
    expect(names).toEqual([
      'web_fetch',
      'web_search',
      'js_repl',
      'python_repl',
      'skill',
      'run_script',
    ]);
    for (const name of names) expect(toolChoiceNames).toContain(name);
  });
});
