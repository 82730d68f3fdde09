import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from './test-support.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-spill-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const uid = process.getuid?.() ?? 0;

/** The text of every tool result in a conversation saved with --save, in order. */
function toolResults(saved: string): string[] {
  const { messages } = JSON.parse(readFileSync(saved, 'utf8')) as {
    messages: { role: string; content: { type: string; text?: string }[] }[];
  };
  return messages
    .filter((message) => message.role === 'toolResult')
    .map((message) => message.content.map((part) => part.text ?? '').join('\n'));
}

describe('bash spill files of a CLI session', () => {
  it('sandboxed bash tails the spill file the notice names; nothing is left once the CLI exits', async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    // TMPDIR of the test's own: the per-user spill directory lives there.
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    const perUser = join(tmp, `agent-tools-builtin-${uid}`);
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 2000000' } }] },
      {
        toolCalls: [
          // The only session directory the sandbox shows is this session's.
          { name: 'bash', arguments: { command: `tail -n 3 ${perUser}/*/bash-*-stdout-*.log` } },
        ],
      },
      { text: 'Tailed it.' },
    ]);
    const saved = join(dir, 'saved.json');
    const { code } = await runCli(
      ['-p', 'count', '--scripted', script, '--cwd', workspace, '--mode', 'full-access'].concat([
        '--save',
        saved,
      ]),
      { env: cleanEnv({ TMPDIR: tmp }) },
    );
    expect(code).toBe(0);
    const results = toolResults(saved);
    const notice = new RegExp(`full output saved to ${perUser}/\\d+-[0-9a-f]{16}/bash-\\S+\\.log`);
    expect(results[0]).toMatch(notice);
    expect(results[0]).not.toContain('Blocked by the sandbox');
    expect(results[1]).toMatch(/^1999998\n1999999\n2000000\nExit code: 0$/);
    expect(existsSync(perUser)).toBe(true);
    expect(readdirSync(perUser)).toEqual([]);
  });
});
