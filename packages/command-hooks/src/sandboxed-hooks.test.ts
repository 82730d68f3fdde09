import { once } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { defineTool, type PermissionRequest } from '@agent/core';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  type Cleanups,
  createFixture,
  sandboxFor as sandboxOf,
} from './__fixtures__/sandbox-fixture.js';
import { CommandHooks, HooksConfigError, parseHooksConfig } from './index.js';

// Hooks in the OS sandbox (real bubblewrap) keep their protocol — JSON, exit codes, stdin,
// timeouts, aborts, the whole process tree, the network — and where the sandbox cannot run they
// are withheld, never run outside it. (The hostile repositories: hostile-workspace.test.ts.)

const cleanups: Cleanups = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
const fixture = () => createFixture(cleanups);
const sandboxFor = (paths: ReturnType<typeof fixture>) => sandboxOf(paths, cleanups);

describe('the hooks protocol through the sandbox', () => {
  beforeEach(skipWithout('bwrap'));

  it('JSON decisions and exit 2 block, other exits warn, stdin arrives, the project dir is set', async () => {
    const paths = fixture();
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          {
            matcher: 'deny_me',
            hooks: [
              {
                type: 'command',
                command: `cat > "$AGENT_PROJECT_DIR/event.json"; echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"json says no"}}'`,
              },
            ],
          },
          {
            matcher: 'block_me',
            hooks: [{ type: 'command', command: 'echo "exit two" >&2; exit 2' }],
          },
          { matcher: 'warn_me', hooks: [{ type: 'command', command: 'exit 7' }] },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    const gate = hooks.wrapGate(async () => ({ behavior: 'allow' }));
    const request = (toolName: string) => permissionRequest(toolName, { text: 'x' });
    expect(await gate(request('deny_me'))).toEqual({ behavior: 'deny', reason: 'json says no' });
    const event = JSON.parse(fs.readFileSync(path.join(paths.workspace, 'event.json'), 'utf8'));
    expect(event).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'deny_me',
      cwd: paths.workspace,
    });
    expect(await gate(request('block_me'))).toEqual({ behavior: 'deny', reason: 'exit two' });
    expect(await gate(request('warn_me'))).toEqual({ behavior: 'allow' });
    expect(warnings).toEqual([
      'PreToolUse hook "exit 7" exited 7 (in the OS sandbox; "sandbox": false on the hook runs it outside)',
    ]);
  });

  it('the network is on: a hook reaches a server on 127.0.0.1', async () => {
    const paths = fixture();
    const { port, received } = await listen();
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command: `${JSON.stringify(paths.node)} -e "require('net').connect(${port}, '127.0.0.1', function () { this.end('notified') })"`,
              },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    await hooks.stop(false);
    expect(await received).toBe('notified');
    expect(warnings).toEqual([]);
  });

  it('a timeout ends the hook and everything it started inside the sandbox', async () => {
    const paths = fixture();
    const tag = `31${process.pid % 1000}${Date.now() % 100000}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        SessionStart: [
          {
            hooks: [
              {
                type: 'command',
                command: `(setsid sleep ${tag} &); sleep ${tag} & touch started; sleep ${tag}`,
                // Long enough for a loaded machine to start the sandbox and reach `touch`.
                timeout: 3,
              },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    expect(await hooks.sessionStart('startup')).toBe('');
    expect(fs.existsSync(path.join(paths.workspace, 'started'))).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(/^SessionStart hook ".*" timed out \(in the OS sandbox; /),
    ]);
    expect(await gone(`sleep ${tag}`)).toEqual([]);
  });

  it('a hook killed for memory says the sandbox did it (not only "exited 137")', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [paths.workspace],
      maxMemoryBytes: 64 * 1024 * 1024,
      onWarning: () => undefined,
    });
    cleanups.push(() => void sandbox.close());
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        SessionStart: [
          { hooks: [{ type: 'command', command: 'head -c 1G /dev/zero > /tmp/fill' }] },
        ],
      }),
      { cwd: paths.workspace, sandbox, onWarning: (line) => warnings.push(line) },
    );
    expect(await hooks.sessionStart('startup')).toBe('');
    if (sandbox.status.limits.maxMemoryBytes === undefined) {
      // No cgroup here (an ordinary user without delegation): not run unbounded, only said.
      expect(sandbox.describe()).toMatch(/memory NOT bounded/);
      return;
    }
    expect(warnings).toEqual([
      expect.stringMatching(
        /^SessionStart hook "head -c 1G \/dev\/zero > \/tmp\/fill" exited 137: .*Killed by the sandbox: its commands used more than 64 MiB of memory together/s,
      ),
    ]);
  });

  it('an abort ends a running hook (and its tree); no warning', async () => {
    const paths = fixture();
    const tag = `32${process.pid % 1000}${Date.now() % 100000}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          { hooks: [{ type: 'command', command: `sleep ${tag} & touch started; wait` }] },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => {
      const watcher = fs.watch(paths.workspace, (_event, name) => {
        if (name === 'started') {
          watcher.close();
          resolve();
        }
      });
      cleanups.push(() => watcher.close());
    });
    const verdict = hooks.run('PreToolUse', { tool_name: 'echo' }, 'echo', controller.signal);
    await started;
    controller.abort();
    expect(await verdict).toEqual({ additionalContext: [], messages: [] });
    expect(warnings).toEqual([]);
    expect(await gone(`sleep ${tag}`)).toEqual([]);
  });

  it('"sandbox": false runs that hook outside; the others stay in', async () => {
    const paths = fixture();
    // `|| exit 1`: a failed redirection is the shell's exit 2, which would block.
    const write = (name: string) =>
      `echo x > ${JSON.stringify(path.join(paths.outside, name))} || exit 1`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        Stop: [
          {
            hooks: [
              { type: 'command', command: write('from-opted-out'), sandbox: false },
              { type: 'command', command: write('from-sandboxed') },
              { type: 'command', command: write('from-explicit-true'), sandbox: true },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    await hooks.stop(false);
    expect(fs.readdirSync(paths.outside)).toEqual(['from-opted-out']);
    expect(warnings).toEqual([
      expect.stringMatching(/from-sandboxed.*Read-only file system.*\(in the OS sandbox; /s),
      expect.stringMatching(/from-explicit-true.*Read-only file system.*\(in the OS sandbox; /s),
    ]);
  });
});

describe('what sandboxed hooks plant for the user', () => {
  beforeEach(skipWithout('bwrap'));

  it('a repository a hook made is told through onWarning, once', async () => {
    const paths = fixture();
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        Stop: [
          { hooks: [{ type: 'command', command: 'git init -q planted/repo 2>/dev/null; true' }] },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    await hooks.stop(false);
    const planted = path.join(paths.workspace, 'planted/repo/.git');
    expect(fs.existsSync(planted)).toBe(true);
    expect(warnings).toEqual([
      `Stop hooks in the OS sandbox made ${planted}: a repository's hooks and config run with your next git command in that folder, a startup file with your next shell. Look before using them (the sandbox keeps them read-only from now on).`,
    ]);
    // Again: the repository is read-only now (git init fails), nothing new to tell.
    await hooks.stop(false);
    expect(warnings).toHaveLength(1);
  });
});

describe('where the sandbox cannot run (a real sandbox whose bwrap is missing)', () => {
  it('withholds sandboxed hooks, says so once, and a withheld PreToolUse guard makes its call ask', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [paths.workspace],
      bwrapPath: path.join(paths.base, 'no-such-bwrap'),
      onWarning: () => undefined,
    });
    expect(sandbox.status.active).toBe(false);
    const marker = (name: string) => `touch ${JSON.stringify(path.join(paths.workspace, name))}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: marker('guard') }] }],
        SessionStart: [
          { hooks: [{ type: 'command', command: `${marker('context')}; echo from the hook` }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: marker('notifier'), sandbox: false }] }],
      }),
      { cwd: paths.workspace, sandbox, onWarning: (line) => warnings.push(line) },
    );
    const notice = hooks.sandboxNotice();
    expect(notice).toMatch(
      /^2 hooks will not run \(PreToolUse "touch .*guard"", SessionStart "touch .*context.*"\): /,
    );
    expect(notice).toMatch(
      /: hooks run only in the OS sandbox here, and it cannot run \(bubblewrap is not installed .*\)\. PreToolUse hooks that do not run make the calls they match ask\.$/,
    );
    expect(hooks.sandboxNotice()).toBeUndefined();
    const asked: PermissionRequest[] = [];
    const gate = hooks.wrapGate(async (request) => {
      asked.push(request);
      return { behavior: 'deny', reason: 'no one to ask' };
    });
    const request = permissionRequest('bash', { command: 'ls' });
    expect(await gate(request)).toEqual({ behavior: 'deny', reason: 'no one to ask' });
    expect(asked[0]?.opaque).toMatch(
      /^your PreToolUse hook "touch .*guard"" did not run: hooks run only in the OS sandbox here/,
    );
    // A tool no withheld hook matches is not asked on its account.
    expect(await gate(permissionRequest('read_file', { path: 'a' }))).toEqual({
      behavior: 'deny',
      reason: 'no one to ask',
    });
    expect(asked[1]?.opaque).toBeUndefined();
    expect(await hooks.sessionStart('startup')).toBe('');
    await hooks.stop(false);
    expect(fs.readdirSync(paths.workspace)).toEqual(['notifier']);
    // Said once, by sandboxNotice: not again through onWarning.
    expect(warnings).toEqual([]);
  });

  it('with no gate to ask, a call whose guard was withheld does not run (wrapGate(undefined), or the hooks alone)', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [paths.workspace],
      bwrapPath: path.join(paths.base, 'no-such-bwrap'),
      onWarning: () => undefined,
    });
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          { hooks: [{ type: 'command', command: 'true' }] },
          // Another hook's allow does not outweigh a guard that did not run.
          {
            hooks: [
              {
                type: 'command',
                command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`,
                sandbox: false,
              },
            ],
          },
        ],
      }),
      { cwd: paths.workspace, sandbox, onWarning: () => undefined },
    );
    const decision = await hooks.wrapGate(undefined)(permissionRequest('bash', { command: 'ls' }));
    expect(decision).toEqual({
      behavior: 'deny',
      reason: expect.stringMatching(/^your PreToolUse hook "true" did not run: /),
    });
    const alone = new CommandHooks(
      parseHooksConfig({ PreToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }] }),
      { cwd: paths.workspace, sandbox, onWarning: () => undefined },
    );
    const request = permissionRequest('bash', { command: 'ls' });
    expect(await alone.agentHooks.beforeToolExecution?.(request)).toEqual({
      action: 'skip',
      reason: expect.stringMatching(/^your PreToolUse hook "true" did not run: /),
    });
  });

  it('without sandboxNotice, onWarning says it once, on the first withheld hook', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [paths.workspace],
      bwrapPath: path.join(paths.base, 'no-such-bwrap'),
      onWarning: () => undefined,
    });
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({ Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] }),
      { cwd: paths.workspace, sandbox, onWarning: (line) => warnings.push(line) },
    );
    await hooks.stop(false);
    await hooks.stop(false);
    expect(warnings).toEqual([expect.stringMatching(/^1 hook will not run \(Stop "true"\)/)]);
  });
});

describe('a sandbox that fails to wrap a hook (a stand-in: a real wrap fails only on a broken machine)', () => {
  it('a PreToolUse guard that could not start asks; other hooks warn; nothing runs', async () => {
    const paths = fixture();
    const failing = {
      status: { active: true },
      wrap: async () => {
        throw new Error('no bash to close inherited descriptors');
      },
    };
    const warnings: string[] = [];
    const marker = `touch ${JSON.stringify(path.join(paths.workspace, 'ran'))}`;
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [{ hooks: [{ type: 'command', command: marker }] }],
        Stop: [{ hooks: [{ type: 'command', command: marker }] }],
      }),
      { cwd: paths.workspace, sandbox: failing, onWarning: (line) => warnings.push(line) },
    );
    const asked: PermissionRequest[] = [];
    const gate = hooks.wrapGate(async (request) => {
      asked.push(request);
      return { behavior: 'allow' };
    });
    expect(await gate(permissionRequest('bash', { command: 'ls' }))).toEqual({ behavior: 'allow' });
    expect(asked[0]?.opaque).toBe(
      `your PreToolUse hook "${marker}" did not run: the OS sandbox could not start it (no bash to close inherited descriptors)`,
    );
    await hooks.stop(false);
    expect(warnings).toEqual([
      `Stop hook "${marker}" failed: could not start in the sandbox: no bash to close inherited descriptors (in the OS sandbox; "sandbox": false on the hook runs it outside)`,
    ]);
    expect(fs.existsSync(path.join(paths.workspace, 'ran'))).toBe(false);
  });
});

describe('"sandbox" in a hook’s configuration', () => {
  it('takes true or false, nothing else, naming where', () => {
    const config = parseHooksConfig({
      Stop: [{ hooks: [{ type: 'command', command: 'notify', sandbox: false }] }],
    });
    expect(config.Stop?.[0]?.hooks[0]?.sandbox).toBe(false);
    expect(() =>
      parseHooksConfig(
        { Stop: [{ hooks: [{ type: 'command', command: 'notify', sandbox: 'no' }] }] },
        'settings.json: hooks',
      ),
    ).toThrow(
      new HooksConfigError('settings.json: hooks.Stop[0].hooks[0].sandbox must be true or false'),
    );
  });
});

/** What the gate is asked for a call of `toolName` (a real tool; an empty assistant message). */
function permissionRequest(toolName: string, args: Record<string, unknown>): PermissionRequest {
  return {
    toolCallId: `call_${toolName}`,
    toolName,
    requestedName: toolName,
    args,
    tool: defineTool({
      name: toolName,
      description: 'A tool.',
      input: z.object({}).passthrough(),
      execute: async () => '',
    }),
    assistantMessage: {
      role: 'assistant',
      content: [],
      provider: 'test',
      model: 'test',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'toolUse',
      timestamp: 0,
    },
    subjects: [],
    tier: 'read-only',
  };
}

/** A TCP server on 127.0.0.1 port 0; `received` is what the first connection sent. */
async function listen(): Promise<{ port: number; received: Promise<string> }> {
  let deliver: (text: string) => void = () => undefined;
  const received = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const server = net.createServer((socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('end', () => deliver(text));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, received };
}

/** Host pids of live processes whose arguments contain `text`. */
function processesWith(text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
        return fs
          .readFileSync(`/proc/${entry}/cmdline`, 'latin1')
          .replaceAll('\0', ' ')
          .includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The processes still matching after a bounded wait: the kernel ends a pid namespace asynchronously. */
async function gone(text: string, withinMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  let left = processesWith(text);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = processesWith(text);
  }
  return left;
}
