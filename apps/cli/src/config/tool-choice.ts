/**
 * `--tools` and the `"tools"` setting: which tools a session offers — the built-in tools and
 * every other the CLI makes (web, REPLs, skills, code mode's run_script, the config tools, MCP
 * servers' and OpenAPI documents' tools). A list is names separated by commas (or a settings
 * array): `default` (what a session offers without the option), `kiro` (Kiro's opt-in tools —
 * think, report_issue, use_aws, knowledge — plus introspect and, when a language server is
 * installed, code), any tool's name, `mcp__<server>` / `mcp__<server>__<tool>` (an MCP server's
 * tools; `openapi__<name>[__<operation>]` likewise), a glob (`*` matches any run of characters),
 * and `-item` to remove. A list that starts with a removal changes the set before it (the
 * settings', else `default`); any other list starts from nothing, so `read_file,glob` is exactly
 * those two.
 */

import { type BuiltinToolName, defaultToolNames, kiroToolNames } from '@agent/tools-builtin';
import { closestWord } from './suggest.js';
import { wildcardPattern } from './wildcard.js';

/**
 * Tools the session makes besides `defaultTools`, by the names the model sees (the names of
 * @agent/tools-web, @agent/tools-repl, @agent/tools-skills and @agent/code-mode's tool as the
 * session makes them: written out so choosing does not load those packages; a test checks them).
 */
const sessionToolNames = [
  'introspect',
  'code',
  'web_fetch',
  'web_search',
  'js_repl',
  'python_repl',
  'skill',
  'run_script',
  'config',
  'config_set',
  'exit_plan_mode',
] as const;

/**
 * Tools whose names are known only once their server, document or definition is loaded: an MCP
 * server's, an OpenAPI document's, and the sub-agents of `.agent/agents/` and
 * `$AGENT_HOME/agents/` (`agent__<name>`, no tool part: a sub-agent is one tool).
 */
export type ToolFamily = 'mcp' | 'openapi' | 'agent';

const familyPrefixes: Record<ToolFamily, string> = {
  mcp: 'mcp__',
  openapi: 'openapi__',
  agent: 'agent__',
};

/** Every built-in tool `defaultTools` can make: today's set, then the opt-in ones. */
const builtinNames: readonly BuiltinToolName[] = [
  ...defaultToolNames,
  'text_editor',
  ...kiroToolNames.filter((name) => !defaultToolNames.includes(name)),
];

/** The named tools `default` stands for (besides every MCP and OpenAPI tool). */
const defaultNames: ReadonlySet<string> = new Set([
  ...defaultToolNames,
  ...sessionToolNames.filter((name) => name !== 'introspect' && name !== 'code'),
]);

const kiroNames: ReadonlySet<string> = new Set([...kiroToolNames, 'introspect', 'code']);

/** The tool names a list may hold, groups first (for error messages). */
export const toolChoiceNames: readonly string[] = [
  'default',
  'kiro',
  ...builtinNames,
  ...sessionToolNames,
];

/** A list to apply, and where it came from (for errors: `--tools`, a settings file and key). */
export interface ToolList {
  items: readonly string[];
  source: string;
}

/** Thrown for a name that is not a tool or group; `main` reports it as the caller's error kind. */
export class ToolListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolListError';
  }
}

const syntaxHelp =
  'mcp__<server> or mcp__<server>__<tool> for an MCP server\'s tools, openapi__<name>[__<operation>] for an OpenAPI document\'s, agent__<name> for a sub-agent; * matches any run of characters; "-name" removes';

/** An item's family and source (`mcp__github__*` → mcp, github), when it names one. */
function familyOf(
  item: string,
): { family: ToolFamily; source: string; tool: string | undefined } | undefined {
  for (const family of Object.keys(familyPrefixes) as ToolFamily[]) {
    const prefix = familyPrefixes[family];
    if (!item.startsWith(prefix)) continue;
    const body = item.slice(prefix.length);
    const split = body.indexOf('__');
    return split === -1
      ? { family, source: body, tool: undefined }
      : { family, source: body.slice(0, split), tool: body.slice(split + 2) };
  }
  return undefined;
}

/** The selection name of a family's tool: `mcp__github__create_issue`; a sub-agent's is `agent__<name>`. */
export function familyToolName(family: ToolFamily, source: string, tool: string): string {
  return family === 'agent'
    ? `${familyPrefixes.agent}${source}`
    : `${familyPrefixes[family]}${source}__${tool}`;
}

function globPattern(glob: string): { test(text: string): boolean } {
  return wildcardPattern(glob);
}

/** Whether `item` (without its `-`) stands for the tool called `name`. */
function itemMatches(item: string, name: string): boolean {
  if (item === 'default') return defaultNames.has(name) || familyOf(name) !== undefined;
  if (item === 'kiro') return kiroNames.has(name);
  const family = familyOf(item);
  // `mcp__github` is every tool of github (a sub-agent is one tool: `agent__reviewer` is itself).
  const glob =
    family !== undefined && family.family !== 'agent' && family.tool === undefined
      ? `${item}__*`
      : item;
  return glob.includes('*') ? globPattern(glob).test(name) : glob === name;
}

/** Splits `--tools a,b,-c` into items; each must be a known name (with or without `-`). */
export function parseToolList(text: string, source: string): ToolList {
  const items = text.split(',').map((item) => item.trim());
  checkToolItems(items, source);
  return { items, source };
}

/**
 * Throws {@link ToolListError} naming `source` and the valid names for an empty or unknown item,
 * or a glob that matches no tool. An MCP or OpenAPI name is checked for its form here, and
 * against the servers and documents once they are loaded (see {@link ToolChoice.unmatched}).
 */
export function checkToolItems(items: readonly string[], source: string): void {
  if (items.length === 0) throw new ToolListError(`${source} needs at least one tool name`);
  for (const item of items) {
    const name = item.startsWith('-') ? item.slice(1) : item;
    if (toolChoiceNames.includes(name)) continue;
    const family = familyOf(name);
    if (family !== undefined) {
      if (family.family === 'agent' && family.tool !== undefined)
        throw new ToolListError(
          `${source}: "${item}" is not a sub-agent's name: a sub-agent is one tool, agent__<name>`,
        );
      if (family.source === '' || family.tool === '' || /[\s()/,]/.test(name))
        throw new ToolListError(
          `${source}: "${item}" is not a tool name of the form ${familyPrefixes[family.family]}<name> or ${familyPrefixes[family.family]}<name>__<tool>`,
        );
      continue;
    }
    if (name.includes('*')) {
      const pattern = globPattern(name);
      if (toolChoiceNames.some((known) => pattern.test(known))) continue;
      throw new ToolListError(
        `${source}: "${item}" matches no tool (valid: ${toolChoiceNames.join(', ')}; ${syntaxHelp})`,
      );
    }
    throw new ToolListError(
      `${source}: unknown tool "${item}"${didYouMean(item)} (valid: ${toolChoiceNames.join(', ')}; ${syntaxHelp})`,
    );
  }
}

/** Whether a list only removes (a project file may hold only such lists: it may narrow, not widen). */
export function onlyRemoves(items: readonly string[]): boolean {
  return items.every((item) => item.startsWith('-'));
}

/** An item naming tools of a server or document that is not there (see {@link ToolChoice.unmatched}). */
export interface UnmatchedItem {
  item: string;
  /** `--tools`, or the settings file (and key) the list came from. */
  source: string;
  /** What is there instead, for the message. */
  known: readonly string[];
}

/** Which tools a session offers: the lists applied in order to `default`. */
export class ToolChoice {
  readonly lists: readonly ToolList[];

  constructor(lists: readonly ToolList[]) {
    this.lists = lists;
  }

  /** Whether the tool the model knows as `name` (an MCP tool: `mcp__server__tool`) is offered, as the lists say. */
  #chosen(name: string): boolean {
    let chosen = itemMatches('default', name);
    for (const { items } of this.lists) {
      if (!(items[0] ?? '').startsWith('-')) chosen = false;
      for (const item of items) {
        const remove = item.startsWith('-');
        if (itemMatches(remove ? item.slice(1) : item, name)) chosen = !remove;
      }
    }
    return chosen;
  }

  /** Whether the tool called `name` is offered (`use_aws` only with `bash`: its command runs as a bash call). */
  has(name: string): boolean {
    if (name === 'use_aws' && !this.#chosen('bash')) return false;
    return this.#chosen(name);
  }

  /** Whether a tool of `source` (an MCP server, an OpenAPI document) is offered. */
  hasFamilyTool(family: ToolFamily, source: string, tool: string): boolean {
    return this.#chosen(familyToolName(family, source, tool));
  }

  /**
   * Whether any tool of `source` may be offered: false when the lists leave out all of them (an
   * MCP server is then not started). Items naming some of its tools count as "may".
   */
  wantsAny(family: ToolFamily, source: string): boolean {
    const probe = familyToolName(family, source, '\u0000');
    let state: 'none' | 'some' | 'all' = 'all';
    for (const { items } of this.lists) {
      if (!(items[0] ?? '').startsWith('-')) state = 'none';
      for (const item of items) {
        const remove = item.startsWith('-');
        const name = remove ? item.slice(1) : item;
        // An item that matches the probe (a name no tool has) covers every tool of the source.
        if (itemMatches(name, probe)) state = remove ? 'none' : 'all';
        else if (touches(name, family, source)) {
          if (!remove && state === 'none') state = 'some';
          if (remove && state === 'all') state = 'some';
        }
      }
    }
    return state !== 'none';
  }

  /** The built-in tools to make, in `defaultTools`' order. */
  get builtin(): BuiltinToolName[] {
    return builtinNames.filter((name) => this.has(name));
  }

  /** Lines for the user about what the lists asked for and cannot have. */
  notices(): string[] {
    return this.#chosen('use_aws') && !this.#chosen('bash')
      ? [
          'tools: use_aws left out: it runs its aws command as a bash call, and the tools list leaves out bash',
        ]
      : [];
  }

  /** Tool names given one by one (not groups or globs) that are to be offered, for "not available here" notices. */
  namedTools(): string[] {
    const named = new Set<string>();
    for (const { items } of this.lists)
      for (const item of items)
        if (!item.startsWith('-') && !item.includes('*') && toolChoiceNames.includes(item))
          named.add(item);
    return [...named].filter((name) => name !== 'default' && name !== 'kiro' && this.has(name));
  }

  /**
   * The items naming a server or document `loaded` lacks, or a tool its server does not list:
   * `loaded` maps each source that was loaded to its tools (undefined: it did not load, so its
   * tools cannot be checked). Items that touch no loaded source are reported with the sources.
   */
  unmatched(
    family: ToolFamily,
    loaded: ReadonlyMap<string, readonly string[] | undefined>,
  ): UnmatchedItem[] {
    const found: UnmatchedItem[] = [];
    for (const { items, source } of this.lists)
      for (const item of items) {
        const name = item.startsWith('-') ? item.slice(1) : item;
        const named = familyOf(name);
        if (named?.family !== family) continue;
        const sources = [...loaded.keys()].filter((each) => touches(name, family, each));
        // A glob may match nothing here (it is meant for whatever is there).
        if (sources.length === 0) {
          if (!named.source.includes('*')) found.push({ item, source, known: [...loaded.keys()] });
          continue;
        }
        if (named.tool === undefined || named.tool.includes('*')) continue;
        const tools = sources.flatMap((each) =>
          (loaded.get(each) ?? []).map((tool) => familyToolName(family, each, tool)),
        );
        // A source that did not load: its tools are not known, so the item is not judged.
        if (sources.some((each) => loaded.get(each) === undefined)) continue;
        if (!tools.some((tool) => itemMatches(name, tool)))
          found.push({ item, source, known: tools });
      }
    return found;
  }
}

/** Whether the item names tools of `source` (its source part matches; a plain glob that could). */
function touches(item: string, family: ToolFamily, source: string): boolean {
  if (item === 'default') return true;
  const named = familyOf(item);
  if (named === undefined)
    return item.includes('*') && couldStartWith(item, `${familyPrefixes[family]}${source}__`);
  return named.family === family && globPattern(named.source).test(source);
}

/** Whether some name that starts with `prefix` matches `glob` (what follows its first `*` can be anything). */
function couldStartWith(glob: string, prefix: string): boolean {
  const star = glob.indexOf('*');
  if (star === -1) return glob.startsWith(prefix);
  const head = glob.slice(0, star);
  return head.length >= prefix.length ? head.startsWith(prefix) : prefix.startsWith(head);
}

/** Applies the lists in order to `default` (no lists: the session's usual tools). */
export function chooseTools(lists: readonly ToolList[]): ToolChoice {
  return new ToolChoice(lists);
}

/** `: did you mean read_file?` for a name a letter or two from a tool's, else nothing. */
function didYouMean(item: string): string {
  const meant = closestWord(item.replace(/^-/, ''), toolChoiceNames);
  return meant === undefined ? '' : `: did you mean ${item.startsWith('-') ? '-' : ''}${meant}?`;
}
