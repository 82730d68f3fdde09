// The user settings' "compaction": checked, read only from the user's file, and in force in a run.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { streamJsonEventSchema } from '../modes/stream-json.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';
import { parseCliArgs } from './args.js';
import { CliError } from './cli-error.js';
import { applySettings, loadSettings, mergeSettings, readSettingsLayers } from './settings.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function folders(user: unknown, project?: unknown) {
  const dir = await tempDir('agent-cli-compaction-settings-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home, { recursive: true });
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await writeFile(join(home, 'settings.json'), JSON.stringify(user));
  if (project !== undefined)
    await writeFile(join(workspace, '.agent', 'settings.json'), JSON.stringify(project));
  return { dir: dir.path, home, workspace };
}

describe('"compaction" in settings', () => {
  it('the user settings set the window, threshold and tokens kept; flags-free options carry them', async () => {
    const { home, workspace } = await folders({
      compaction: { contextWindow: 32_768, threshold: 0.7, keepRecentTokens: 4_000 },
    });
    const settings = await loadSettings(workspace, home);
    expect(settings.compaction).toEqual({
      contextWindow: 32_768,
      threshold: 0.7,
      keepRecentTokens: 4_000,
    });
    const options = applySettings(parseCliArgs(['-p', 'x']), settings, false);
    expect(options.compaction).toEqual(settings.compaction);
  });

  it('false turns it off', async () => {
    const { home, workspace } = await folders({ compaction: false });
    expect((await loadSettings(workspace, home)).compaction).toBe(false);
  });

  it('a project file may not set it (left out, said)', async () => {
    const { home, workspace } = await folders({}, { compaction: { contextWindow: 10 } });
    const layers = await readSettingsLayers(workspace, home);
    expect(mergeSettings(layers).compaction).toBeUndefined();
    expect(layers.flatMap((layer) => layer.ignored ?? []).join('\n')).toMatch(
      /ignored "compaction" in .*settings.json: only your settings/,
    );
  });

  it.each([
    [{ contextWindow: 0 }, /compaction.contextWindow must be a number of tokens > 0/],
    [{ contextWindow: '32k' }, /compaction.contextWindow must be a number/],
    [{ threshold: 1.5 }, /compaction.threshold must be a fraction of the window in \(0, 1\]/],
    [{ threshold: 0 }, /compaction.threshold must be a fraction/],
    [{ keepRecentTokens: -1 }, /compaction.keepRecentTokens must be a number of tokens >= 0/],
    [{ window: 1000 }, /unknown compaction setting "window"/],
    [true, /"compaction" must be false or an object/],
    [[1], /"compaction" must be false or an object/],
  ])('%j is refused, naming the file and key', async (compaction, message) => {
    const { home, workspace } = await folders({ compaction });
    const error = await loadSettings(workspace, home).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CliError);
    expect(String((error as Error).message)).toMatch(message);
    expect(String((error as Error).message)).toContain(join(home, 'settings.json'));
  });

  it('a model whose window only the settings know compacts in a run', async () => {
    const { dir, home, workspace } = await folders({ compaction: { contextWindow: 100_000 } });
    const big = (name: string) => `${name}\n${`${name} line\n`.repeat(4_000)}`;
    for (const name of ['a.txt', 'b.txt', 'c.txt'])
      await writeFile(join(workspace, name), big(name));
    const read = (path: string) => ({ toolCalls: [{ name: 'read_file', arguments: { path } }] });
    const script = join(dir, 'script.json');
    // No contextWindow in the script: the scripted model reports none.
    await writeFile(
      script,
      JSON.stringify({
        steps: [
          read('a.txt'),
          read('b.txt'),
          { ...read('c.txt'), usage: { input: 85_000, output: 100 } },
          { text: 'SUMMARY' },
          { text: 'Done.' },
        ],
      }),
    );
    const result = await runCli(
      [
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'workspace-write',
        '--output-format',
        'stream-json',
        '-p',
        'read',
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
    expect(result.code).toBe(0);
    const lines = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)));
    expect(lines.find((line) => line.type === 'compaction')).toMatchObject({
      reason: 'threshold',
      summary: 'SUMMARY',
    });
  });
});
