import {
  type AnyAgentTool,
  defineTool,
  oneLineText,
  renameArguments,
  ToolError,
} from '@agent/core';
import * as z from 'zod';
import {
  defaultSkillRoots,
  discoverSkills,
  parseSkillFile,
  readSkillFile,
  type Skill,
  type SkillDiscovery,
  skillFiles,
} from './skills.js';

/** Name of the tool. */
export const skillToolName = 'skill';

/** Characters of a skill's instructions one call returns; the rest is named, for read_file. */
export const maxInstructionChars = 50_000;

/** Options of {@link loadSkillTool}. */
export interface SkillToolOptions {
  /** The workspace: its `.agent/skills` and `.claude/skills` are searched first. */
  cwd: string;
  /** The user's home [os.homedir()]: `~/.agent/skills`, `~/.claude/skills`. */
  home?: string;
  /** Folders to search instead of the defaults, most specific first. */
  roots?: readonly string[];
  /** Skipped skills and shadowed names, one line each [ignored]. */
  onWarning?: (message: string) => void;
}

/** What {@link loadSkillTool} gives: the tool (undefined when no skill was found) and what was found. */
export interface LoadedSkillTool extends SkillDiscovery {
  tool: AnyAgentTool | undefined;
}

/**
 * Finds the skills and builds the `skill` tool over them: the tool's description lists each
 * skill's name and description; calling it with a name loads that skill's instructions (read
 * afresh from its `SKILL.md`) and lists its other files, whose scripts the model runs with the
 * bash tool — under the same sandbox and permission rules as any other command.
 */
export async function loadSkillTool(options: SkillToolOptions): Promise<LoadedSkillTool> {
  const roots = options.roots ?? defaultSkillRoots(options.cwd, options.home);
  const discovery = await discoverSkills(roots);
  for (const warning of discovery.warnings) options.onWarning?.(warning);
  return {
    ...discovery,
    tool: discovery.skills.length === 0 ? undefined : createSkillTool(discovery.skills),
  };
}

/** `$name` and `/name` (how claw-code and Claude Code users invoke a skill) name the skill `name`. */
function invokedName(name: string): string {
  return name.replace(/^[$/]/, '');
}

/** The `skill` tool over skills already found (see {@link discoverSkills}). */
export function createSkillTool(skills: readonly Skill[]): AnyAgentTool {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const listing = skills.map((skill) => `- ${skill.name}: ${skill.description}`).join('\n');
  return defineTool({
    name: skillToolName,
    description:
      'Loads a skill: instructions, scripts and resources for a kind of task. When a task matches ' +
      "a skill's description, call this first with its name and follow the instructions it " +
      'returns (run its scripts with bash, read its files with read_file).\n\nSkills:\n' +
      listing,
    // claw-code's and Claude Code's `Skill {skill, args}`; their invocation forms `$name` and
    // `/name` name the same skill.
    aliases: ['Skill'],
    prepareArguments: renameArguments({ skill: 'name' }),
    input: z.object({
      name: z.string().min(1).describe('The skill to load, one of the names listed above.'),
      args: z
        .string()
        .optional()
        .describe('What the skill should work on, when its instructions take arguments.'),
    }),
    policy: { permission: 'read-only', parallelSafePerTurn: true },
    permissionSubjects: ({ name }) => [byName.has(name) ? name : invokedName(name)],
    execute: async ({ name: asked, args }) => {
      const name = byName.has(asked) ? asked : invokedName(asked);
      const skill = byName.get(name);
      if (skill === undefined) {
        throw ToolError.invalidArguments(
          skillToolName,
          `there is no skill "${name}"; the skills are: ${[...byName.keys()].join(', ')}`,
        );
      }
      let text: string;
      try {
        text = await readSkillFile(skill.dir, skill.file);
      } catch (error) {
        throw new ToolError(
          `Skill "${name}" cannot be read any more (${(error as Error).message})`,
          { kind: 'failed', toolName: skillToolName },
        );
      }
      const parsed = parseSkillFile(text);
      if ('error' in parsed) {
        throw new ToolError(`Skill "${name}" is broken now: ${skill.file}: ${parsed.error}`, {
          kind: 'failed',
          toolName: skillToolName,
        });
      }
      const { files, more } = await skillFiles(skill.dir);
      // A SKILL.md may hold up to a megabyte (a quarter of a million tokens, in one result):
      // the instructions are cut, and the model reads the rest of the file when it needs it.
      let body = parsed.body.trim();
      if (body.length > maxInstructionChars)
        body = `${body.slice(0, maxInstructionChars)}\n\n[The instructions go on for ${body.length - maxInstructionChars} more characters: read the rest of ${skill.file} with read_file.]`;
      const lines = [
        `Skill "${name}" — its folder is ${skill.dir} (paths below are relative to it).`,
        '',
        body,
      ];
      if (files.length > 0) {
        // A file name is the folder's author's: one printable line each (a name can hold a line
        // break, and with it a line that passes for something else).
        lines.push(
          '',
          'Files of the skill:',
          ...files.map((file) => `- ${oneLineText(file, 300)}`),
        );
        if (more > 0) lines.push(`- … and ${more} more`);
      }
      if (args !== undefined && args.trim() !== '') lines.push('', `Arguments: ${args.trim()}`);
      return {
        content: [{ type: 'text', text: lines.join('\n') }],
        details: { name, dir: skill.dir, files },
      };
    },
  });
}
