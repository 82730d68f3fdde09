import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Agent Skills in the CLI', () => {
  it('offers .agent/skills through the skill tool; the skill script runs through bash and its rules', async () => {
    const dir = await tempDir('agent-cli-skills-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    const skill = join(workspace, '.agent', 'skills', 'greeter');
    await mkdir(join(skill, 'scripts'), { recursive: true });
    await writeFile(
      join(skill, 'SKILL.md'),
      '---\nname: greeter\ndescription: Greets people properly.\n---\nRun `bash scripts/greet.sh NAME` from the skill folder.\n',
    );
    await writeFile(join(skill, 'scripts', 'greet.sh'), 'echo "Good day, $1."\n');
    // A broken skill is reported and skipped; the good one still loads.
    await mkdir(join(workspace, '.agent', 'skills', 'broken'));
    await writeFile(join(workspace, '.agent', 'skills', 'broken', 'SKILL.md'), 'no front matter');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'skill', arguments: { name: 'greeter' } }] },
      {
        toolCalls: [
          {
            name: 'bash',
            arguments: { command: 'bash .agent/skills/greeter/scripts/greet.sh Ada' },
          },
        ],
      },
      { text: 'Greeted Ada.' },
    ]);
    const { code, stdout, stderr } = await runCli(
      [
        '-p',
        'greet Ada',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--allow',
        'skill(*)',
        '--allow',
        'bash(bash .agent/skills/*)',
      ],
      { env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
    );
    expect(code).toBe(0);
    expect(stdout).toBe('Greeted Ada.\n');
    expect(stderr).toMatch(/skills: .*broken\/SKILL\.md: skipped, no YAML front matter/);
    expect(stderr).toMatch(/✓ skill: Skill "greeter" — its folder is /);
    expect(stderr).toContain('✓ bash: Good day, Ada.');
  });
});
