import type { JsonSchema, JsonSchemaObject } from './json-schema.js';
import type { ToolResultContent, ToolResultMessage } from './messages.js';
import type { RunContext } from './run-context.js';

/** Permission tier a tool needs, from least to most powerful. */
export type PermissionTier = 'read-only' | 'workspace-write' | 'full-access';

/**
 * What a file tool does with the paths it names as permission subjects (real paths): reads them
 * (read_file, search, glob, list_files, notebook and code-intelligence reads), writes them
 * without reading (write_file), or both (edit_file: it reads the file it changes).
 */
export type ToolPathAccess = 'read' | 'write' | 'read-write';

/** The two path families permission rules cover: every tool that reads a path, and every tool that writes one. */
export type PathFamily = 'read' | 'write';

/**
 * Whether permission rules keep tools of `family` away from `path` (a real path): a deny or an
 * ask rule on a path tool covers it. Tools that touch many paths at once (search, glob,
 * list_files) leave such paths out of their results instead of asking about each.
 */
export interface PathDenialCheck {
  (path: string, family: PathFamily): boolean;
  /**
   * False when no path of `family` can be covered (no such rules): a tool may skip work it does
   * only to account for covered paths. Absent: assume some can be.
   */
  covers?: (family: PathFamily) => boolean;
}

/** How a tool may be scheduled and limited. Every field is optional. */
export interface ToolPolicy<TArgs = unknown> {
  /**
   * Tier the tool needs [full-access]. A call may need another: `permissionSubjects` can return
   * a `tier` of its own for it (a shell line that only reads, a sandboxed one).
   */
  permission?: PermissionTier;
  /**
   * The lowest tier any call may need, for a tool whose `permissionSubjects` gives calls tiers of
   * their own [permission]. Used to tell whether a mode could ever allow the tool unasked.
   */
  minimumPermission?: PermissionTier;
  /** Needs exclusive access to shared state: a batch containing it runs sequentially [false]. */
  exclusive?: boolean;
  /** When this call fails, cancel the other calls of its parallel batch [false]. */
  abortsSiblingsOnError?: boolean;
  /** Clip older results of this tool to this many characters when sent to the model; `Infinity` never clips [agent default]. */
  maxResultChars?: number;
  /** Counts toward `maxToolCallsPerTurn` [true]. */
  countsTowardToolCallLimit?: boolean;
  /**
   * Read-only or idempotent: repeated calls of this tool in one turn count once toward
   * `maxToolCallsPerTurn` (the first does; the repeats do not contend for the cap) [false].
   */
  parallelSafePerTurn?: boolean;
  /**
   * Its `terminate` vote counts [true]. `false` marks an advisory tool: its vote is ignored (neither
   * yes nor no), so a batch ends the run only when every counted call votes to, and a batch of
   * advisory calls alone never does.
   */
  countsTowardTerminationVote?: boolean;
  /**
   * What makes two calls "the same operation", for the loop detector: the names of the arguments
   * that matter (a discriminator such as `['action']`), or a function of the arguments [the whole
   * arguments].
   */
  identity?: readonly string[] | ((args: TArgs) => string);
  /**
   * Hints for the history transform (what an older result becomes in the copy sent to the model;
   * stored history stays whole): `refetchable` — a short stub naming the call replaces it (the
   * model can call again); `summarise` — its summary replaces it. Otherwise it is clipped to
   * `maxResultChars`.
   */
  history?: {
    refetchable?: boolean;
    summarise?: (result: ToolResultMessage) => string;
  };
  /** Per-call timeout in ms [agent default]. */
  timeoutMs?: number;
  /** Calls whose keys are equal never overlap (e.g. two edits of one file). */
  resourceKey?: (args: TArgs) => string | undefined;
  /**
   * The tool's permission subjects are real paths it reads, writes or both: a path rule written
   * against any tool of a family (readers; writers) covers it too, and relative path patterns
   * resolve against the workspace root [not a path tool].
   */
  pathAccess?: ToolPathAccess;
  /**
   * The tool's permission subject is code it runs (a REPL cell): an allow rule covers a call only
   * when its subject is that code, literally — `*` in it is no wildcard, since no pattern can
   * bound what code does (as a glob, `js_repl(6 *)` allowed `6 * 7; require('fs').rmSync(…)`).
   * The bare tool name, or `tool(*)`, still allows every call; deny and ask rules still match
   * as patterns [false].
   */
  subjectsAreCode?: boolean;
  /**
   * Safe to run again when a run resumes after its process died while this call was running:
   * read-only, or idempotent (a second call has the effect of one). A call of any other tool
   * caught that way is reported to the model as interrupted, with unknown effects, never
   * silently repeated [true for `permission: 'read-only'`, else false].
   */
  repeatable?: boolean;
}

/**
 * Real paths a call touches beside its subjects — a shell line's file arguments — so that path
 * rules on the tools that read (`read`) or write (`write`) them cover the call too: a
 * `deny read_file(.env)` then also denies `cat .env`.
 */
export interface TouchedPaths {
  read?: readonly string[] | undefined;
  write?: readonly string[] | undefined;
}

/**
 * What a call touches, for permission rules: the subjects, plus `opaque` (a short reason, e.g.
 * "arithmetic over variables") when the tool cannot name everything the call will run, `tier`
 * when this call needs another tier than the tool's `policy.permission` (a shell line made only
 * of reading commands needs `read-only`), and `paths` it is known to read or write.
 */
export type PermissionSubjectsResult =
  | readonly string[]
  | {
      subjects: readonly string[];
      opaque?: string | undefined;
      tier?: PermissionTier | undefined;
      paths?: TouchedPaths | undefined;
    };

const tiers: readonly PermissionTier[] = ['read-only', 'workspace-write', 'full-access'];

/** Splits a {@link PermissionSubjectsResult} into its subjects, opaque reason and call tier. */
export function normalisePermissionSubjects(result: PermissionSubjectsResult): {
  subjects: readonly string[];
  opaque: string | undefined;
  tier: PermissionTier | undefined;
  paths: TouchedPaths | undefined;
} {
  if (Array.isArray(result))
    return {
      subjects: result as readonly string[],
      opaque: undefined,
      tier: undefined,
      paths: undefined,
    };
  const { subjects, opaque, tier, paths } = result as {
    subjects: readonly string[];
    opaque?: string;
    tier?: unknown;
    paths?: TouchedPaths;
  };
  return {
    paths:
      paths === undefined || (paths.read?.length ?? 0) + (paths.write?.length ?? 0) === 0
        ? undefined
        : paths,
    subjects,
    opaque: opaque === undefined || opaque === '' ? undefined : opaque,
    // Anything but a known tier is ignored: the tool's declared tier stands.
    tier: tiers.includes(tier as PermissionTier) ? (tier as PermissionTier) : undefined,
  };
}

/** What a tool returns. `details` never reaches the model. */
export interface ToolResult<TDetails = unknown> {
  content: ToolResultContent[];
  /** Free metadata for UIs and logs; never sent to the model. */
  details?: TDetails;
  /** Set by sub-agent tools: the id of the child loop. */
  childLoopId?: string;
  /** Marks the result as a failure the model should read as such. */
  isError?: boolean;
  /** Votes to end the run after this batch; the run ends when every call of the batch votes so. */
  terminate?: boolean;
}

/** Per-invocation context from the system (never from the model). New fields may be added. */
export interface ToolContext {
  /** Id of the tool call this invocation answers. */
  toolCallId: string;
  /** The tool's canonical name (not the alias the model may have used). */
  toolName: string;
  /** Aborted when this call is cancelled, times out, or the run is aborted. */
  signal: AbortSignal;
  /** Streams a partial result to UIs and logs; never sent to the model. */
  onUpdate: (partial: ToolResult) => void;
  /** Reports user-facing progress; `progress` is a fraction in [0, 1] when known. */
  onProgress: (text: string, progress?: number) => void;
  /** The calling run: its chain of sub-agents, depth, gate, hooks and budget (set by the loop). */
  run?: RunContext;
  /**
   * Whether permission rules keep tools of a family away from a real path; set by the loop when
   * the agent has one (`AgentOptions.isPathDenied`). Tools that read many paths at once leave
   * those paths out of their results.
   */
  isPathDenied?: PathDenialCheck;
  /**
   * Set by the loop when the permission gate allowed this call only to read (its decision's
   * `readOnly`: the session's mode — `read-only`, `plan` — lets nothing write). A tool that runs
   * code it cannot fully judge (a shell line) runs it where nothing can be written: its own
   * analysis of the call may be wrong.
   */
  readOnly?: boolean;
  /**
   * Runs another tool as part of this call, through the loop's whole path: validation, permission
   * gate (an approval question waits for its answer), hooks, resource locks, timeout and events
   * (tagged `parentToolCallId`: this call's id). Resolves with the result message the model would
   * have read — a denial or failure is an `isError` result — and never rejects. Nested calls are
   * aborted with this call and do not count toward `maxToolCallsPerTurn`. Set by the loop.
   * `options.signal` aborts one nested call sooner (a script that ended cancels the calls it
   * left running).
   */
  callTool?: (
    tool: AnyAgentTool,
    args: unknown,
    options?: { signal?: AbortSignal },
  ) => Promise<ToolResultMessage>;
}

/** One problem found while validating arguments; `path` points at the bad field. */
export interface ValidationIssue {
  path: readonly (string | number)[];
  message: string;
}

/** The outcome of validating a tool's arguments. */
export type ValidationResult<T> =
  | { ok: true; value: T }
  | { ok: false; issues: readonly ValidationIssue[] };

/**
 * The executable half of a tool: the one contract every tool source implements.
 * `args` come from the model (validated); `ctx` comes from the system.
 */
export interface AgentTool<TArgs = unknown, TDetails = unknown> {
  /** Wire name, `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  /** Human label for UIs. */
  label?: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the arguments: an object schema, self-contained (no `$ref`, no `$schema`). */
  parameters: JsonSchemaObject;
  /** Other wire names that resolve to this tool. */
  aliases?: readonly string[];
  /** JSON Schema of the result's `details`, when the tool declares one. */
  outputSchema?: JsonSchema;
  /** Where the tool comes from, for availability patterns `@source` and `@source/tool` (e.g. `builtin`, `mcp:github`). */
  source?: string;
  /** Scheduling, limits and permission tier. */
  policy?: ToolPolicy<TArgs>;
  /**
   * Deferred: not sent to the model until `tool_search` finds it (or the model calls it by
   * name); `false` keeps it loaded even when the agent defers a large catalogue automatically.
   * Unset: loaded, unless the agent's `toolSearch` options defer it.
   */
  defer?: boolean;
  /** Extra words `tool_search` finds the tool by: tags, an HTTP path, a server name. */
  keywords?: readonly string[];
  /**
   * More text `tool_search` finds the tool by, weighed below its description: what the tool
   * returns (an OpenAPI operation's response fields), so a question finds the tool whose answer
   * holds it ("is alice online" → a presence lookup). For search only: never sent to the model.
   */
  searchText?: string;
  /** Pure normalisation of the parsed JSON arguments before validation. */
  prepareArguments?: (raw: unknown) => unknown;
  /** Validates (and may transform) the arguments. Without it the loop validates against `parameters` (JSON Schema). */
  validate?: (args: unknown) => ValidationResult<TArgs>;
  /**
   * The permission subjects these arguments touch (commands, real paths, `METHOD /path`); defaults
   * to none. Return `{ subjects, opaque }` when the tool cannot name everything the call will do
   * (a shell line with `eval $x`): such a call is never allowed by a rule, grant or mode, only asked.
   */
  permissionSubjects?: (
    args: TArgs,
  ) => PermissionSubjectsResult | Promise<PermissionSubjectsResult>;
  /** Runs the tool. Throw a `ToolError` (or any error) to report a failure to the model. */
  execute: (args: TArgs, ctx: ToolContext) => Promise<ToolResult<TDetails>>;
}

/** An `AgentTool` of any argument and details types. */
// biome-ignore lint/suspicious/noExplicitAny: variance escape hatch for heterogeneous tool lists
export type AnyAgentTool = AgentTool<any, any>;

/** The schema half of a tool, as sent to a provider. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
}

/** Wire names tools may use. */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** The definition a provider needs for a tool. */
export function toToolDefinition(
  tool: Pick<AgentTool, 'name' | 'description' | 'parameters'>,
): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

/** A text-only tool result. */
export function textResult<TDetails = unknown>(
  text: string,
  options: { details?: TDetails; isError?: boolean; terminate?: boolean } = {},
): ToolResult<TDetails> {
  const result: ToolResult<TDetails> = { content: [{ type: 'text', text }] };
  if (options.details !== undefined) result.details = options.details;
  if (options.isError !== undefined) result.isError = options.isError;
  if (options.terminate !== undefined) result.terminate = options.terminate;
  return result;
}

/** Re-exported for tool authors. */
export type { JsonSchema, JsonSchemaObject };
