// /compact, automatic compaction and the context in /cost, in a real terminal (tmux), and the
// compaction line of stream-json.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, runCli } from '../testing/test-support.js';
import { streamJsonEventSchema } from './stream-json.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

/** 40,000 characters (~10k tokens) whose first line names the file. */
const bigFile = (name: string) => `${name}\n${`${name} line\n`.repeat(4_000)}`;
const read = (path: string) => ({ toolCalls: [{ name: 'read_file', arguments: { path } }] });

/**
 * Three reads of big files; the third answer reports 85k tokens of context, so with a 100k window
 * (threshold 80k) the next call compacts first: the summary takes the next step of the script.
 */
const longScript = {
  contextWindow: 100_000,
  steps: [
    read('a.txt'),
    read('b.txt'),
    { ...read('c.txt'), usage: { input: 85_000, output: 100 } },
    { text: 'SUMMARY-ONE: read a.txt and b.txt; c.txt is next.' },
    { text: 'Read all three files.' },
    { text: 'SUMMARY-TWO: read a.txt, b.txt, c.txt; file names kept.' },
    { text: 'Still with you after two compactions.' },
  ],
};

async function workspaceWithFiles(prefix: string) {
  const folder = await harness.folder(prefix);
  for (const name of ['a.txt', 'b.txt', 'c.txt'])
    await writeFile(join(folder.workspace, name), bigFile(name));
  return folder;
}

describe('compaction in the REPL (tmux)', () => {
  it('compacts automatically near the window, /compact compacts on request, /cost shows the context, and a resumed session keeps its compactions', async () => {
    const folder = await workspaceWithFiles('agent-cli-compact-');
    const save = join(folder.dir, 'conversation.json');
    const repl = await harness.start({
      ...folder,
      script: longScript,
      args: ['--mode', 'workspace-write', '--save', save],
    });
    await repl.waitForPrompt();
    repl.submit('read a, b and c');
    await repl.waitForText('Read all three files.');
    await repl.waitForPrompt(2);
    let screen = repl.screen();
    expect(screen).toMatch(
      /⋯ compacting the conversation \(~9\dk tokens\): the context is near the model’s window/,
    );
    expect(screen).toMatch(
      /⋯ compacted: messages before #\d+ summarised, ~9\dk → ~\d+k tokens sent/,
    );

    repl.submit('/cost');
    await repl.waitForText('context: ~');
    expect(repl.screen()).toMatch(
      /context: ~\d+(\.\d)?k tokens of 100k \(\d+%\); compacts past ~80k; compacted 1 time\b/,
    );

    repl.submit('/compact keep file names');
    await repl.waitForText('⋯ compacted (focus: keep file names)');
    screen = repl.screen();
    expect(screen).toContain('⋯ compacting the conversation');
    expect(screen).toContain('asked with /compact');
    repl.submit('/cost');
    await repl.waitForText('compacted 2 times');

    // Saved with the conversation: every message, and both summaries.
    const saved = JSON.parse(await readFile(save, 'utf8')) as {
      messages: { role: string; content: unknown }[];
      compactions: { reason: string; summary: string; focus?: string; firstKeptIndex: number }[];
    };
    expect(saved.messages.filter((message) => message.role === 'toolResult')).toHaveLength(3);
    expect(saved.compactions.map((compaction) => compaction.reason)).toEqual([
      'threshold',
      'manual',
    ]);
    expect(saved.compactions[0]?.summary).toContain('SUMMARY-ONE');
    expect(saved.compactions[1]).toMatchObject({
      summary: expect.stringContaining('SUMMARY-TWO'),
      focus: 'keep file names',
    });
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);

    // Resumed: the compactions come back with the conversation.
    const resumed = await harness.start({
      ...folder,
      name: 'resumed',
      script: { contextWindow: 100_000, steps: [{ text: 'Resumed fine.' }] },
      args: ['--resume', save],
    });
    await resumed.waitForPrompt();
    resumed.submit('/cost');
    await resumed.waitForText('compacted 2 times');
    resumed.submit('and now?');
    await resumed.waitForText('Resumed fine.');
    resumed.submit('/exit');
    expect(await resumed.waitForExit()).toBe(0);
  });

  it('/compact with nothing older than the newest turn says so', async () => {
    const folder = await harness.folder('agent-cli-compact-empty-');
    const repl = await harness.start({ ...folder, script: { steps: [{ text: 'hello' }] } });
    await repl.waitForPrompt();
    repl.submit('/compact');
    await repl.waitForText('nothing to compact: nothing older than the newest turn to summarise');
    repl.submit('/cost');
    await repl.waitForText('the model’s window is unknown');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});

describe('compaction in -p', () => {
  it('stream-json reports the compaction and the run completes', async () => {
    const folder = await workspaceWithFiles('agent-cli-compact-p-');
    const script = join(folder.dir, 'script.json');
    await writeFile(script, JSON.stringify(longScript));
    const result = await runCli([
      '--scripted',
      script,
      '--cwd',
      folder.workspace,
      '--mode',
      'workspace-write',
      '--output-format',
      'stream-json',
      '-p',
      'read a, b and c',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)));
    const compaction = lines.find((line) => line.type === 'compaction');
    expect(compaction).toMatchObject({
      type: 'compaction',
      reason: 'threshold',
      summary: 'SUMMARY-ONE: read a.txt and b.txt; c.txt is next.',
    });
    expect(lines.at(-1)).toMatchObject({
      type: 'run-end',
      stopReason: 'completed',
      finalText: 'Read all three files.',
    });
  });
});
