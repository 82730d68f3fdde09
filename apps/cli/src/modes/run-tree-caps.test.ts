// The whole run tree's caps through the built CLI: without --max-turns the run and its sub-agents
// still stop at a default number of model calls together, and tool calls (sub-agents' included)
// stop at --max-tool-calls or its default.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultTreeModelCalls, defaultTreeToolCalls } from '../session/session.js';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, runCli, writeScript } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
afterEach(() => harness.dispose());

/** A workspace with one agent file, `helper`. */
async function withHelper(prefix: string): Promise<{ dir: string; workspace: string }> {
  const folder = await harness.folder(prefix);
  await mkdir(join(folder.workspace, '.agent', 'agents'), { recursive: true });
  await mkdir(join(folder.workspace, '.git'));
  await writeFile(
    join(folder.workspace, '.agent', 'agents', 'helper.md'),
    '---\nname: helper\ndescription: Does what it is told.\n---\nDo it.\n',
  );
  return folder;
}

/** `count` turns of `perTurn` reads of distinct missing files (no loop detection). */
function reads(count: number, perTurn: number, from = 0) {
  return Array.from({ length: count }, (_, turn) => ({
    toolCalls: Array.from({ length: perTurn }, (_, index) => ({
      name: 'read_file',
      arguments: { path: `missing-${from + turn}-${index}` },
    })),
  }));
}

describe('the run tree’s caps without flags', () => {
  it(`five sub-agents that keep calling stop at ${defaultTreeModelCalls} model calls in all`, async () => {
    const { dir, workspace } = await withHelper('agent-cli-tree-turns-');
    const script = await writeScript(dir, [
      {
        toolCalls: Array.from({ length: 5 }, (_, index) => ({
          name: 'helper',
          arguments: { task: `read batch ${index}` },
        })),
      },
      // Each child may take 100 turns of its own: 500 in all unless the tree's cap stops them.
      ...reads(520, 1),
      { text: 'parent done' },
    ]);
    const run = await runCli(
      ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
      { cwd: dir },
    );
    expect(run.stderr).toContain(`the budget of ${defaultTreeModelCalls} model calls is spent`);
    expect(run.code).toBe(3);
    expect(run.stdout).not.toContain('parent done');
    expect(run.stderr.match(/│ helper → read_file/g)?.length).toBeLessThan(defaultTreeModelCalls);
  });

  it(`a child making 40 calls a turn stops at ${defaultTreeToolCalls} tool calls`, async () => {
    const { dir, workspace } = await withHelper('agent-cli-tree-calls-');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'read them all' } }] },
      ...reads(60, 40),
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const run = await runCli(
      ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
      { cwd: dir },
    );
    expect(run.stderr).toContain(`the budget of ${defaultTreeToolCalls} tool calls`);
    expect(run.code).toBe(3);
    expect(run.stdout).not.toContain('parent done');
  });
});

describe('--max-tool-calls', () => {
  it('counts the parent’s call of a sub-agent and the child’s calls together', async () => {
    const { dir, workspace } = await withHelper('agent-cli-tree-flag-');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'read them all' } }] },
      ...reads(8, 1),
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const argv = ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'];
    const run = await runCli([...argv, '--max-tool-calls', '4'], { cwd: dir });
    expect(run.code).toBe(3);
    // helper, then three reads; the fourth read is refused.
    expect(run.stderr.match(/│ helper → read_file/g)).toHaveLength(4);
    expect(run.stderr).toContain('the budget of 4 tool calls');
    expect(run.stdout).not.toContain('parent done');
  });

  it.each(['0', '-1', '2.5', 'many', ''])('refuses %j, naming the flag', async (value) => {
    const run = await runCli(['-p', 'go', `--max-tool-calls=${value}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-tool-calls must be a whole number >= 1');
  });
});
