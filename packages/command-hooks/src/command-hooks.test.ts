import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  defineTool,
  messageText,
  PermissionPolicy,
  type PermissionRequest,
  type ToolResultMessage,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  CommandHooks,
  HooksConfigError,
  matches,
  mergeHooksConfigs,
  parseHooksConfig,
} from './index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'command-hooks-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes an executable Node script and returns the command that runs it. */
async function script(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, body);
  return `${JSON.stringify(process.execPath)} ${JSON.stringify(path)}`;
}

const readStdin = `let input = ''; process.stdin.on('data', (c) => { input += c; });`;

function echoTool(ran: unknown[]) {
  return defineTool({
    name: 'echo',
    description: 'Echoes its text.',
    input: z.object({ text: z.string() }),
    policy: { permission: 'read-only' },
    execute: async ({ text }) => {
      ran.push(text);
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    },
  });
}

function toolResults(messages: readonly { role: string }[]): ToolResultMessage[] {
  return messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
}

function oneCall(text = 'hi') {
  return createScriptedProvider([
    { toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text } }] },
    { text: 'done' },
  ]);
}

describe('parseHooksConfig', () => {
  it('accepts the Claude Code format and rejects unknown events, keys and bad matchers', () => {
    const config = parseHooksConfig({
      PreToolUse: [
        { matcher: 'bash|edit_file', hooks: [{ type: 'command', command: 'true', timeout: 5 }] },
      ],
      Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
    });
    expect(config.PreToolUse?.[0]?.hooks[0]?.timeout).toBe(5);
    expect(() => parseHooksConfig({ PreToolUs: [] }, 'settings.json')).toThrow(
      /settings.json: unknown key "PreToolUs"/,
    );
    expect(() =>
      parseHooksConfig({ Stop: [{ hooks: [{ type: 'command', command: 'x', timout: 1 }] }] }),
    ).toThrow(HooksConfigError);
    expect(() => parseHooksConfig({ PreToolUse: [{ matcher: '(', hooks: [] }] })).toThrow(
      /not a valid regular expression/,
    );
    expect(() =>
      parseHooksConfig({ Stop: [{ hooks: [{ type: 'prompt', command: 'x' }] }] }),
    ).toThrow(/type must be "command"/);
  });

  it('matchers select whole tool names; lists merge in order', () => {
    expect(matches('bash', 'bash')).toBe(true);
    expect(matches('bash', 'bash_output')).toBe(false);
    expect(matches('edit_file|write_file', 'write_file')).toBe(true);
    expect(matches('*', 'anything')).toBe(true);
    expect(matches(undefined, 'anything')).toBe(true);
    // Claude Code documents "*" and "" as "every tool": both parse and select everything.
    for (const matcher of ['*', '']) {
      const parsed = parseHooksConfig({
        PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'true' }] }],
      });
      expect(parsed.PreToolUse?.[0]?.matcher).toBe(matcher);
      expect(matches(matcher, 'bash')).toBe(true);
    }
    const a = parseHooksConfig({ Stop: [{ hooks: [{ type: 'command', command: 'a' }] }] });
    const b = parseHooksConfig({ Stop: [{ hooks: [{ type: 'command', command: 'b' }] }] });
    expect(mergeHooksConfigs(a, b).Stop?.map((m) => m.hooks[0]?.command)).toEqual(['a', 'b']);
  });
});

describe('CommandHooks through the real loop', () => {
  it('PreToolUse exit 2 blocks the call; the model reads stderr; the command got the event on stdin', async () => {
    const seen = join(dir, 'seen.json');
    const command = await script(
      'block.mjs',
      `import { writeFileSync } from 'node:fs';
${readStdin}
process.stdin.on('end', () => { writeFileSync(${JSON.stringify(seen)}, input); process.stderr.write('no echoing today'); process.exit(2); });`,
    );
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command }] }],
      }),
      { cwd: dir, sessionId: 's1' },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'scripted',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual([]);
    const [message] = toolResults(result.messages);
    expect(message?.isError).toBe(true);
    expect(messageText(message as ToolResultMessage)).toContain('no echoing today');
    const event = JSON.parse(await readFile(seen, 'utf8'));
    expect(event).toMatchObject({
      session_id: 's1',
      cwd: dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'echo',
      tool_input: { text: 'hi' },
      tool_use_id: 'call_1',
    });
  });

  it('forSession: the copy’s events carry its session_id, the original’s their own; a withheld hook is told of once for all', async () => {
    const seen = join(dir, 'seen.log');
    const record = await script(
      'record.mjs',
      `import { appendFileSync } from 'node:fs';
${readStdin}
process.stdin.on('end', () => { appendFileSync(${JSON.stringify(seen)}, JSON.parse(input).session_id + '\\n'); });`,
    );
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [{ hooks: [{ type: 'command', command: record, sandbox: false }] }],
        PostToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }],
      }),
      {
        cwd: dir,
        sessionId: 'server',
        onWarning: (line) => warnings.push(line),
        // Cannot run here: the PostToolUse hook is withheld, at each call.
        sandbox: {
          status: { active: false, reason: 'no bubblewrap' },
          wrap: () => Promise.reject(new Error('not here')),
        },
      },
    );
    const copies = [hooks.forSession('client-1'), hooks.forSession('client-2')];
    for (const [index, copy] of [hooks, ...copies].entries()) {
      const ran: unknown[] = [];
      const agent = new Agent({
        provider: oneCall(`call ${index}`),
        model: 'm',
        tools: [echoTool(ran)],
        hooks: copy.agentHooks,
        permissionGate: copy.wrapGate(undefined),
      });
      await agent.run('go').result;
      expect(ran).toEqual([`call ${index}`]);
    }
    expect((await readFile(seen, 'utf8')).trim().split('\n')).toEqual([
      'server',
      'client-1',
      'client-2',
    ]);
    expect(copies[1]?.sandboxNotice()).toBeUndefined();
    expect(warnings.filter((line) => line.includes('will not run'))).toHaveLength(1);
  });

  it('without a wrapped gate, exit 2 skips the call in beforeToolExecution', async () => {
    const command = await script(
      'block.mjs',
      `process.stderr.write('blocked here'); process.exit(2);`,
    );
    const hooks = new CommandHooks(
      { PreToolUse: [{ hooks: [{ type: 'command', command }] }] },
      { cwd: dir },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual([]);
    expect(messageText(toolResults(result.messages)[0] as ToolResultMessage)).toContain(
      'blocked here',
    );
  });

  it('a hook whose matcher does not select the tool does not run', async () => {
    const command = await script('block.mjs', `process.exit(2);`);
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command }] }] },
      { cwd: dir },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
    });
    await agent.run('go').result;
    expect(ran).toEqual(['hi']);
  });

  it('JSON permissionDecision allow skips the rules; ask forces a question; updatedInput changes the call', async () => {
    const decide = await script(
      'decide.mjs',
      `${readStdin}
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  const text = event.tool_input.text;
  const out = text === 'ask-me'
    ? { permissionDecision: 'ask', permissionDecisionReason: 'hook wants a human' }
    : { permissionDecision: 'allow', updatedInput: { text: text.toUpperCase() } };
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', ...out } }));
});`,
    );
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: decide }] }] },
      { cwd: dir },
    );
    const asked: PermissionRequest[] = [];
    // Read-only mode would allow echo without asking, and a deny-all approver answers questions.
    const policy = new PermissionPolicy({
      mode: 'read-only',
      approver: (request) => {
        asked.push(request);
        return { answer: 'deny', reason: 'the user said no' };
      },
    });
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: 'quiet' } },
            { id: 'b', name: 'echo', arguments: { text: 'ask-me' } },
          ],
        },
        { text: 'done' },
      ]),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(policy.gate),
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual(['QUIET']);
    expect(asked.map((r) => r.toolCallId)).toEqual(['b']);
    const results = toolResults(result.messages);
    expect(messageText(results[1] as ToolResultMessage)).toContain('the user said no');
  });

  it('JSON permissionDecision deny blocks with its reason', async () => {
    const deny = await script(
      'deny.mjs',
      `process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'policy says no' } }));`,
    );
    const hooks = new CommandHooks(
      { PreToolUse: [{ hooks: [{ type: 'command', command: deny }] }] },
      { cwd: dir },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual([]);
    expect(messageText(toolResults(result.messages)[0] as ToolResultMessage)).toContain(
      'policy says no',
    );
  });

  it('a hook that times out or fails is reported and does not block', async () => {
    const slow = await script('slow.mjs', `setTimeout(() => process.exit(2), 60_000);`);
    const broken = await script('broken.mjs', `process.stderr.write('oops'); process.exit(1);`);
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      {
        PreToolUse: [
          { hooks: [{ type: 'command', command: slow, timeout: 0.3 }] },
          { hooks: [{ type: 'command', command: broken }] },
        ],
      },
      { cwd: dir, onWarning: (w) => warnings.push(w) },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
    });
    await agent.run('go').result;
    expect(ran).toEqual(['hi']);
    expect(warnings.sort()).toEqual([
      expect.stringMatching(/PreToolUse hook ".*broken.mjs"" exited 1: oops/),
      expect.stringMatching(/PreToolUse hook ".*slow.mjs"" timed out/),
    ]);
  });

  // A script checked out with CRLF line endings (a Windows checkout): the shell says the script is
  // "not found" (127) though it is right there; the warning names the carriage return and the fix.
  it.each([
    ['./check.sh', 'check.sh', '#!/bin/sh\r\necho hi\r\n'],
    ['"./with space.sh" --flag', 'with space.sh', '#!/usr/bin/env bash\r\necho hi\r\n'],
    ['ABSOLUTE', 'abs.sh', '#!/bin/sh\r\nexit 0\r\n'],
  ])(
    'a CRLF script (%s) is named as such, with the command that converts it',
    async (written, name, body) => {
      const path = join(dir, name);
      await writeFile(path, body, { mode: 0o755 });
      const command = written === 'ABSOLUTE' ? path : written;
      const warnings: string[] = [];
      const hooks = new CommandHooks(
        { PreToolUse: [{ hooks: [{ type: 'command', command }] }] },
        { cwd: dir, onWarning: (w) => warnings.push(w) },
      );
      const ran: unknown[] = [];
      const agent = new Agent({
        provider: oneCall(),
        model: 'm',
        tools: [echoTool(ran)],
        hooks: hooks.agentHooks,
        permissionGate: hooks.wrapGate(undefined),
      });
      await agent.run('go').result;
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/exited 12[67]/);
      expect(warnings[0]).toContain(
        'has Windows line endings (its first line ends with a carriage return',
      );
      expect(warnings[0]).toContain('convert it with dos2unix');
    },
  );

  it('a script with Unix line endings that is missing its interpreter gets no such hint', async () => {
    await writeFile(join(dir, 'lf.sh'), '#!/bin/no-such-shell\necho hi\n', { mode: 0o755 });
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      { PreToolUse: [{ hooks: [{ type: 'command', command: './lf.sh' }] }] },
      { cwd: dir, onWarning: (w) => warnings.push(w) },
    );
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool([])],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
    });
    await agent.run('go').result;
    expect(warnings[0]).toMatch(/exited 12[67]/);
    expect(warnings[0]).not.toContain('line endings');
  });

  it('PostToolUse gets the response; exit 2 adds stderr to the result the model reads', async () => {
    const seen = join(dir, 'post.json');
    const command = await script(
      'post.mjs',
      `import { writeFileSync } from 'node:fs';
${readStdin}
process.stdin.on('end', () => { writeFileSync(${JSON.stringify(seen)}, input); process.stderr.write('lint failed'); process.exit(2); });`,
    );
    const hooks = new CommandHooks(
      { PostToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command }] }] },
      { cwd: dir },
    );
    const ran: unknown[] = [];
    const agent = new Agent({
      provider: oneCall(),
      model: 'm',
      tools: [echoTool(ran)],
      hooks: hooks.agentHooks,
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual(['hi']);
    const text = messageText(toolResults(result.messages)[0] as ToolResultMessage);
    expect(text).toContain('echo: hi');
    expect(text).toContain('PostToolUse hook: lint failed');
    expect(JSON.parse(await readFile(seen, 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_response: { content: 'echo: hi', isError: false },
    });
  });

  it('UserPromptSubmit adds context or blocks; SessionStart gives context; Stop can ask to go on', async () => {
    const prompt = await script(
      'prompt.mjs',
      `${readStdin}
process.stdin.on('end', () => {
  const { prompt } = JSON.parse(input);
  if (prompt.includes('secret')) { process.stderr.write('no secrets'); process.exit(2); }
  process.stdout.write('Today is a test day.');
});`,
    );
    const start = await script(
      'start.mjs',
      `process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'branch: main' } }));`,
    );
    const stop = await script(
      'stop.mjs',
      `${readStdin}
process.stdin.on('end', () => {
  const { stop_hook_active } = JSON.parse(input);
  if (!stop_hook_active) process.stdout.write(JSON.stringify({ decision: 'block', reason: 'run the tests first' }));
});`,
    );
    const hooks = new CommandHooks(
      {
        UserPromptSubmit: [{ hooks: [{ type: 'command', command: prompt }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: start }] }],
        Stop: [{ hooks: [{ type: 'command', command: stop }] }],
      },
      { cwd: dir },
    );
    expect(await hooks.userPromptSubmit('tell me the secret')).toEqual({
      blocked: 'no secrets',
      messages: [],
    });
    expect(await hooks.userPromptSubmit('hello')).toEqual({
      prompt: 'hello\n\nToday is a test day.',
      messages: [],
    });
    expect(await hooks.sessionStart('startup')).toBe('branch: main');
    expect(await hooks.stop(false)).toEqual({ continueWith: 'run the tests first', messages: [] });
    expect(await hooks.stop(true)).toEqual({ messages: [] });
  });

  it('the commands run in the workspace with AGENT_PROJECT_DIR set', async () => {
    const command = await script(
      'where.mjs',
      `process.stdout.write(process.cwd() + '|' + process.env.AGENT_PROJECT_DIR);`,
    );
    const hooks = new CommandHooks(
      { SessionStart: [{ hooks: [{ type: 'command', command }] }] },
      { cwd: dir },
    );
    const context = await hooks.sessionStart('startup');
    const real = await import('node:fs/promises').then((fs) => fs.realpath(dir));
    expect(context.split('|')[0]).toBe(real);
    expect(context.split('|')[1]).toBe(dir);
  });

  it('outsideCwd: a hook outside the sandbox starts there; the event and AGENT_PROJECT_DIR keep the workspace', async () => {
    const command = await script(
      'where-outside.mjs',
      `${readStdin} process.stdin.on('end', () => process.stdout.write(process.cwd() + '|' + process.env.AGENT_PROJECT_DIR + '|' + JSON.parse(input).cwd));`,
    );
    const elsewhere = await mkdtemp(join(tmpdir(), 'command-hooks-home-'));
    try {
      const hooks = new CommandHooks(
        { SessionStart: [{ hooks: [{ type: 'command', command }] }] },
        { cwd: dir, outsideCwd: elsewhere },
      );
      const context = await hooks.sessionStart('startup');
      const real = await import('node:fs/promises').then((fs) => fs.realpath(elsewhere));
      expect(context.split('|')).toEqual([real, dir, dir]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  describe('environment', () => {
    const key = `sk-proj-${'Ab3'.repeat(16)}`;
    const env = {
      ...process.env,
      OPENAI_API_KEY: key,
      MY_SECRET: 'hunter2-but-longer',
      GITHUB_TOKEN: 'gh-token-value-1234',
      INNOCENT_LOOKING: key,
      ORDINARY_SETTING: 'kept-value',
    };

    it('hook commands get no credential of the environment', async () => {
      const hooks = new CommandHooks(
        { SessionStart: [{ hooks: [{ type: 'command', command: 'env' }] }] },
        { cwd: dir, env },
      );
      const printed = await hooks.sessionStart('startup');
      expect(printed).toMatch(/^PATH=/m);
      expect(printed).toContain('ORDINARY_SETTING=kept-value');
      expect(printed).toContain(`AGENT_PROJECT_DIR=${dir}`);
      for (const name of ['OPENAI_API_KEY', 'MY_SECRET', 'GITHUB_TOKEN', 'INNOCENT_LOOKING'])
        expect(printed).not.toContain(`${name}=`);
      expect(printed).not.toContain(key);
    });

    it('a PreToolUse hook (input from the model) sees none either; passEnv passes one', async () => {
      const command = await script(
        'keys.mjs',
        `${readStdin} process.stdin.on('end', () => { process.stderr.write(JSON.stringify([process.env.OPENAI_API_KEY ?? null, process.env.GITHUB_TOKEN ?? null])); process.exit(2); });`,
      );
      const hooks = new CommandHooks(
        { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command }] }] },
        { cwd: dir, env, passEnv: ['GITHUB_TOKEN'] },
      );
      const ran: unknown[] = [];
      const agent = new Agent({
        provider: oneCall(),
        model: 'm',
        tools: [echoTool(ran)],
        hooks: hooks.agentHooks,
        permissionGate: hooks.wrapGate(new PermissionPolicy({ mode: 'full-access' }).gate),
      });
      const { messages } = await agent.run('go').result;
      expect(ran).toEqual([]);
      const [result] = toolResults(messages);
      expect(messageText(result as ToolResultMessage)).toContain('[null,"gh-token-value-1234"]');
    });
  });
});
