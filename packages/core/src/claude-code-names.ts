import { AgentError } from './errors.js';
import type { AnyAgentTool } from './tool.js';

/**
 * Claude Code's tool names and rule forms, read as ours: a user's `Bash(npm run test:*)`,
 * `Read(./.env)`, `WebFetch(domain:example.com)` or `mcp__github__create_issue` means what it
 * means there, and a hook matcher `Bash` or `Edit|Write` selects our `bash`, `edit_file` and
 * `write_file`. A Claude Code name with nothing to map to here is refused, never accepted and
 * left to match nothing.
 */

/** How the specifier of `Tool(specifier)` is read for one of Claude Code's tools. */
type SpecifierKind =
  /** A command line: `*` globs and the `prefix:*` form. */
  | 'command'
  /** A gitignore-style path: `//abs`, `~/home`, `/settings-relative`, `./relative`, `**`. */
  | 'path'
  /** `domain:host`. */
  | 'domain'
  /** A name among the tool's subjects (a skill). */
  | 'subject'
  /** A sub-agent's name: a tool of the `subagent` source. */
  | 'agent'
  /** No specifier. */
  | 'none';

interface Counterpart {
  /** Our tool pattern: a tool name or `@source`. */
  pattern: string;
  specifier: SpecifierKind;
}

/** Claude Code's tools that have a counterpart here (see the README's table). */
const counterparts: Readonly<Record<string, Counterpart>> = {
  Bash: { pattern: 'bash', specifier: 'command' },
  Read: { pattern: 'read_file', specifier: 'path' },
  NotebookRead: { pattern: 'read_file', specifier: 'path' },
  Edit: { pattern: 'edit_file', specifier: 'path' },
  MultiEdit: { pattern: 'edit_file', specifier: 'path' },
  Write: { pattern: 'write_file', specifier: 'path' },
  NotebookEdit: { pattern: 'notebook_edit', specifier: 'path' },
  Grep: { pattern: 'search', specifier: 'path' },
  Glob: { pattern: 'glob', specifier: 'path' },
  LS: { pattern: 'list_files', specifier: 'path' },
  WebFetch: { pattern: 'web_fetch', specifier: 'domain' },
  WebSearch: { pattern: 'web_search', specifier: 'none' },
  TodoWrite: { pattern: 'todo_write', specifier: 'none' },
  BashOutput: { pattern: 'bash_output', specifier: 'none' },
  KillShell: { pattern: 'bash_output', specifier: 'none' },
  KillBash: { pattern: 'bash_output', specifier: 'none' },
  Task: { pattern: '@subagent', specifier: 'agent' },
  Agent: { pattern: '@subagent', specifier: 'agent' },
  Skill: { pattern: 'skill', specifier: 'subject' },
  ExitPlanMode: { pattern: 'exit_plan_mode', specifier: 'none' },
};

/** Claude Code's tools with nothing to map to here: a rule or hook naming one is refused. */
export const claudeCodeToolsWithoutCounterpart: readonly string[] = [
  'EnterPlanMode',
  'SlashCommand',
  'AskUserQuestion',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'LSP',
];

/** Claude Code's tool names that mean one of ours (`Bash`, `Read`, `Edit`…). */
export const claudeCodeToolsWithCounterpart: readonly string[] = Object.keys(counterparts);

/** Options for reading Claude Code's rules. */
export interface ClaudeCodeRuleOptions {
  /** Expands `~/` in path rules (`Read(~/.ssh/**)`); without it such a rule can never match. */
  homeDirectory?: string;
}

type RuleKind = 'allow' | 'ask' | 'deny';

/** A Claude Code rule this agent cannot honour: an error naming the rule and why. */
class Refusal extends Error {}

const refuse = (_rule: string, why: string): never => {
  throw new Refusal(why);
};

/**
 * Our rules for one rule written the way Claude Code writes them, or undefined when it is not
 * (our own syntax; `bash(cmd:*)` is still read as the prefix form). One of theirs may become
 * several of ours (a path with `**`, a domain over http and https). Where their meaning and ours
 * differ, an allow rule takes the narrower reading and a deny or ask rule the wider one:
 * `Bash(rm:*)` allows `rm` and `rm …` but denies `rmdir` too; `Read(/x)` (relative to the
 * settings file in Claude Code) allows `<workspace>/x` but denies both that and `/x`.
 * Throws an `AgentError` for a Claude Code name or form with no counterpart here.
 */
export function claudeCodeRule(
  rule: string,
  kind: RuleKind,
  options: ClaudeCodeRuleOptions = {},
): string[] | undefined {
  try {
    return translate(rule, kind, options);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    throw new AgentError(`Invalid permission rule "${rule}" in ${kind}: ${error.message}`);
  }
}

function translate(
  rule: string,
  kind: RuleKind,
  options: ClaudeCodeRuleOptions,
): string[] | undefined {
  if (typeof rule !== 'string') return undefined;
  const text = rule.trim();
  const open = text.indexOf('(');
  const name = open === -1 ? text : text.slice(0, open);
  const specifier = open !== -1 && text.endsWith(')') ? text.slice(open + 1, -1) : undefined;
  if (open !== -1 && specifier === undefined) return undefined;
  if (name.startsWith('mcp__')) return mcpRule(text, name, specifier);
  if (claudeCodeToolsWithoutCounterpart.includes(name)) {
    return refuse(text, `Claude Code's ${name} has no counterpart among this agent's tools`);
  }
  if (name === 'bash' && specifier?.endsWith(':*') === true) {
    return [`bash(${commandPrefix(specifier.slice(0, -2), kind)})`];
  }
  const counterpart = Object.hasOwn(counterparts, name) ? counterparts[name] : undefined;
  if (counterpart === undefined) return undefined;
  const { pattern } = counterpart;
  // `Read` alone is every read: as in Claude Code, it covers every tool that reads (Grep, Glob,
  // LS…), which a path rule on any path (`read_file(*)`) does here; `Edit` alone every writer.
  if (specifier === undefined || specifier === '*')
    return [counterpart.specifier === 'path' ? `${pattern}(*)` : pattern];
  switch (counterpart.specifier) {
    case 'command':
      return [
        `${pattern}(${specifier.endsWith(':*') ? commandPrefix(specifier.slice(0, -2), kind) : specifier})`,
      ];
    case 'path':
      return pathPatterns(text, specifier, kind, options).map((path) => `${pattern}(${path})`);
    case 'domain':
      return domainPatterns(text, specifier, kind).map((url) => `${pattern}(${url})`);
    case 'subject':
      return [`${pattern}(${specifier})`];
    case 'agent':
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(specifier))
        return refuse(text, `"${specifier}" is not a sub-agent name`);
      return [`${pattern}/${specifier}`];
    case 'none':
      return refuse(text, `${name} takes no specifier here; write "${name}" alone`);
    default: {
      const exhaustive: never = counterpart.specifier;
      return exhaustive;
    }
  }
}

/** `npm run test:*`: allow reads it on a word boundary (`npm run test …`), deny and ask as a plain prefix. */
function commandPrefix(prefix: string, kind: RuleKind): string {
  const trimmed = prefix.trimEnd();
  return kind === 'allow' ? `${trimmed} *` : `${trimmed}*`;
}

/** `mcp__server`, `mcp__server__*`, `mcp__server__tool`, `mcp__server__prefix*`. */
function mcpRule(rule: string, name: string, specifier: string | undefined): string[] {
  if (specifier !== undefined) {
    return refuse(rule, 'an MCP tool takes no specifier: write mcp__server or mcp__server__tool');
  }
  const body = name.slice('mcp__'.length);
  const split = body.indexOf('__');
  const server = split === -1 ? body : body.slice(0, split);
  const tool = split === -1 ? '' : body.slice(split + 2);
  if (server === '' || /[\s/()@]/.test(server)) {
    return refuse(rule, 'expected mcp__<server> or mcp__<server>__<tool>');
  }
  if (tool === '' || tool === '*') return [`@mcp:${server}`];
  // Matched against the subject `server/tool` (the MCP tool's own name), whatever its wire name.
  return [`@mcp:${server}(${server}/${tool})`];
}

/**
 * A gitignore-style path of a Claude Code rule as our path patterns: `//abs` → `/abs`, `~/x` →
 * the home directory, `/x` → relative to the settings (the workspace; deny and ask also `/x`),
 * `x`/`./x` → relative to the workspace; `**` → `*` (ours matches across `/`), a trailing `/` →
 * the directory and what it holds.
 */
function pathPatterns(
  rule: string,
  path: string,
  kind: RuleKind,
  options: ClaudeCodeRuleOptions,
): string[] {
  let anchored: string[];
  if (path.startsWith('//')) anchored = [path.slice(1)];
  else if (path === '~' || path.startsWith('~/')) {
    anchored = [
      options.homeDirectory === undefined ? path : `${options.homeDirectory}${path.slice(1)}`,
    ];
  } else if (path.startsWith('/')) {
    const relative = `.${path}`;
    anchored = kind === 'allow' ? [relative] : [relative, path];
  } else anchored = [path];
  const patterns = anchored
    .flatMap((pattern) => directoryForms(pattern))
    .flatMap((pattern) => starForms(pattern, kind));
  if (patterns.length === 0) refuse(rule, 'an empty path');
  return [...new Set(patterns)];
}

/** `src/` (a directory in gitignore terms) is the directory and everything in it. */
function directoryForms(pattern: string): string[] {
  if (pattern.length > 1 && pattern.endsWith('/')) {
    const directory = pattern.replace(/(?<!\/)\/+$/, '');
    return [directory, `${directory}/**`];
  }
  return [pattern];
}

/**
 * `**` in our glob: `*` already crosses `/`. `a/**\/b` must also match `a/b`: an allow rule gets
 * both forms (`**\/` as nothing, and as `*\/`), at most three of them (else `*\/`, the narrower);
 * a deny or ask rule gets `**\/` as `*`, which covers both and more.
 */
function starForms(pattern: string, kind: RuleKind): string[] {
  const collapse = (text: string) => text.replace(/\*{2,}/g, '*');
  if (!pattern.includes('**/')) return [collapse(pattern)];
  if (kind !== 'allow') return [collapse(pattern.replaceAll('**/', '*'))];
  const parts = pattern.split('**/');
  if (parts.length - 1 > 3) return [collapse(parts.join('*/'))];
  let forms = [parts[0] ?? ''];
  for (const part of parts.slice(1)) {
    forms = forms.flatMap((form) => [`${form}${part}`, `${form}*/${part}`]);
  }
  return forms.map(collapse);
}

/** `domain:host` as web_fetch subjects (`origin` + `pathname`). */
function domainPatterns(rule: string, specifier: string, kind: RuleKind): string[] {
  if (!specifier.startsWith('domain:')) {
    return refuse(rule, 'WebFetch takes domain:<host> here');
  }
  const host = specifier.slice('domain:'.length).trim().toLowerCase();
  if (!/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(host)) {
    return refuse(rule, `"${host}" is not a host name`);
  }
  if (host.startsWith('*.')) {
    // Our `*` would also match a path (`https://evil.example/x.example.com/`): safe to deny, not to allow.
    if (kind === 'allow') {
      return refuse(rule, 'a wildcard domain cannot be allowed exactly; list the hosts');
    }
    return [`http*://${host}/*`, `http*://${host}:*`];
  }
  return kind === 'allow'
    ? [`https://${host}/*`, `http://${host}/*`]
    : [`http*://${host}/*`, `http*://${host}:*`];
}

/**
 * The names Claude Code gives one of our tools, for hook matchers written for it: `Bash` for bash,
 * `Edit` and `MultiEdit` for edit_file, `mcp__server__tool` for an MCP tool (`source`
 * `mcp:server`), `Task` and `Agent` for a sub-agent.
 */
export function claudeCodeNamesOf(tool: Pick<AnyAgentTool, 'name' | 'source'>): string[] {
  const names = Object.entries(counterparts).flatMap(([theirs, { pattern }]) =>
    pattern === tool.name || (pattern.startsWith('@') && tool.source === pattern.slice(1))
      ? [theirs]
      : [],
  );
  const server = tool.source?.startsWith('mcp:') === true ? tool.source.slice(4) : undefined;
  if (server !== undefined) {
    const prefix = `${server.replace(/[^a-zA-Z0-9_-]/g, '_')}__`;
    // Wire names are `server__tool` unless the server's tools keep their own names.
    names.push(`mcp__${tool.name.startsWith(prefix) ? tool.name : `${prefix}${tool.name}`}`);
  }
  return names;
}
