// Code mode in the CLI: the flag and the setting, which tools a script may call, and the built CLI
// running scripts (a real child process, real files, the bundled QuickJS).
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool } from '@agent/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseCliArgs } from '../config/args.js';
import { type CodeModeSetting, checkCodeModeSetting } from '../config/code-mode.js';
import { applySettings, emptySettings, readSettingsLayers } from '../config/settings.js';
import { checkSettings } from '../config/settings-file.js';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { nestedCallsLine } from '../ui/code-mode-lines.js';
import { sessionCodeModeTool } from './code-mode.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function workspaceWithHome() {
  const dir = await tempDir('agent-cli-code-mode-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(join(workspace, 'src'), { recursive: true });
  await mkdir(home, { recursive: true });
  for (let index = 1; index <= 6; index++)
    await writeFile(
      join(workspace, 'src', `m${index}.ts`),
      `export const m${index} = ${index};\n${index % 2 === 0 ? '// TODO: more\n' : ''}`,
    );
  return { dir: dir.path, home, workspace, env: cleanEnv({ AGENT_HOME: home }) };
}

function noopTool(name: string) {
  return defineTool({
    name,
    description: `The ${name} tool. It does nothing.`,
    input: z.object({ value: z.string().optional() }),
    policy: { permission: 'read-only' },
    execute: async () => 'ok',
  });
}

describe('the flag and the setting', () => {
  it('--code-mode turns it on; without it, nothing changes', () => {
    expect(parseCliArgs(['--code-mode']).codeMode).toBe(true);
    expect(parseCliArgs(['-p', 'hi']).codeMode).toBeUndefined();
    expect(parseCliArgs(['demo', '--code-mode'])).toMatchObject({
      command: 'demo',
      codeMode: true,
    });
  });

  it.each([
    [true, true],
    [false, false],
    [{}, {}],
    [{ tools: ['read_file', 'mcp__github__*'] }, { tools: ['read_file', 'mcp__github__*'] }],
  ])('accepts %j', (value, expected) => {
    expect(checkCodeModeSetting(value, 'settings.json')).toEqual(expected);
    expect(checkSettings({ codeMode: value }, 'settings.json').codeMode).toEqual(expected);
  });

  it.each([
    ['a string', 'yes'],
    ['a number', 1],
    ['null', null],
    ['a list', ['read_file']],
    ['tools as a string', { tools: 'read_file' }],
    ['a tool that is not a string', { tools: [1] }],
    ['a name with a space', { tools: ['read file'] }],
    ['a name with a dot', { tools: ['read.file'] }],
    ['an empty name', { tools: [''] }],
    ['an unknown key', { tool: ['read_file'] }],
  ])('refuses %s, naming the file and the key', (_name, value) => {
    expect(() => checkSettings({ codeMode: value }, '/home/me/settings.json')).toThrow(
      /^\/home\/me\/settings\.json: .*codeMode/,
    );
  });

  it('only the user settings may turn it on: a project file saying so has it left out, named', async () => {
    const { home, workspace } = await workspaceWithHome();
    await mkdir(join(workspace, '.agent'));
    await writeFile(join(workspace, '.agent', 'settings.json'), '{ "codeMode": true }');
    const project = await readSettingsLayers(workspace, home);
    expect(project.map((layer) => layer.file.codeMode)).toEqual([undefined]);
    expect(project[0]?.ignored?.join('\n')).toMatch(
      /ignored "codeMode" in .*\.agent\/settings\.json: only your settings/,
    );
    await writeFile(join(home, 'settings.json'), '{ "codeMode": { "tools": ["glob"] } }');
    await writeFile(join(workspace, '.agent', 'settings.json'), '{}');
    const layers = await readSettingsLayers(workspace, home);
    expect(layers[0]?.file.codeMode).toEqual({ tools: ['glob'] });
  });

  it.each<[string, boolean | undefined, CodeModeSetting | undefined, CodeModeSetting | undefined]>([
    ['flag alone', true, undefined, true],
    ['settings alone', undefined, true, true],
    ['flag with the settings tool list', true, { tools: ['glob'] }, { tools: ['glob'] }],
    ['flag over settings off', true, false, true],
    ['settings off', undefined, false, false],
    ['neither', undefined, undefined, undefined],
  ])('%s', (_name, flag, setting, expected) => {
    const options = parseCliArgs(flag === true ? ['--code-mode'] : []);
    const settings = { ...emptySettings(), codeMode: setting };
    expect(applySettings(options, settings, false).codeMode).toEqual(expected);
  });
});

describe('which tools a script may call', () => {
  const available = [
    noopTool('read_file'),
    noopTool('glob'),
    noopTool('mcp__github__list_issues'),
    noopTool('mcp__github__get_issue'),
    noopTool('exit_plan_mode'),
  ];

  it('off: no tool', async () => {
    expect(await sessionCodeModeTool(available, undefined, () => undefined)).toBeUndefined();
    expect(await sessionCodeModeTool(available, false, () => undefined)).toBeUndefined();
  });

  it('on: every tool but the run controls, declared in the description', async () => {
    const chosen = await sessionCodeModeTool(available, true, () => undefined);
    expect(chosen?.tool.name).toBe('run_script');
    expect(chosen?.callable).toEqual([
      'read_file',
      'glob',
      'mcp__github__list_issues',
      'mcp__github__get_issue',
    ]);
    expect(chosen?.tool.description).toContain('mcp__github__get_issue(args?: {');
    expect(chosen?.tool.description).not.toContain('exit_plan_mode');
  });

  it('a list: names and patterns; one that matches nothing is a warning', async () => {
    const log: string[] = [];
    const chosen = await sessionCodeModeTool(
      available,
      { tools: ['glob', 'mcp__github__*', 'exit_plan_mode', 'web_*'] },
      (line) => log.push(line),
    );
    expect(chosen?.callable).toEqual([
      'glob',
      'mcp__github__list_issues',
      'mcp__github__get_issue',
    ]);
    expect(log).toEqual([
      'warning: codeMode.tools: "exit_plan_mode" matches no tool a script can call',
      'warning: codeMode.tools: "web_*" matches no tool a script can call',
    ]);
  });

  it('a pattern is a whole-name match, not a regular expression', async () => {
    const chosen = await sessionCodeModeTool(available, { tools: ['glo', 'read_fil*'] }, () => {});
    expect(chosen?.callable).toEqual(['read_file']);
  });

  it('many tools: only names and first sentences in the description, the rest on demand', async () => {
    const many = Array.from({ length: 20 }, (_, index) => noopTool(`tool_${index}`));
    const chosen = await sessionCodeModeTool(many, true, () => undefined);
    expect(chosen?.tool.description).toContain('- tool_19: The tool_19 tool.');
    expect(chosen?.tool.description).not.toContain('tool_19(args');
  });

  it('the transcript line counts the calls by tool and outcome', () => {
    expect(
      nestedCallsLine({
        calls: [
          { toolName: 'glob', isError: false },
          { toolName: 'read_file', isError: false },
          { toolName: 'read_file', isError: false },
          { toolName: 'bash', isError: true, errorKind: 'denied' },
        ],
      }),
    ).toBe('    ↳ 4 calls from the script: glob, read_file ×2, bash [denied]');
    expect(nestedCallsLine({ calls: [] })).toBeUndefined();
    expect(nestedCallsLine(undefined)).toBeUndefined();
    expect(nestedCallsLine({ exitCode: 0 })).toBeUndefined();
  });
});

describe('the built CLI running scripts', () => {
  const countTodos = `const paths = (await tools.glob({ pattern: 'src/*.ts' })).split('\\n');
let todos = 0;
for (const path of paths) if ((await tools.read_file({ path })).includes('TODO')) todos++;
return todos + ' of ' + paths.length;`;

  it('-p --code-mode: one script makes the calls; rules and approvals apply inside it as outside', async () => {
    const { dir, workspace, env } = await workspaceWithHome();
    const script = await writeScript(dir, [
      {
        toolCalls: [
          {
            name: 'run_script',
            arguments: {
              script: `${countTodos.replace(/return .*$/, '')}
try { await tools.bash({ command: 'rm -rf src' }) } catch (e) { console.log('bash', e.kind) }
try { await tools.write_file({ path: 'x.txt', content: 'x' }) } catch (e) { console.log('write', e.kind) }
return todos + ' of ' + paths.length;`,
            },
          },
        ],
      },
      { text: 'Three files have a TODO.' },
    ]);
    const run = await runCli(
      [
        '-p',
        'count',
        '--code-mode',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--deny',
        'bash(rm *)',
      ],
      { env },
    );
    expect(run.stdout).toBe('Three files have a TODO.\n');
    expect(run.stderr).toContain('✓ run_script: bash denied (+3 lines)');
    expect(run.stderr).toContain(
      '↳ 9 calls from the script: glob, read_file ×6, bash [denied], write_file [denied]',
    );
    // As for a direct call: -p could not ask about the write, so the exit code says so.
    expect(run.stderr).toContain('needed approval and -p could not ask');
    expect(run.code).toBe(4);
    expect(await readdir(workspace)).toEqual(['src']);
    expect((await readdir(join(workspace, 'src'))).length).toBe(6);
  });

  it('without the flag there is no run_script; the user setting turns it on with its tool list', async () => {
    const { dir, home, workspace, env } = await workspaceWithHome();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'run_script', arguments: { script: countTodos } }] },
      { text: 'done' },
    ]);
    const off = await runCli(['-p', 'count', '--scripted', script, '--cwd', workspace], { env });
    expect(off.stderr).toContain('Tool not found: run_script');

    await writeFile(join(home, 'settings.json'), '{ "codeMode": { "tools": ["read_file"] } }');
    const partial = await runCli(['-p', 'count', '--scripted', script, '--cwd', workspace], {
      env,
    });
    // glob is not callable from scripts under this setting: the script fails at that call.
    expect(partial.stderr).toContain(
      '✗ run_script [failed]: The script failed: ToolCallError: Tool not found: glob (scripts can call: read_file)',
    );

    await writeFile(join(home, 'settings.json'), '{ "codeMode": true }');
    const on = await runCli(['-p', 'count', '--scripted', script, '--cwd', workspace], { env });
    expect(on.code).toBe(0);
    expect(on.stderr).toContain('✓ run_script: 3 of 6');
    expect(on.stderr).toContain('↳ 7 calls from the script: glob, read_file ×6');
  });

  it('a project settings file cannot turn it on: the run goes on without it and names the file', async () => {
    const { workspace, env } = await workspaceWithHome();
    await mkdir(join(workspace, '.agent'));
    await writeFile(join(workspace, '.agent', 'settings.json'), '{ "codeMode": true }');
    const script = await writeScript(workspace, [
      { toolCalls: [{ name: 'run_script', arguments: { code: '1' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(['-p', 'hi', '--scripted', script, '--cwd', workspace, '--trust'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('ignored "codeMode" in');
    expect(run.stderr).toContain('Tool not found: run_script');
  });

  it('agent demo --code-mode: one script replaces 28 calls, from a copy of the bundle alone', async () => {
    // A copy of dist/ with no node_modules anywhere above it: QuickJS's .wasm must come with it.
    const dir = await tempDir('agent-cli-bundle-copy-');
    cleanups.push(dir.dispose);
    await cp(join(appDir, 'dist'), join(dir.path, 'dist'), { recursive: true });
    const run = await runCli(['demo', '--code-mode'], {
      cwd: dir.path,
      env: cleanEnv(),
      cliPath: join(dir.path, 'dist', 'main.js'),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('↳ 28 calls from the script: glob, read_file ×26, bash [denied]');
    expect(run.stdout).toMatch(
      /code mode: one script made 28 tool calls; the results of the 27 that ran \(\d+ characters\) stayed out of the conversation — the model read \d+\./,
    );
    expect(run.stdout).toContain('26 files, 5 TODOs');
    expect(run.stdout).toContain('stop reason: completed after 2 turns');
  });
});
