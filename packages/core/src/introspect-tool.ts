/**
 * `introspect`: answers the model's questions about the agent itself — which tools it has (names,
 * other names, permission tier, what each does), the current settings, and the host's own docs —
 * from what the host actually configured, never from memory. Kiro's `introspect { query?,
 * doc_path? }` is this tool's shape: `query` narrows the answer to the tools, settings and docs
 * whose words match; `doc_path` returns one doc whole.
 */
import * as z from 'zod';
import type { ConfigSetting } from './config-tools.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import type { AnyAgentTool } from './tool.js';

/** Options of {@link createIntrospectTool}. */
export interface IntrospectToolOptions {
  /** The agent's tools, read at each call (the tool itself may be among them). */
  tools: () => readonly AnyAgentTool[];
  /** The settings to report (`createConfigTools`' shape); their values are read at each call. */
  settings?: Readonly<Record<string, ConfigSetting>>;
  /** The host's docs by path (e.g. `features/hooks.md` → Markdown), for `doc_path` and search. */
  docs?: Readonly<Record<string, string>>;
  /** One paragraph about the agent (its name, version, what it is for), shown first. */
  about?: string;
  /** Wire name [introspect]. */
  name?: string;
}

/** Arguments of introspect. */
export interface IntrospectArgs {
  query?: string | undefined;
  doc_path?: string | undefined;
}

/** `details` of an introspect result: the doc returned, or the tools listed. */
export interface IntrospectDetails {
  docPath?: string;
  tools?: string[];
  /** False when nothing matched the query and everything was listed. */
  matched?: boolean;
}

/** Lower-case words of a text. */
function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** How many of the query's words `text` has (0: unrelated). */
function matches(query: Set<string>, text: string): number {
  const words = wordsOf(text);
  let count = 0;
  for (const word of query) if (words.has(word)) count++;
  return count;
}

const introspectInput = z.object({
  query: z.string().optional().describe('The question, or words to look for [everything].'),
  doc_path: z.string().optional().describe('One doc to return whole.'),
});

/** Common words that would match everything. */
const stopWords = new Set(
  'a an the is are be do does did can could i me you we how what which who when where why to of in on at for with by from my your our it this that these those there have has use used using about any some tool tools'.split(
    ' ',
  ),
);

/** The introspect tool; see the module comment. */
export function createIntrospectTool(options: IntrospectToolOptions): AnyAgentTool {
  const name = options.name ?? 'introspect';
  const docs = options.docs ?? {};
  const settings = options.settings ?? {};

  function toolLine(tool: AnyAgentTool): string {
    const aliases =
      tool.aliases === undefined || tool.aliases.length === 0
        ? ''
        : ` (also ${tool.aliases.join(', ')})`;
    const tier = tool.policy?.permission ?? 'full-access';
    return `- ${tool.name}${aliases} [${tier}]: ${tool.description.split('\n')[0]}`;
  }

  function settingLine(key: string, setting: ConfigSetting): string {
    const value = setting.get();
    return `- ${key} = ${JSON.stringify(value ?? null)}${setting.set === undefined ? '' : ' [changeable]'}: ${setting.description}`;
  }

  return defineTool<typeof introspectInput, IntrospectDetails>({
    name,
    label: 'About this agent',
    description:
      'Answers questions about this assistant itself: its tools (names, permission tiers, what each ' +
      'does), its current settings and its documentation. Use it only for questions about the ' +
      'assistant, not for the user’s code; answer from what it returns, and say when something is ' +
      `not documented.${Object.keys(docs).length === 0 ? '' : ` Docs (doc_path): ${Object.keys(docs).join(', ')}.`}`,
    input: introspectInput,
    policy: { permission: 'read-only', parallelSafePerTurn: true },
    execute: async ({ query, doc_path: docPath }) => {
      if (docPath !== undefined) {
        const doc = docs[docPath];
        if (doc === undefined)
          throw ToolError.invalidArguments(
            name,
            `there is no doc "${docPath}"; the docs are: ${Object.keys(docs).join(', ') || 'none'}`,
          );
        return { content: [{ type: 'text', text: doc }], details: { docPath } };
      }
      const words = new Set([...wordsOf(query ?? '')].filter((word) => !stopWords.has(word)));
      const tools = [...options.tools()].sort((a, b) => a.name.localeCompare(b.name));
      const score = (text: string) => (words.size === 0 ? 1 : matches(words, text));
      const toolScore = (tool: AnyAgentTool) =>
        score(
          [
            tool.name.replaceAll('_', ' '),
            tool.name,
            ...(tool.aliases ?? []),
            tool.description,
            ...(tool.keywords ?? []),
          ].join(' '),
        );
      const foundTools = tools
        .filter((tool) => toolScore(tool) > 0)
        .sort((a, b) => toolScore(b) - toolScore(a));
      const foundSettings = Object.entries(settings).filter(
        ([key, setting]) => score(`${key.replaceAll('.', ' ')} ${setting.description}`) > 0,
      );
      const foundDocs = Object.entries(docs).filter(
        ([docKey, text]) => score(`${docKey} ${text}`) > 0,
      );
      const nothing =
        words.size > 0 && foundTools.length + foundSettings.length + foundDocs.length === 0;
      const shownTools = nothing ? tools : foundTools;
      const sections = [
        options.about,
        nothing ? `Nothing about "${query}" is documented here; everything that is:` : undefined,
        shownTools.length === 0
          ? undefined
          : `Tools (${shownTools.length} of ${tools.length}):\n${shownTools.map(toolLine).join('\n')}`,
        (nothing ? Object.entries(settings) : foundSettings).length === 0
          ? undefined
          : `Settings:\n${(nothing ? Object.entries(settings) : foundSettings).map(([key, setting]) => settingLine(key, setting)).join('\n')}`,
        (nothing ? Object.keys(docs) : foundDocs.map(([docKey]) => docKey)).length === 0
          ? undefined
          : `Docs (read one with doc_path): ${(nothing ? Object.keys(docs) : foundDocs.map(([docKey]) => docKey)).join(', ')}`,
      ].filter((section): section is string => section !== undefined && section !== '');
      return {
        content: [{ type: 'text', text: sections.join('\n\n') }],
        details: { tools: shownTools.map((tool) => tool.name), matched: !nothing },
      };
    },
  });
}
