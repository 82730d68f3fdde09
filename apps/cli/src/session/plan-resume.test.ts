// Plan mode is the session's state, not the text of its prompts: a session saved while planning
// (no plan approved) goes on planning when resumed. Before, --continue/--resume took the settings'
// default mode (here workspace-write), and the model — told by exit_plan_mode that no approval was
// needed any more — carried out a plan no one approved.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(() => assertBuilt());
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const plan = '1. Replace "draft" with "final" in notes.txt';
const change = { name: 'write_file', arguments: { path: 'notes.txt', content: 'final\n' } };

async function plannedSession() {
  const dir = await tempDir('agent-cli-plan-resume-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  await mkdir(home);
  await writeFile(join(workspace, 'notes.txt'), 'draft\n');
  // The user's own default: edits without asking.
  await writeFile(
    join(home, 'settings.json'),
    JSON.stringify({ permissions: { defaultMode: 'workspace-write' } }),
  );
  const env = cleanEnv({ AGENT_HOME: home });
  const save = join(dir.path, 'session.json');
  const script = async (name: string, steps: unknown[]) => {
    const path = join(dir.path, `${name}.json`);
    await writeFile(path, JSON.stringify({ steps }));
    return path;
  };
  const planned = await runCli(
    [
      '--scripted',
      await script('plan', [{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan } }] }]),
      '--cwd',
      workspace,
      '--mode',
      'plan',
      '--save',
      save,
      '-p',
      'plan the change',
    ],
    { env },
  );
  expect(planned.code).toBe(0);
  expect(planned.stdout).toContain(plan);
  expect(JSON.parse(await readFile(save, 'utf8')).mode).toBe('plan');
  // The next prompt: the model goes ahead (exit_plan_mode outside plan mode says "go on").
  const goAhead = await script('go', [
    { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan } }] },
    { toolCalls: [change] },
    { text: 'Done.' },
  ]);
  const resume = (extra: string[]) =>
    runCli(
      [
        '--scripted',
        goAhead,
        '--cwd',
        workspace,
        '--resume',
        save,
        '--save',
        save,
        ...extra,
        '-p',
        'sounds right',
      ],
      { env },
    );
  const notes = () => readFile(join(workspace, 'notes.txt'), 'utf8');
  return { resume, notes, save };
}

describe('a session saved in plan mode', () => {
  it('goes on in plan mode when resumed without --mode: nothing changes unapproved', async () => {
    const session = await plannedSession();
    const resumed = await session.resume([]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('This session was in plan mode');
    expect(resumed.stderr).not.toMatch(/✓ write_file/);
    expect(await session.notes()).toBe('draft\n');
    // Still planning when saved again.
    expect(JSON.parse(await readFile(session.save, 'utf8')).mode).toBe('plan');
  });

  it('takes an explicit --mode as the user’s choice', async () => {
    const session = await plannedSession();
    const resumed = await session.resume(['--mode', 'workspace-write']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).not.toContain('This session was in plan mode');
    expect(await session.notes()).toBe('final\n');
    expect(JSON.parse(await readFile(session.save, 'utf8')).mode).toBeUndefined();
  });
});
