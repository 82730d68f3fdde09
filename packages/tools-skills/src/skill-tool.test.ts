import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, executeTool, PermissionPolicy } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSkillTool } from './skill-tool.js';
import { defaultSkillRoots, discoverSkills } from './skills.js';

let base: string;
let cwd: string;
let home: string;

async function skill(
  root: string,
  folder: string,
  text: string,
  files: Record<string, string> = {},
) {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), text);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

const pdf = `---
name: pdf-tools
description: Extract text and tables from PDF files. Use when the user gives a PDF.
license: MIT
---
# PDF tools

Run \`scripts/extract.sh <file>\` to get the text.
`;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'skills-test-'));
  cwd = path.join(base, 'project');
  home = path.join(base, 'home');
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('discoverSkills', () => {
  it('finds skills in the workspace and the user folders; the workspace wins a name', async () => {
    await skill(path.join(cwd, '.agent', 'skills'), 'pdf', pdf, { 'scripts/extract.sh': 'echo x' });
    await skill(
      path.join(home, '.agent', 'skills'),
      'pdf-old',
      pdf.replace('Extract text', 'An older way to extract text'),
    );
    await skill(
      path.join(home, '.claude', 'skills'),
      'notes',
      '---\nname: notes\ndescription: Keep meeting notes.\n---\nWrite notes in notes/.\n',
    );
    const found = await discoverSkills(defaultSkillRoots(cwd, home));
    expect(found.skills.map((s) => s.name)).toEqual(['notes', 'pdf-tools']);
    expect(found.skills[1]?.description).toMatch(/^Extract text/);
    expect(found.skills[1]?.metadata).toEqual({ license: 'MIT' });
    expect(found.warnings).toEqual([
      expect.stringMatching(
        /pdf-old\/SKILL\.md: skill "pdf-tools" is also in .*project.*which wins/,
      ),
    ]);
  });

  it('skips malformed skills with a warning naming the file and the reason; the rest load', async () => {
    const root = path.join(cwd, '.agent', 'skills');
    await skill(root, 'good', '---\nname: good\ndescription: Fine.\n---\nBody\n');
    await skill(root, 'no-front', '# Just markdown\n');
    await skill(root, 'bad-yaml', '---\nname: [unclosed\ndescription: x\n---\nBody\n');
    await skill(root, 'no-name', '---\ndescription: Nameless.\n---\n');
    await skill(root, 'bad-name', '---\nname: Bad Name\ndescription: Spaces.\n---\n');
    await skill(root, 'no-desc', '---\nname: no-desc\n---\n');
    await mkdir(path.join(root, 'empty-folder'));
    await writeFile(path.join(root, 'stray.md'), 'not a folder');
    const found = await discoverSkills([root]);
    expect(found.skills.map((s) => s.name)).toEqual(['good']);
    const byFile = found.warnings.map((w) => w.replace(`${root}/`, ''));
    expect(byFile).toEqual([
      expect.stringMatching(/^bad-name\/SKILL\.md: skipped, "name: Bad Name" must be lowercase/),
      expect.stringMatching(/^bad-yaml\/SKILL\.md: skipped, its front matter is not valid YAML/),
      'no-desc/SKILL.md: skipped, the front matter has no "description"',
      expect.stringMatching(/^no-front\/SKILL\.md: skipped, no YAML front matter/),
      'no-name/SKILL.md: skipped, the front matter has no "name"',
    ]);
  });

  it('reads CRLF files and a byte-order mark, and follows a symlinked skill folder', async () => {
    const elsewhere = await skill(
      path.join(base, 'shared'),
      'crlf',
      '\uFEFF---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\nBody\r\n',
    );
    const root = path.join(cwd, '.agent', 'skills');
    await mkdir(root, { recursive: true });
    await symlink(elsewhere, path.join(root, 'crlf'));
    const found = await discoverSkills([root]);
    expect(found.skills).toMatchObject([
      { name: 'crlf', description: 'Windows line ends.', dir: elsewhere },
    ]);
  });
});

describe('the skill tool', () => {
  it('lists names and descriptions only; a call loads the instructions and the files', async () => {
    const dir = await skill(path.join(cwd, '.agent', 'skills'), 'pdf', pdf, {
      'scripts/extract.sh': 'echo text',
      'reference/forms.md': '# Forms',
    });
    const { tool, skills } = await loadSkillTool({ cwd, home });
    expect(skills).toHaveLength(1);
    if (tool === undefined) throw new Error('no tool');
    expect(tool.description).toContain('- pdf-tools: Extract text and tables from PDF files.');
    expect(tool.description).not.toContain('scripts/extract.sh');
    const result = await executeTool(tool, { name: 'pdf-tools' });
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    expect(result.isError).not.toBe(true);
    expect(text).toContain(`its folder is ${dir}`);
    expect(text).toContain('Run `scripts/extract.sh <file>` to get the text.');
    expect(text).not.toContain('license: MIT');
    expect(text).toContain('Files of the skill:\n- reference/forms.md\n- scripts/extract.sh');
  });

  it('reads the instructions afresh at each call, and says clearly when they broke', async () => {
    const dir = await skill(path.join(cwd, '.agent', 'skills'), 'pdf', pdf);
    const { tool } = await loadSkillTool({ cwd, home });
    if (tool === undefined) throw new Error('no tool');
    await writeFile(
      path.join(dir, 'SKILL.md'),
      pdf.replace('to get the text', 'to get the text and tables'),
    );
    const fresh = await executeTool(tool, { name: 'pdf-tools' });
    expect(JSON.stringify(fresh.content)).toContain('text and tables');
    await writeFile(path.join(dir, 'SKILL.md'), 'gone wrong');
    const broken = await executeTool(tool, { name: 'pdf-tools' });
    expect(broken.isError).toBe(true);
    expect(JSON.stringify(broken.content)).toContain('Skill \\"pdf-tools\\" is broken now');
    if (process.getuid?.() !== 0) {
      await chmod(path.join(dir, 'SKILL.md'), 0);
      const unreadable = await executeTool(tool, { name: 'pdf-tools' });
      expect(JSON.stringify(unreadable.content)).toContain('cannot be read any more');
    }
  });

  it('no skills: no tool; an unknown name is an invalid-args result listing the skills', async () => {
    expect((await loadSkillTool({ cwd, home })).tool).toBeUndefined();
    await skill(path.join(cwd, '.agent', 'skills'), 'pdf', pdf);
    const { tool } = await loadSkillTool({ cwd, home });
    if (tool === undefined) throw new Error('no tool');
    const result = await executeTool(tool, { name: 'excel' });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(
      'there is no skill \\"excel\\"; the skills are: pdf-tools',
    );
  });

  it('goes through the loop and the permission rules by skill name', async () => {
    await skill(path.join(cwd, '.agent', 'skills'), 'pdf', pdf);
    await skill(
      path.join(cwd, '.agent', 'skills'),
      'deploy',
      '---\nname: deploy\ndescription: Deploys.\n---\nRun deploy.sh\n',
    );
    const { tool } = await loadSkillTool({ cwd, home });
    if (tool === undefined) throw new Error('no tool');
    const policy = new PermissionPolicy({
      mode: 'default',
      allow: ['skill(*)'],
      deny: ['skill(deploy)'],
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'skill', arguments: { name: 'pdf-tools' } },
          { name: 'skill', arguments: { name: 'deploy' } },
        ],
      },
      { text: 'ok' },
    ]);
    const result = await new Agent({
      provider,
      model: 'm',
      tools: [tool],
      permissionGate: policy.gate,
    }).run('go').result;
    const results = result.messages.filter((m) => m.role === 'toolResult');
    expect(JSON.stringify(results[0]?.content)).toContain('# PDF tools');
    expect(results[1]?.isError).toBe(true);
    expect(JSON.stringify(results[1]?.content)).toContain('Denied by rule \\"skill(deploy)\\"');
  });
});

describe('Skill (claw-code, Claude Code): {skill, args}', () => {
  it('runs claw-code’s examples: by name with args, and the $name and /name forms', async () => {
    const dir = await skill(
      path.join(cwd, '.agent', 'skills'),
      'help',
      '---\nname: help\ndescription: Guide on using the plugin.\n---\n# help\n\nGuide on using oh-my-codex plugin\n',
    );
    const { tool } = await loadSkillTool({ cwd, home });
    if (tool === undefined) throw new Error('no tool');
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'Skill', arguments: { skill: 'help', args: 'overview' } },
          { name: 'Skill', arguments: { skill: '$help' } },
          { name: 'Skill', arguments: { skill: '/help' } },
        ],
      },
      { text: 'ok' },
    ]);
    const result = await new Agent({ provider, model: 'm', tools: [tool] }).run('go').result;
    const results = result.messages.filter((m) => m.role === 'toolResult');
    expect(results.map((m) => [m.toolName, m.isError])).toEqual([
      ['skill', false],
      ['skill', false],
      ['skill', false],
    ]);
    const text = (index: number) =>
      (results[index]?.content ?? [])
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('');
    expect(text(0)).toContain(`its folder is ${dir}`);
    expect(text(0)).toContain('Guide on using oh-my-codex plugin');
    expect(text(0)).toMatch(/\nArguments: overview$/);
    expect(text(1)).toContain('Guide on using oh-my-codex plugin');
    expect(text(1)).not.toContain('Arguments:');
    expect(text(2)).toContain('Guide on using oh-my-codex plugin');
  });

  it('the $name and /name forms meet the same permission rules as the name', async () => {
    await skill(
      path.join(cwd, '.agent', 'skills'),
      'deploy',
      '---\nname: deploy\ndescription: Deploys.\n---\nRun deploy.sh\n',
    );
    const { tool } = await loadSkillTool({ cwd, home });
    if (tool === undefined) throw new Error('no tool');
    expect(await tool.permissionSubjects?.({ name: '$deploy' })).toEqual(['deploy']);
    const policy = new PermissionPolicy({
      mode: 'default',
      allow: ['skill(*)'],
      deny: ['skill(deploy)'],
    });
    const denied = await executeTool(tool, { skill: '/deploy' }, { permissionGate: policy.gate });
    expect(denied).toMatchObject({ isError: true, errorKind: 'denied' });
  });
});
