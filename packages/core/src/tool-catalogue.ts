/**
 * Deferred tools: which of the registry's tools the model sees, and the `tool_search` tool that
 * loads the others. Loaded tools are appended after the tools the model already saw, never
 * reordered (so a provider's prompt cache stays valid); the loaded set is rebuilt from the
 * conversation itself (tool_search results, direct calls), so a resumed session sees what it saw.
 */
import type { Message, ToolCallContent, ToolResultMessage } from './messages.js';
import { composePrepareArguments, renameArguments } from './prepare-arguments.js';
import { oneLineText } from './terminal-safe.js';
import type { AnyAgentTool, ToolDefinition } from './tool.js';
import { toToolDefinition } from './tool.js';
import { matchesToolPattern, type ToolRegistry } from './tool-registry.js';
import type { ToolSearchAssociations } from './tool-search-associations.js';
import {
  type ToolSearchEmbeddings,
  ToolSearchIndex,
  type ToolSearchMatch,
  toolSummary,
} from './tool-search-index.js';

/** `AgentOptions.toolSearch`: deferred tools and the search that loads them. */
export interface ToolSearchOptions {
  /** Availability patterns of tools to defer (`@openapi:github`, `jira_*`), besides tools marked `defer: true`. */
  defer?: readonly string[];
  /**
   * Defer automatically when the loaded tools' definitions exceed `maxTools` tools [100] or
   * `maxTokens` estimated tokens [20,000]: first every tool from a source other than `builtin`,
   * then, if still over, every tool not marked `defer: false`. `false`: never automatically.
   */
  auto?: false | { maxTools?: number; maxTokens?: number };
  /** Matches a search returns (and loads) at most [5]; the model may ask for up to 20. */
  maxResults?: number;
  /**
   * Deferred tools a session loads at most [100]: each loaded definition is sent with every
   * later request, so a model that searched (or `select:`ed) its way through a catalogue of
   * thousands would carry all of them. Past it a search names its matches without loading them.
   */
  maxLoaded?: number;
  /** The search tool's name [tool_search]. */
  name?: string;
  /**
   * Let a provider that offers it load deferred tools natively (`Provider.defersTools`: Anthropic
   * `defer_loading` + `tool_reference`, OpenAI Responses client `tool_search`), with this
   * search choosing what loads either way [true]. `false`: the tool list itself grows instead.
   */
  native?: boolean;
  /**
   * Learned word associations, so a request in the user's words also finds tools described in
   * the API's (`toolSearchAssociations()` of `@agent/tool-search-data`) [none].
   */
  associations?: ToolSearchAssociations;
  /**
   * Text embeddings that re-rank the best keyword matches by meaning
   * (`toolSearchEmbeddings()` of `@agent/tool-search-data`) [none].
   */
  embeddings?: ToolSearchEmbeddings;
  /**
   * Loads the associations and embeddings when the first keyword search needs them — e.g. a dynamic
   * `import('@agent/tool-search-data')`, so that a session which never searches never loads them
   * (~0.2 s and ~17 MB). Used for whichever of `associations`/`embeddings` is not given; called at
   * most once. If it rejects, the search goes on without them and `onLoadError` hears why.
   */
  loadData?: () => Promise<ToolSearchData>;
  /** Told why `loadData` failed (the search then works from its keywords alone). */
  onLoadError?: (error: unknown) => void;
}

/** What `ToolSearchOptions.loadData` resolves to. */
export interface ToolSearchData {
  associations?: ToolSearchAssociations;
  embeddings?: ToolSearchEmbeddings;
}

/** Where the model looks tools up: the registry's tools plus the search tool. */
export interface ToolLookup {
  get(nameOrAlias: string): AnyAgentTool | undefined;
  /** The names the model can call now (for "tool not found" hints). */
  names(): string[];
}

/** What `tool_search` returns in `details` (kept in history; the loaded set is rebuilt from it). */
export interface ToolSearchDetails {
  loaded: string[];
  matches: ToolSearchMatch[];
  /**
   * The next best matches, named to the model but not loaded (it may load one with
   * `select:name`): the search ranks by words, the model reads meaning.
   */
  others?: ToolSearchMatch[];
}

/** Matches past the loaded ones that a search names to the model (not loaded). */
const otherMatchCount = 10;

/** A summary cut to about 80 characters, between words: the other matches are a list to glance at. */
function clipSummary(summary: string): string {
  if (summary.length <= 80) return summary;
  const cut = summary.lastIndexOf(' ', 80);
  return `${summary.slice(0, cut > 40 ? cut : 80)}…`;
}

const defaultMaxTools = 100;
const defaultMaxLoaded = 100;
/** Tools one `select:` loads at most (as many as a search may ask for). */
const maxSelected = 20;
/** Characters of the query repeated in a "no match" answer. */
const echoedQueryChars = 200;
const defaultMaxTokens = 20_000;

/** Estimated tokens of a definition: ~4 characters of JSON per token. */
export function estimateDefinitionTokens(definition: ToolDefinition): number {
  return Math.ceil(JSON.stringify(definition).length / 4);
}

/** Marks tools deferred (copies; the originals are untouched): for a whole source at once. */
export function deferTools(tools: readonly AnyAgentTool[]): AnyAgentTool[] {
  return tools.map((tool) => ({ ...tool, defer: true }));
}

/**
 * Kiro's `tool_search {tool_id}` (`server::tool`, its MCP naming) loads that one tool: the same as
 * our `select:server__tool`. A call that also has a query keeps the query.
 */
function kiroToolId(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const { tool_id: toolId, ...rest } = raw as Record<string, unknown>;
  if (typeof toolId !== 'string' || 'query' in rest) return raw;
  return { ...rest, query: `select:${toolId.replace('::', '__')}` };
}

/** The names of a `select:A,B` query (Claude Code's form), or `undefined` for a search. */
function selectQuery(query: string): string[] | undefined {
  const match = /^\s*select:(.*)$/is.exec(query);
  if (match === null) return undefined;
  return (match[1] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

export class ToolCatalogue {
  readonly #registry: ToolRegistry;
  readonly #options: ToolSearchOptions;
  readonly #name: string;
  #version = -1;
  #deferred = new Set<string>();
  #automatic = false;
  #index: ToolSearchIndex | undefined;
  #data: Promise<ToolSearchData> | undefined;
  /** Loaded deferred tools, canonical names in load order. */
  readonly #loaded: string[] = [];
  readonly #loadedSet = new Set<string>();
  readonly #searchTool: AnyAgentTool;
  readonly lookup: ToolLookup;

  constructor(registry: ToolRegistry, options: ToolSearchOptions = {}) {
    this.#registry = registry;
    this.#options = options;
    this.#name = options.name ?? 'tool_search';
    this.#searchTool = this.#createSearchTool();
    this.lookup = {
      get: (name) => {
        this.#refresh();
        // While tools are deferred the search tool's names are its own: a source's tool named
        // `tool_search` (an operationId, an MCP tool without prefix) would take the searches.
        if (this.#deferred.size > 0 && this.#isSearchName(name)) return this.#searchTool;
        return registry.get(name);
      },
      names: () => this.visibleTools().map((tool) => tool.name),
    };
  }

  /** Names of the deferred tools not loaded yet. */
  get pending(): string[] {
    this.#refresh();
    return [...this.#deferred].filter((name) => !this.#loadedSet.has(name));
  }

  /** Names of the deferred tools loaded so far, in load order. */
  get loaded(): readonly string[] {
    return this.#loaded;
  }

  /** Whether deferral was switched on by the automatic budget (not only by marks or patterns). */
  get automatic(): boolean {
    this.#refresh();
    return this.#automatic;
  }

  /** The tools the model sees, in a stable order: loaded ones, the search tool, then found ones. */
  visibleTools(): AnyAgentTool[] {
    this.#refresh();
    if (this.#deferred.size === 0) return this.#registry.list();
    const visible = this.#registry
      .list()
      .filter((tool) => !this.#deferred.has(tool.name) && !this.#takesSearchName(tool));
    visible.push(this.#searchTool);
    for (const name of this.#loaded) {
      const tool = this.#registry.get(name);
      if (tool !== undefined && this.#deferred.has(tool.name)) visible.push(tool);
    }
    return visible;
  }

  /** The search tool's name. */
  get searchToolName(): string {
    return this.#name;
  }

  /**
   * For a provider that loads deferred tools natively: the tools the model sees at once (those
   * not deferred, then the search tool) and every deferred tool in registry order, loaded or
   * not. `undefined` when nothing is deferred.
   */
  nativeView(): { eager: AnyAgentTool[]; deferred: AnyAgentTool[] } | undefined {
    this.#refresh();
    if (this.#deferred.size === 0) return undefined;
    const eager: AnyAgentTool[] = [];
    const deferred: AnyAgentTool[] = [];
    for (const tool of this.#registry.list())
      if (!this.#takesSearchName(tool))
        (this.#deferred.has(tool.name) ? deferred : eager).push(tool);
    eager.push(this.#searchTool);
    return { eager, deferred };
  }

  /**
   * Marks tools loaded (by canonical name or alias); returns those newly loaded. A deferred tool
   * past `maxLoaded` is not loaded (it still runs when called by its exact name).
   */
  load(names: Iterable<string>): string[] {
    this.#refresh();
    const added: string[] = [];
    const maxLoaded = this.#options.maxLoaded ?? defaultMaxLoaded;
    let loadedDeferred = this.#loaded.filter((name) => this.#deferred.has(name)).length;
    for (const name of names) {
      const tool = this.#registry.get(name);
      if (tool === undefined || this.#loadedSet.has(tool.name)) continue;
      if (this.#deferred.has(tool.name)) {
        if (loadedDeferred >= maxLoaded) continue;
        loadedDeferred++;
      }
      this.#loadedSet.add(tool.name);
      this.#loaded.push(tool.name);
      if (this.#deferred.has(tool.name)) added.push(tool.name);
    }
    return added;
  }

  /**
   * Learns from a turn what the model loaded: tool_search results and direct calls of deferred
   * tools (a model may call one it knows by name; it is then loaded too).
   */
  observe(calls: readonly ToolCallContent[], results: readonly ToolResultMessage[]): void {
    this.#refresh();
    if (this.#deferred.size === 0 && this.#loaded.length === 0) return;
    for (const call of calls) {
      const tool = this.#registry.get(call.name);
      if (tool !== undefined && this.#deferred.has(tool.name)) this.load([tool.name]);
    }
    for (const result of results) {
      if (result.toolName !== this.#name) continue;
      const loaded = (result.details as Partial<ToolSearchDetails> | undefined)?.loaded;
      if (Array.isArray(loaded)) this.load(loaded.filter((name) => typeof name === 'string'));
    }
  }

  /** Rebuilds the loaded set from a conversation (a resumed session). */
  restore(messages: readonly Message[]): void {
    for (const message of messages) {
      if (message.role === 'assistant') {
        const calls = message.content.filter(
          (block): block is ToolCallContent => block.type === 'toolCall',
        );
        this.observe(calls, []);
      } else if (message.role === 'toolResult') {
        this.observe([], [message]);
      }
    }
  }

  #refresh(): void {
    if (this.#version === this.#registry.version) return;
    this.#version = this.#registry.version;
    this.#index = undefined;
    const tools = this.#registry.list();
    const patterns = this.#options.defer ?? [];
    const deferred = new Set<string>();
    for (const tool of tools) {
      if (tool.defer === false) continue;
      if (tool.defer === true || patterns.some((pattern) => matchesToolPattern(tool, pattern)))
        deferred.add(tool.name);
    }
    this.#automatic = false;
    const auto = this.#options.auto;
    if (auto !== false) {
      const maxTools = auto?.maxTools ?? defaultMaxTools;
      const maxTokens = auto?.maxTokens ?? defaultMaxTokens;
      const over = (): boolean => {
        const loaded = tools.filter((tool) => !deferred.has(tool.name));
        if (loaded.length > maxTools) return true;
        let tokens = 0;
        for (const tool of loaded) tokens += estimateDefinitionTokens(toToolDefinition(tool));
        return tokens > maxTokens;
      };
      if (over()) {
        this.#automatic = true;
        for (const tool of tools) {
          if (tool.defer !== false && tool.source !== undefined && tool.source !== 'builtin')
            deferred.add(tool.name);
        }
        if (over()) for (const tool of tools) if (tool.defer !== false) deferred.add(tool.name);
      }
    }
    // A source's tool under the search tool's names is never offered (see `lookup`), so it is
    // not deferred either: found and loaded, it would be sent beside the search tool's name.
    for (const tool of tools) if (this.#takesSearchName(tool)) deferred.delete(tool.name);
    this.#deferred = deferred;
  }

  /** Whether `name` is the search tool's name or one of its aliases. */
  #isSearchName(name: string): boolean {
    return name === this.#name || (this.#searchTool.aliases?.includes(name) ?? false);
  }

  /** Whether a registered tool is named (or aliased) like the search tool. */
  #takesSearchName(tool: AnyAgentTool): boolean {
    return (
      tool !== this.#searchTool &&
      [tool.name, ...(tool.aliases ?? [])].some((name) => this.#isSearchName(name))
    );
  }

  async #search(
    query: string,
    mode: 'keywords' | 'regex',
    limit: number,
  ): Promise<ToolSearchMatch[]> {
    this.#refresh();
    const selected = selectQuery(query);
    if (selected !== undefined) return this.#select(selected);
    const { associations, embeddings } = { ...(await this.#loadData()), ...this.#definedData() };
    this.#index ??= new ToolSearchIndex(
      this.#registry.list().filter((tool) => this.#deferred.has(tool.name)),
      {
        ...(associations === undefined ? {} : { associations }),
        ...(embeddings === undefined ? {} : { embeddings }),
      },
    );
    return mode === 'regex'
      ? this.#index.searchRegex(query, limit)
      : this.#index.search(query, limit);
  }

  /** The data given in the options (their `undefined`s left out so they do not hide loaded data). */
  #definedData(): ToolSearchData {
    const { associations, embeddings } = this.#options;
    return {
      ...(associations === undefined ? {} : { associations }),
      ...(embeddings === undefined ? {} : { embeddings }),
    };
  }

  /** `loadData`'s result, asked for once (a rejection is reported and taken as no data). */
  #loadData(): Promise<ToolSearchData> {
    const { loadData, onLoadError, associations, embeddings } = this.#options;
    if (loadData === undefined || (associations !== undefined && embeddings !== undefined))
      return Promise.resolve({});
    this.#data ??= loadData().catch((error: unknown) => {
      onLoadError?.(error);
      return {};
    });
    return this.#data;
  }

  /** Claude Code's `select:A,B`: exactly those deferred tools, by name or alias, in that order. */
  #select(names: readonly string[]): ToolSearchMatch[] {
    const matches: ToolSearchMatch[] = [];
    for (const name of names) {
      const tool = this.#registry.get(name);
      if (tool === undefined || !this.#deferred.has(tool.name)) continue;
      if (matches.some((match) => match.name === tool.name)) continue;
      matches.push({ name: tool.name, summary: toolSummary(tool.description), score: 1 });
    }
    return matches;
  }

  #createSearchTool(): AnyAgentTool {
    const maxResults = this.#options.maxResults ?? 5;
    return {
      name: this.#name,
      label: 'Tool search',
      description:
        'Finds tools that are available but not loaded yet (API operations, MCP servers’ tools…) and loads the ' +
        'best matches: they can be called from your next step. Search with a few keywords naming the action and ' +
        'its object as an API would (e.g. "create issue comment"; "delete calendar event" for "call off ' +
        'tomorrow\'s standup"), or set mode to "regex" to match names and descriptions with a pattern ' +
        '(RE2 syntax: no lookaround or back-references). ' +
        'Search again with other words if nothing fits; you may also call a tool you know by its exact name, ' +
        'or load named tools with "select:name1,name2".',
      parameters: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            description: 'Keywords, or a regular expression in regex mode.',
          },
          mode: {
            type: 'string',
            enum: ['keywords', 'regex'],
            description: 'How to match [keywords].',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: 20,
            description: `Matches to load [${maxResults}].`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      // claw-code's and Claude Code's `ToolSearch {query, max_results}`; Kiro's `tool_id`.
      aliases: ['ToolSearch'],
      prepareArguments: composePrepareArguments(
        kiroToolId,
        renameArguments({ max_results: 'limit' }),
      ),
      policy: {
        permission: 'read-only',
        parallelSafePerTurn: true,
        countsTowardTerminationVote: false,
      },
      execute: async (args: { query: string; mode?: 'keywords' | 'regex'; limit?: number }) => {
        const mode = args.mode ?? 'keywords';
        const limit = Math.min(20, Math.max(1, args.limit ?? maxResults));
        let matches: ToolSearchMatch[];
        try {
          matches = await this.#search(args.query, mode, limit + otherMatchCount);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return {
            content: [{ type: 'text', text: `Invalid regular expression: ${reason}` }],
            isError: true,
          };
        }
        const pending = this.pending.length;
        if (matches.length === 0) {
          return {
            content: [
              {
                type: 'text',
                // The query as one short line: it may be a megabyte, or carry escape sequences.
                text: `No tools match "${oneLineText(args.query, echoedQueryChars)}" among the ${pending} not loaded. Try other or fewer words${mode === 'keywords' ? ', or mode "regex"' : ''}.`,
              },
            ],
            details: { loaded: [], matches: [] } satisfies ToolSearchDetails,
          };
        }
        // `select:` loads every tool it names, up to `maxSelected`: the model chose them.
        const selecting = selectQuery(args.query) !== undefined;
        const taken = selecting ? maxSelected : limit;
        const maxLoaded = this.#options.maxLoaded ?? defaultMaxLoaded;
        let others = matches.slice(taken);
        if (others.length > 0) matches = matches.slice(0, taken);
        const before = new Set(this.#loaded);
        this.load(matches.map((match) => match.name));
        // Past `maxLoaded` a match is named, not loaded.
        const full = matches.filter((match) => !this.#loadedSet.has(match.name));
        if (full.length > 0) {
          matches = matches.filter((match) => this.#loadedSet.has(match.name));
          others = [...full, ...others];
        }
        const names = matches.map((match) => match.name);
        if (matches.length === 0) {
          return {
            content: [
              {
                type: 'text',
                text: `Nothing loaded: this session has loaded ${maxLoaded} tools, the most it holds. Use the tools loaded already; a tool called by its exact name still runs. Matching: ${full
                  .slice(0, otherMatchCount)
                  .map((match) => match.name)
                  .join(', ')}`,
              },
            ],
            details: { loaded: [], matches: [] } satisfies ToolSearchDetails,
          };
        }
        const lines = matches.map(
          (match) =>
            `- ${match.name}${before.has(match.name) ? ' (already loaded)' : ''}: ${match.summary}`,
        );
        // The next matches by name and summary: when the words misled the ranking, the model can
        // see the tool it meant and load it, without a second search.
        const listed = others.slice(0, otherMatchCount);
        const why =
          full.length > 0
            ? `this session holds at most ${maxLoaded} loaded tools`
            : selecting
              ? `"select:" loads at most ${maxSelected} at a time`
              : '"select:name" loads one';
        const more =
          listed.length === 0
            ? ''
            : `\nAlso matching, not loaded (${why}):\n${listed.map((match) => `- ${match.name}: ${clipSummary(match.summary)}`).join('\n')}${others.length > listed.length ? `\n… and ${others.length - listed.length} more` : ''}`;
        return {
          content: [
            {
              type: 'text',
              text: `Loaded ${matches.length} tool${matches.length === 1 ? '' : 's'}; call ${matches.length === 1 ? 'it' : 'them'} from your next step:\n${lines.join('\n')}${more}`,
            },
          ],
          details: {
            loaded: names,
            matches,
            ...(listed.length === 0 ? {} : { others: listed }),
          } satisfies ToolSearchDetails,
        };
      },
    };
  }
}
