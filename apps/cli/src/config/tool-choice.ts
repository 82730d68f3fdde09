/**
 * `--tools` and the `"tools"` setting: which built-in tools a session gets. A list is names
 * separated by commas (or a settings array): `default` (the set a session has without the
 * option), `kiro` (Kiro's opt-in tools — think, report_issue, use_aws, knowledge — plus
 * introspect and, when a language server is installed, code), any built-in tool's name, and
 * `-name` to remove one (groups too: `-kiro`). A list that starts with a removal changes the set
 * before it (the settings', else `default`); any other list starts from nothing, so
 * `read_file,glob` is exactly those two.
 */
import { type BuiltinToolName, defaultToolNames, kiroToolNames } from '@agent/tools-builtin';

/** Tools made by the CLI itself rather than `defaultTools`. */
type SessionToolName = 'introspect' | 'code';

/** A name `--tools` accepts (without the `-` of a removal). */
export type ToolChoiceName = BuiltinToolName | SessionToolName | 'default' | 'kiro';

/** Every built-in tool `defaultTools` can make: today's set, then the opt-in ones. */
const builtinNames: readonly BuiltinToolName[] = [
  ...defaultToolNames,
  'text_editor',
  ...kiroToolNames.filter((name) => !defaultToolNames.includes(name)),
];

const groups: Record<'default' | 'kiro', readonly (BuiltinToolName | SessionToolName)[]> = {
  default: defaultToolNames,
  kiro: [...kiroToolNames, 'introspect', 'code'],
};

/** The names a list may hold, groups first (for error messages). */
export const toolChoiceNames: readonly ToolChoiceName[] = [
  'default',
  'kiro',
  ...builtinNames,
  'introspect',
  'code',
];

/** Which tools a session makes. */
export interface ToolChoice {
  /** Passed to `defaultTools({ tools })`, in its own order. */
  builtin: BuiltinToolName[];
  /** Core's introspect tool over the session's tools. */
  introspect: boolean;
  /** Kiro's `code` over the LSP tools (only when they are on). */
  code: boolean;
}

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

function isChoiceName(name: string): name is ToolChoiceName {
  return (toolChoiceNames as readonly string[]).includes(name);
}

/** The names one item stands for. */
function expand(name: ToolChoiceName): readonly (BuiltinToolName | SessionToolName)[] {
  return name === 'default' || name === 'kiro' ? groups[name] : [name];
}

/** Splits `--tools a,b,-c` into items; each must be a known name (with or without `-`). */
export function parseToolList(text: string, source: string): ToolList {
  const items = text.split(',').map((item) => item.trim());
  checkToolItems(items, source);
  return { items, source };
}

/** Throws {@link ToolListError} naming `source` and the valid names for an empty or unknown item. */
export function checkToolItems(items: readonly string[], source: string): void {
  if (items.length === 0) throw new ToolListError(`${source} needs at least one tool name`);
  for (const item of items) {
    const name = item.startsWith('-') ? item.slice(1) : item;
    if (!isChoiceName(name))
      throw new ToolListError(
        `${source}: unknown tool "${item}" (valid: ${toolChoiceNames.join(', ')}; "-name" removes one)`,
      );
  }
}

/** Whether a list only removes (a project file may hold only such lists: it may narrow, not widen). */
export function onlyRemoves(items: readonly string[]): boolean {
  return items.every((item) => item.startsWith('-'));
}

/** Applies the lists in order to `default` (no lists: the session's usual tools). */
export function chooseTools(lists: readonly ToolList[]): ToolChoice {
  let chosen = new Set<string>(defaultToolNames);
  for (const { items } of lists) {
    if (!(items[0] ?? '').startsWith('-')) chosen = new Set();
    for (const item of items) {
      const remove = item.startsWith('-');
      const name = remove ? item.slice(1) : item;
      if (!isChoiceName(name)) continue;
      for (const tool of expand(name)) {
        if (remove) chosen.delete(tool);
        else chosen.add(tool);
      }
    }
  }
  return {
    builtin: builtinNames.filter((name) => chosen.has(name)),
    introspect: chosen.has('introspect'),
    code: chosen.has('code'),
  };
}
