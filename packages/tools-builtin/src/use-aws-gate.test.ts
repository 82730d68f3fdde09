import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  type AgentEvent,
  type AnyAgentTool,
  type PermissionMode,
  PermissionPolicy,
  type PermissionRequest,
  StaticToolExecutor,
  type ToolResultMessage,
} from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { type DefaultToolsOptions, defaultTools } from './default-tools.js';
import { makeTempDir } from './test-helpers.js';

// use_aws runs its aws command as a call of the session's own bash tool, so the gate, hooks and
// sandbox that decide a bash call decide it: a rule that denies `bash(aws …)` denies use_aws's
// call, and nothing runs (the fake aws leaves a line in a log file each time it is run).

const sessions: BackgroundTasks[] = [];
const folders: string[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
});

/** A workspace with a stand-in for the AWS CLI (AWS cannot be reached here) that logs each run. */
function workspace(): { root: string; log: string; env: NodeJS.ProcessEnv } {
  const root = makeTempDir('use-aws-gate-');
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  const log = path.join(root, 'aws-runs.log');
  fs.writeFileSync(
    path.join(bin, 'aws'),
    `#!/bin/sh\necho "$*" >> '${log}'\nfor a in "$@"; do printf "<%s>\\n" "$a"; done\n`,
    { mode: 0o755 },
  );
  return { root, log, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` } };
}

function runs(log: string): string[] {
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
}

function setup(options: {
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  approver?: (request: PermissionRequest) => 'once' | 'deny';
  onEvent?: (event: AgentEvent) => void;
  sandbox?: NonNullable<DefaultToolsOptions['bash']>['sandbox'];
}) {
  const { root, log, env } = workspace();
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = defaultTools({
    cwd: root,
    backgroundTasks,
    tools: ['bash', 'use_aws'],
    bash: { sandbox: options.sandbox ?? 'off', env },
  });
  const policy = new PermissionPolicy({
    mode: options.mode ?? 'full-access',
    allow: options.allow ?? [],
    ask: options.ask ?? [],
    deny: options.deny ?? [],
    ...(options.approver === undefined
      ? {}
      : {
          approver: (request: PermissionRequest) => ({
            answer: options.approver?.(request) ?? 'deny',
          }),
        }),
  });
  policy.setTools(tools);
  const executor = new StaticToolExecutor({
    permissionGate: policy.gate,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  });
  for (const tool of tools) executor.register(tool);
  const byName = (name: string): AnyAgentTool => {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return tool;
  };
  return { root, log, executor, byName };
}

function text(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

const remove = {
  service_name: 's3',
  operation_name: 'rm',
  positional_args: ['s3://tern-deploy/build.zip'],
  region: 'us-west-2',
  profile_name: 'prod',
  label: 'Remove the build',
};
const list = { service_name: 's3', operation_name: 'ls', region: 'us-west-2', label: 'List' };

describe('use_aws meets the gate of bash', () => {
  it.each([
    ['bash'],
    ['bash(aws *)'],
    ['bash(aws s3 rm *)'],
    ['bash(aws s3 rm*)'],
    ['bash(aws s3 *)'],
    ['bash(*--profile prod*)'],
    ['bash(*tern-deploy*)'],
    ['Bash(aws s3 rm:*)'],
    ['bash(aws*)'],
  ])('a deny rule %s denies use_aws’s call as it denies the same bash call', async (rule) => {
    const { executor, log } = setup({ deny: [rule] });
    const viaTool = await executor.executeResult('use_aws', remove);
    expect(viaTool.isError).toBe(true);
    expect(viaTool.errorKind).toBe('denied');
    expect(text(viaTool)).toContain('Denied by rule');
    // The control: the same command line given to bash is denied too.
    const direct = await executor.executeResult('bash', {
      command: 'aws s3 rm s3://tern-deploy/build.zip --region us-west-2 --profile prod',
    });
    expect(direct.errorKind).toBe('denied');
    // Neither ran the aws command.
    expect(runs(log)).toEqual([]);
  });

  it.each([['bash(aws s3 rm *)'], ['bash(*--profile prod*)'], ['bash(*tern-deploy*)']])(
    'a narrow rule %s leaves other aws calls running',
    async (rule) => {
      const { executor, log } = setup({ deny: [rule] });
      const result = await executor.executeResult('use_aws', list);
      expect(result.isError, text(result)).toBe(false);
      expect(text(result)).toContain('<ls>');
      expect(runs(log)).toEqual(['s3 ls --region us-west-2']);
    },
  );

  it('an ask rule on bash asks about use_aws’s command as a bash call; "deny" runs nothing', async () => {
    const asked: PermissionRequest[] = [];
    const { executor, log } = setup({
      ask: ['bash(aws s3 rm *)'],
      approver: (request) => {
        asked.push(request);
        return 'deny';
      },
    });
    const result = await executor.executeResult('use_aws', remove);
    expect(result.errorKind).toBe('denied');
    expect(asked.map((request) => request.toolName)).toEqual(['bash']);
    expect(asked[0]?.subjects).toEqual([
      'aws s3 rm s3://tern-deploy/build.zip --region us-west-2 --profile prod',
    ]);
    expect(runs(log)).toEqual([]);
  });

  it('an approval of the bash call runs the command once', async () => {
    const { executor, log } = setup({ mode: 'default', approver: () => 'once' });
    const result = await executor.executeResult('use_aws', remove);
    expect(result.isError, text(result)).toBe(false);
    expect(runs(log)).toEqual([
      's3 rm s3://tern-deploy/build.zip --region us-west-2 --profile prod',
    ]);
  });

  it('without an approver, a call the mode does not cover is denied and runs nothing', async () => {
    const { executor, log } = setup({ mode: 'read-only' });
    const result = await executor.executeResult('use_aws', list);
    expect(result.errorKind).toBe('denied');
    expect(runs(log)).toEqual([]);
  });

  it('rules on use_aws itself still deny', async () => {
    const { executor, log } = setup({ deny: ['use_aws(aws s3 rm *)'] });
    expect((await executor.executeResult('aws', remove)).errorKind).toBe('denied');
    expect((await executor.executeResult('use_aws', list)).isError).toBe(false);
    expect(runs(log)).toEqual(['s3 ls --region us-west-2']);
  });

  it('the command runs through the very bash tool offered (one object), as a nested call', async () => {
    const events: AgentEvent[] = [];
    const { executor, byName } = setup({ onEvent: (event) => events.push(event) });
    const bash = byName('bash');
    const execute = bash.execute;
    let calls = 0;
    bash.execute = (args, ctx) => {
      calls += 1;
      return execute(args, ctx);
    };
    await executor.execute('use_aws', list);
    expect(calls).toBe(1);
    const starts = events.filter((event) => event.type === 'tool-execution-start');
    expect(starts.map((event) => [event.toolName, event.parentToolCallId])).toEqual([
      ['use_aws', undefined],
      ['bash', 'call_1'],
    ]);
  });

  it('under the OS sandbox, the aws command cannot write outside the workspace', async (context) => {
    skipWithout('bwrap')(context);
    // Outside /tmp too (the sandbox's /tmp is private anyway).
    const outside = fs.mkdtempSync(
      path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : '/tmp', 'use-aws-outside-'),
    );
    folders.push(outside);
    const { executor, root } = setup({ sandbox: { mode: 'required' } });
    // This aws tries to leave a file outside the workspace, then inside it.
    fs.writeFileSync(
      path.join(root, 'bin', 'aws'),
      `#!/bin/sh\ntouch '${outside}/escaped' 2>&1; touch '${root}/inside' && echo wrote-inside\n`,
      { mode: 0o755 },
    );
    const result = await executor.executeResult('use_aws', list);
    expect(text(result)).toContain('wrote-inside');
    expect(fs.existsSync(path.join(root, 'inside'))).toBe(true);
    expect(fs.existsSync(path.join(outside, 'escaped'))).toBe(false);
  });
});

describe('use_aws needs bash', () => {
  it('defaultTools refuses use_aws without bash, naming bash', () => {
    const root = makeTempDir('use-aws-alone-');
    expect(() => defaultTools({ cwd: root, tools: ['use_aws'] })).toThrow(/needs "bash"/);
    expect(() => defaultTools({ cwd: root, tools: ['read_file', 'use_aws', 'think'] })).toThrow(
      /needs "bash"/,
    );
  });
});
