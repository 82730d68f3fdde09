import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeForAnyUser, skipWithout } from '@agent/tooling-system-tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServe } from '../testing/mcp-serve-support.js';
import { assertBuilt, cleanEnv, cliPath, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

/** A credential of the serving process's environment: the client must never read its value. */
const secret = 'sk-test-servehooks-0123456789abcdef';

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? `[${block.type}]`)
    .join('\n');
}

async function folder(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  cleanups.push(dir.dispose);
  return dir.path;
}

/**
 * A user home whose settings run the hooks outside the OS sandbox (the test folders are not
 * trusted): a PreToolUse hook that refuses `touch` (quoting the credential, and printing on its
 * stdout) and a PostToolUse hook on read_file that writes down what it saw and adds context.
 */
async function homeWithHooks(seen: string): Promise<string> {
  const home = await folder('agent-serve-hooks-home-');
  const guard = join(home, 'guard.mjs');
  await writeFile(
    guard,
    `let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  process.stdout.write('noise from the guard on its stdout\\n');
  if (String(event.tool_input.command).includes('touch')) {
    process.stderr.write('deploy guard: no touching (${secret}) session ' + event.session_id);
    process.exit(2);
  }
});
`,
  );
  const after = join(home, 'after.mjs');
  await writeFile(
    after,
    `import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ event: event.hook_event_name, tool: event.tool_name, session: event.session_id }) + '\\n');
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'checked by the after hook ${secret}' } }));
});
`,
  );
  await writeFile(
    join(home, 'settings.json'),
    JSON.stringify({
      hooksSandbox: 'off',
      hooks: {
        PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `node ${guard}` }] }],
        PostToolUse: [
          { matcher: 'read_file', hooks: [{ type: 'command', command: `node ${after}` }] },
        ],
      },
    }),
  );
  return home;
}

/** `agent mcp serve` over stdio with a real SDK client; every transport error (a non-JSON line on stdout) collected. */
async function serve(
  cwd: string,
  home: string,
  stderr: string[],
  extra: string[] = [],
  env: Record<string, string> = {},
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      cliPath,
      'mcp',
      'serve',
      '--cwd',
      cwd,
      '--mode',
      'full-access',
      '--sandbox',
      'off',
      ...extra,
    ],
    env: cleanEnv({ AGENT_HOME: home, MY_SERVICE_SECRET: secret, ...env }),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const client = new Client({ name: 'sdk-client', version: '1' });
  const errors: unknown[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, errors };
}

describe('agent mcp serve runs the command hooks of the settings', () => {
  it('a PreToolUse hook refuses a bash command (which does not run); PostToolUse runs; all redacted; stdout stays JSON-RPC', async () => {
    const cwd = await folder('agent-serve-hooks-');
    await writeFile(join(cwd, 'notes.txt'), 'hello from the workspace\n');
    const seen = join(await folder('agent-serve-hooks-seen-'), 'seen.jsonl');
    const home = await homeWithHooks(seen);
    const stderr: string[] = [];
    const { client, errors } = await serve(cwd, home, stderr);

    const refused = await client.callTool({
      name: 'bash',
      arguments: { command: 'touch marker' },
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('deploy guard: no touching');
    expect(text(refused)).not.toContain(secret);
    expect(text(refused)).toContain('[redacted:');
    expect(existsSync(join(cwd, 'marker'))).toBe(false);
    // One id for every call of this serve process.
    const session = /session (mcp-serve-[0-9a-f-]+)/.exec(text(refused))?.[1];
    expect(session).toBeDefined();

    const echo = await client.callTool({ name: 'bash', arguments: { command: 'echo fine' } });
    expect(echo.isError).toBeFalsy();
    expect(text(echo)).toContain('fine');

    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');
    expect(text(read)).toContain('checked by the after hook');
    expect(text(read)).not.toContain(secret);
    const events = (await readFile(seen, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; tool: string; session: string });
    expect(events).toEqual([{ event: 'PostToolUse', tool: 'read_file', session }]);

    // The guard printed on its stdout at every call; none of it reached the JSON-RPC channel.
    expect(errors).toEqual([]);
    expect(stderr.join('')).not.toContain('noise from the guard');
  });

  it("an untrusted project's own settings hook does not run outside the sandbox", async () => {
    const cwd = await folder('agent-serve-hooks-untrusted-');
    await writeFile(join(cwd, 'notes.txt'), 'hello\n');
    const outside = await folder('agent-serve-hooks-outside-');
    const marker = join(outside, 'ran');
    await mkdir(join(cwd, '.agent'));
    await writeFile(
      join(cwd, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: {
          PostToolUse: [
            { hooks: [{ type: 'command', command: `touch ${marker}`, sandbox: false }] },
          ],
        },
      }),
    );
    // The user's own settings: hooks outside the sandbox wherever they are (the project's may not say so).
    const home = await folder('agent-serve-hooks-home-');
    await writeFile(join(home, 'settings.json'), JSON.stringify({ hooksSandbox: 'off' }));
    const stderr: string[] = [];
    const { client, errors } = await serve(cwd, home, stderr);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello');
    expect(existsSync(marker)).toBe(false);
    expect(errors).toEqual([]);
    expect(stderr.join('')).toContain('ignored "hooks.PostToolUse[0]');

    // The same file with --trust (this run only): its hook does run, so the file was read.
    const trusted = await serve(cwd, home, [], ['--trust']);
    await trusted.client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(existsSync(marker)).toBe(true);
  });
});

/** A hook that appends its event's name, session and file path to `seen`, one JSON line each. */
async function recordingHook(home: string, seen: string): Promise<string> {
  const path = join(home, 'record.mjs');
  await writeFile(
    path,
    `import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ event: event.hook_event_name, session: event.session_id, path: event.tool_input.path }) + '\\n');
});
`,
  );
  return `node ${path}`;
}

describe('agent mcp serve --http: each MCP client session is a hook session', () => {
  it('two clients: every hook event of one carries its own session_id, the other’s another', async () => {
    const cwd = await folder('agent-serve-hook-sessions-');
    for (const name of ['a.txt', 'b.txt']) await writeFile(join(cwd, name), `file ${name}\n`);
    const home = await folder('agent-serve-hook-sessions-home-');
    const seen = join(await folder('agent-serve-hook-sessions-seen-'), 'seen.jsonl');
    const command = await recordingHook(home, seen);
    const hooks = [{ matcher: 'read_file', hooks: [{ type: 'command', command }] }];
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ hooksSandbox: 'off', hooks: { PreToolUse: hooks, PostToolUse: hooks } }),
    );
    const server = await startHttpServe(['--cwd', cwd], cleanEnv({ AGENT_HOME: home }));
    cleanups.push(server.stop);
    const clients: Client[] = [];
    for (const name of ['first', 'second']) {
      const client = new Client({ name, version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { Authorization: `Bearer ${server.token ?? ''}` } },
        }),
      );
      cleanups.push(() => client.close());
      clients.push(client);
    }
    // The first client reads a.txt, the second b.txt, twice each, the two at once.
    for (const _round of [1, 2])
      await Promise.all(
        clients.map(async (client, index) => {
          const read = await client.callTool({
            name: 'read_file',
            arguments: { path: index === 0 ? 'a.txt' : 'b.txt' },
          });
          expect(text(read)).toContain(`file ${index === 0 ? 'a.txt' : 'b.txt'}`);
        }),
      );
    const events = (await readFile(seen, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; session: string; path: string });
    expect(events).toHaveLength(8);
    const sessionsOf = (path: string) =>
      new Set(events.filter((event) => event.path === path).map((event) => event.session));
    const [first] = sessionsOf('a.txt');
    const [second] = sessionsOf('b.txt');
    expect(sessionsOf('a.txt')).toEqual(new Set([first]));
    expect(sessionsOf('b.txt')).toEqual(new Set([second]));
    expect(first).toMatch(/^mcp-serve-[0-9a-f-]{36}$/);
    expect(second).toMatch(/^mcp-serve-[0-9a-f-]{36}$/);
    expect(first).not.toBe(second);
  });
});

/**
 * A PreToolUse hook in the user's hooks folder, run by a copy of this node there (the sandbox
 * hides /root): it tries to write in the home, outside the workspace and inside it, then refuses
 * `touch` saying how the writes went.
 */
async function writingGuard(
  base: string,
): Promise<{ home: string; agentHome: string; command: string }> {
  const home = join(base, 'home');
  const agentHome = join(home, '.agent');
  const hooksFolder = join(agentHome, 'hooks');
  await mkdir(hooksFolder, { recursive: true });
  const node = nodeForAnyUser(join(hooksFolder, 'node'));
  const guard = join(hooksFolder, 'guard.mjs');
  await writeFile(
    guard,
    `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
const attempt = (path) => { try { writeFileSync(path, 'from the hook'); return 'written'; } catch (error) { return error.code; } };
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  const home = attempt(join(process.env.HOME, 'from-the-hook'));
  const outside = attempt(${JSON.stringify(join(base, 'outside', 'from-the-hook'))});
  const inside = attempt(join(event.cwd, 'from-the-hook'));
  if (String(event.tool_input.command).includes('touch')) {
    process.stderr.write('sandboxed guard: no touching; home ' + home + ', outside ' + outside + ', workspace ' + inside);
    process.exit(2);
  }
});
`,
  );
  return { home, agentHome, command: `${node} ${guard}` };
}

describe('agent mcp serve runs the hooks of an untrusted folder in the OS sandbox', () => {
  it.for([
    ['by default (the folder is not trusted)', {}, 'EROFS|EACCES|ENOENT|EPERM'],
    ['the control: "hooksSandbox": "off"', { hooksSandbox: 'off' }, 'written'],
  ] as const)(
    '%s: a refusal reaches the client; writes outside the workspace',
    async ([label, settings, outsideWrites], context) => {
      skipWithout('bwrap')(context);
      // Not under /tmp, which the sandbox replaces with a private one.
      const base = await mkdtemp('/var/tmp/agent-serve-hook-sandbox-');
      cleanups.push(() => rm(base, { recursive: true, force: true }));
      await chmod(base, 0o755);
      const cwd = join(base, 'ws');
      await mkdir(cwd);
      await mkdir(join(base, 'outside'));
      const { home, agentHome, command } = await writingGuard(base);
      await writeFile(
        join(agentHome, 'settings.json'),
        JSON.stringify({
          ...settings,
          hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command }] }] },
        }),
      );
      const stderr: string[] = [];
      const { client, errors } = await serve(cwd, agentHome, stderr, [], { HOME: home });

      const refused = await client.callTool({
        name: 'bash',
        arguments: { command: 'touch marker' },
      });
      expect(refused.isError, label).toBe(true);
      const refusal = text(refused);
      expect(refusal).toContain('sandboxed guard: no touching');
      expect(existsSync(join(cwd, 'marker'))).toBe(false);
      // The hook ran (it wrote in the workspace); what it could write elsewhere is the sandbox's.
      expect(refusal).toContain('workspace written');
      expect(existsSync(join(cwd, 'from-the-hook'))).toBe(true);
      expect(refusal).toMatch(new RegExp(`home (${outsideWrites}), outside (${outsideWrites}),`));
      const escaped = outsideWrites === 'written';
      expect(existsSync(join(home, 'from-the-hook'))).toBe(escaped);
      expect(existsSync(join(base, 'outside', 'from-the-hook'))).toBe(escaped);

      // A call the guard lets through runs.
      const echo = await client.callTool({ name: 'bash', arguments: { command: 'echo fine' } });
      expect(echo.isError, stderr.join('')).toBeFalsy();
      expect(text(echo)).toContain('fine');
      expect(errors).toEqual([]);
    },
  );
});
