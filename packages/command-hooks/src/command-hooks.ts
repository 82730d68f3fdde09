import {
  type AgentHooks,
  type AssistantMessage,
  claudeCodeNamesOf,
  credentialFreeEnvironment,
  type PermissionDecision,
  type PermissionGate,
  type PermissionRequest,
  type ToolCallInfo,
  type ToolResult,
  toolResultText,
} from '@agent/core';
import {
  type CommandHook,
  type HookEventName,
  type HooksConfig,
  hookEventNames,
  matches,
} from './config.js';
import type { HookSandbox } from './hook-sandbox.js';
import { type CommandOutcome, runCommand } from './run-command.js';
import { crlfScriptHint } from './script-line-endings.js';

/** Options of {@link CommandHooks}. */
export interface CommandHooksOptions {
  /** The workspace: the commands' working directory, `cwd` in the event and `AGENT_PROJECT_DIR`. */
  cwd: string;
  /** Sent as `session_id` in every event. */
  sessionId?: string;
  /** Sent as `transcript_path` when set. */
  transcriptPath?: string;
  /**
   * The commands' environment (default `process.env`) without the variables that hold credentials
   * (`credentialFreeEnvironment` of `@agent/core`) unless `passEnv` names them;
   * `AGENT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` are added.
   */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables the commands get anyway (exact names) [none]. */
  passEnv?: readonly string[];
  /** Timeout of a hook without its own `timeout`, in milliseconds (default 60 000). */
  defaultTimeoutMs?: number;
  /** Told about hooks that failed without blocking (exit codes other than 0 and 2, timeouts, bad JSON). */
  onWarning?: (message: string) => void;
  /**
   * Run every hook but those marked `"sandbox": false` inside this OS sandbox (a `Sandbox` of
   * `@agent/sandbox`) — for a workspace the user has not trusted, whose files a formatter or `git
   * status` would execute. Where it cannot run (`status.active` false) those hooks are withheld,
   * not run outside it: a withheld PreToolUse hook makes its calls ask (a guard that did not run
   * must not let a call through unseen), the others are skipped; {@link CommandHooks.sandboxNotice}
   * says so once [none: every hook runs unsandboxed].
   */
  sandbox?: HookSandbox;
  /**
   * What a failed sandboxed hook's warning adds about where it ran, for a person to act on
   * [`"sandbox": false on the hook runs it outside`] — e.g. the CLI names its setting that gives
   * the sandbox the network.
   */
  sandboxFailureHint?: string;
  /**
   * Asked before each run of a hook that runs outside the sandbox, and of every PreToolUse hook
   * (its `allow` lets a call run unasked — one outside the sandbox too): why it must not run now,
   * or undefined to run it — e.g. the CLI refuses a hook whose project files changed since the
   * session started (a sandboxed command rewrote the script the hook runs as the user, or the
   * guard that answers for the user). A refused PreToolUse hook makes its calls ask, as a withheld
   * one does; the others are skipped, said through `onWarning` [every hook runs].
   */
  refuseOutside?: (hook: CommandHook) => string | undefined;
  /**
   * Where a hook that runs outside the sandbox starts, instead of `cwd` — for a workspace the
   * user has not trusted: `npx` runs the folder's `node_modules/.bin` and reads its `.npmrc`,
   * `python -m` its modules, `uvx` and version managers' shims their config, so a notifier marked
   * `"sandbox": false` ran the repository's code as the user. `cwd` stays the event's `cwd` and
   * `AGENT_PROJECT_DIR` [`cwd`].
   */
  outsideCwd?: string;
}

/** What the JSON a hook prints on stdout may say (Claude Code's fields). */
interface HookOutput {
  continue?: boolean;
  stopReason?: string;
  decision?: 'block' | 'approve';
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    updatedInput?: unknown;
    additionalContext?: string;
  };
}

/** The combined verdict of the hooks of one event. */
export interface HookVerdict {
  /** A hook exited 2 or said `decision: "block"` / `permissionDecision: "deny"`; the reason (stderr, or the JSON's reason). */
  blocked?: string;
  /** PreToolUse: a hook allowed the call (it runs without the permission rules' question). */
  allow?: string;
  /** PreToolUse: a hook wants the user asked, whatever the rules say. */
  ask?: string;
  /**
   * PreToolUse: hooks that should have judged the call did not run (the sandbox withheld them or
   * could not start them); `ask` says so too. Where no one can be asked, the call does not run.
   */
  notRun?: string;
  /** PreToolUse: the arguments to run the call with instead. */
  updatedInput?: unknown;
  /** Context to give the model (UserPromptSubmit, SessionStart, PostToolUse), stdout of plain-text hooks included. */
  additionalContext: string[];
  /** A hook said `continue: false`: stop, with this reason. */
  stop?: string;
  /** Messages for the user (`systemMessage`). */
  messages: string[];
}

function parseOutput(stdout: string): HookOutput | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as HookOutput) : undefined;
  } catch {
    return undefined;
  }
}

function describe(outcome: CommandOutcome, command: string, cwd: string): string {
  if (outcome.timedOut) return `hook "${command}" timed out`;
  if (outcome.error !== undefined) return `hook "${command}" failed: ${outcome.error}`;
  const detail = outcome.stderr.trim();
  // 126/127: the shell could not run the program — a CRLF script reads as "not found".
  const hint =
    outcome.exitCode === 126 || outcome.exitCode === 127 ? crlfScriptHint(command, cwd) : undefined;
  return `hook "${command}" exited ${outcome.exitCode}${detail === '' ? '' : `: ${detail}`}${hint === undefined ? '' : ` — ${hint}`}`;
}

/**
 * Command hooks in Claude Code's format, turned into core {@link AgentHooks} and a permission gate
 * wrapper. Each command gets the event as JSON on stdin; exit 0 goes on (stdout may hold a JSON
 * decision), exit 2 blocks with stderr shown to the model, other exits are reported and ignored.
 *
 * PreToolUse runs in {@link wrapGate} when the gate is wrapped (so `allow` can skip the question and
 * `ask` can force one), otherwise in `beforeToolExecution`; `updatedInput` is applied in
 * `beforeToolExecution` either way, and the loop then puts the changed call to the gate again
 * (deny rules and the user's answer hold for what actually runs).
 */
export class CommandHooks {
  readonly #config: HooksConfig;
  readonly #options: CommandHooksOptions;
  /**
   * PreToolUse verdicts of calls the gate let through, until their beforeToolExecution takes them.
   * A call the gate refuses (or that fails or is aborted there) never gets that far: its verdict
   * is not kept, or a long session or `mcp serve` would hold one per refused call forever.
   */
  readonly #preVerdicts = new Map<string, HookVerdict>();
  /**
   * Verdicts whose `updatedInput` replaced a call's arguments, by the call's id under its
   * assistant message: the loop puts the replaced call to the gate again, which then asks `inner`
   * with the same verdict instead of running the hook twice. Held by the message, weakly: where the
   * loop refuses the new arguments before asking (invalid ones, a path the tool refuses) no second
   * gate comes to take the entry, and it goes with the message.
   */
  readonly #replacedVerdicts = new WeakMap<
    AssistantMessage,
    Map<string, { verdict: HookVerdict; args: string }>
  >();
  #gateWrapped = false;
  /** Whether the withheld hooks were reported (sandboxNotice); shared with {@link forSession}'s copies. */
  #notice = { given: false };

  constructor(config: HooksConfig, options: CommandHooksOptions) {
    this.#config = config;
    this.#options = options;
  }

  /**
   * The same hooks for another session (`session_id` of their events), for a server whose clients
   * are sessions of their own: configuration, options, sandbox and notices are shared (no second
   * sandbox starts); what a gate keeps for its calls' beforeToolExecution is the copy's own, so
   * wrap a session's gate and take its `agentHooks` from the same copy.
   */
  forSession(sessionId: string): CommandHooks {
    const hooks = new CommandHooks(this.#config, { ...this.#options, sessionId });
    hooks.#notice = this.#notice;
    return hooks;
  }

  /** Whether any hook is configured for `event`. */
  has(event: HookEventName): boolean {
    return (this.#config[event]?.length ?? 0) > 0;
  }

  /**
   * Runs the hooks of `event` selected by the tool's names (ours and Claude Code's; all hooks, for
   * events without tools), in parallel, and combines them.
   */
  async run(
    event: HookEventName,
    payload: Record<string, unknown>,
    toolName?: string | readonly string[],
    signal?: AbortSignal,
  ): Promise<HookVerdict> {
    const verdict: HookVerdict = { additionalContext: [], messages: [] };
    const commands = (this.#config[event] ?? [])
      .filter((entry) => toolName === undefined || matches(entry.matcher, toolName))
      .flatMap((entry) => entry.hooks);
    if (commands.length === 0) return verdict;
    const input = JSON.stringify({
      session_id: this.#options.sessionId ?? '',
      ...(this.#options.transcriptPath === undefined
        ? {}
        : { transcript_path: this.#options.transcriptPath }),
      cwd: this.#options.cwd,
      hook_event_name: event,
      ...payload,
    });
    const env = {
      // A hook's input holds what the model wrote: the commands must not find the user's keys.
      ...credentialFreeEnvironment(this.#options.env ?? process.env, {
        pass: this.#options.passEnv ?? [],
      }),
      AGENT_PROJECT_DIR: this.#options.cwd,
      CLAUDE_PROJECT_DIR: this.#options.cwd,
    };
    const sandbox = this.#options.sandbox;
    const refused = new Map<CommandHook, string>();
    for (const hook of commands) {
      if (this.#withheld(hook)) continue;
      // A sandboxed hook can do no harm by what it runs, but a PreToolUse one's answer is the
      // user's: rewritten by a sandboxed command to say `allow`, it let the next call leave the
      // sandbox unasked.
      if (sandbox !== undefined && hook.sandbox !== false && event !== 'PreToolUse') continue;
      const reason = this.#options.refuseOutside?.(hook);
      if (reason !== undefined) refused.set(hook, reason);
    }
    const ran = commands.filter((hook) => !this.#withheld(hook) && !refused.has(hook));
    const withheld = commands.filter((hook) => this.#withheld(hook));
    if (withheld.length > 0) this.#warnWithheld();
    for (const [hook, reason] of refused)
      this.#options.onWarning?.(`${event} hook "${hook.command}" did not run: ${reason}`);
    const outcomes = await Promise.all(
      ran.map((hook) =>
        runCommand(hook.command, input, {
          cwd:
            sandbox === undefined || hook.sandbox === false
              ? (this.#options.outsideCwd ?? this.#options.cwd)
              : this.#options.cwd,
          env,
          timeoutMs:
            hook.timeout === undefined
              ? (this.#options.defaultTimeoutMs ?? 60_000)
              : hook.timeout * 1000,
          ...(signal === undefined ? {} : { signal }),
          ...(sandbox === undefined || hook.sandbox === false ? {} : { sandbox }),
        }).then((outcome) => ({ hook, outcome })),
      ),
    );
    // What the sandboxed hooks made for the user's git or shell: the user is told at once.
    if (sandbox !== undefined && ran.some((hook) => hook.sandbox !== false)) {
      const planted = sandbox.checkPlanted?.() ?? [];
      if (planted.length > 0)
        this.#options.onWarning?.(
          `${event} hooks in the OS sandbox made ${planted.join(', ')}: a repository's hooks and config run with your next git command in that folder, a startup file with your next shell. Look before using them (the sandbox keeps them read-only from now on).`,
        );
    }
    const blocked: string[] = [];
    // A guard that could not run asks rather than letting the call through unseen.
    const notRun: string[] =
      event === 'PreToolUse'
        ? [
            ...withheld.map(
              (hook) =>
                `your PreToolUse hook "${hook.command}" did not run: ${this.#sandboxProblem()}`,
            ),
            ...[...refused].map(
              ([hook, reason]) => `your PreToolUse hook "${hook.command}" did not run: ${reason}`,
            ),
          ]
        : [];
    const asked: string[] = [];
    const allowed: string[] = [];
    for (const { hook, outcome } of outcomes) {
      // The sandbox failed (nothing ran): a guard asks, as where the sandbox cannot run at all.
      if (outcome.sandboxFailed !== undefined && event === 'PreToolUse') {
        notRun.push(
          `your PreToolUse hook "${hook.command}" did not run: the OS sandbox could not start it (${outcome.sandboxFailed})`,
        );
        continue;
      }
      if (outcome.exitCode === 2) {
        blocked.push(outcome.stderr.trim() || `Blocked by the hook "${hook.command}"`);
        continue;
      }
      if (outcome.exitCode !== 0) {
        // A hook that worked outside may fail for what the sandbox forbids: say where it ran.
        const where =
          sandbox === undefined || hook.sandbox === false
            ? ''
            : ` (in the OS sandbox; ${this.#options.sandboxFailureHint ?? '"sandbox": false on the hook runs it outside'})`;
        if (!signal?.aborted)
          this.#options.onWarning?.(
            `${event} ${describe(outcome, hook.command, this.#options.cwd)}${where}`,
          );
        continue;
      }
      const output = parseOutput(outcome.stdout);
      if (output === undefined) {
        const text = outcome.stdout.trim();
        // Plain stdout is context for the model where Claude Code treats it so.
        if (text !== '' && (event === 'UserPromptSubmit' || event === 'SessionStart'))
          verdict.additionalContext.push(text);
        continue;
      }
      if (output.systemMessage !== undefined) verdict.messages.push(output.systemMessage);
      if (output.continue === false)
        verdict.stop = output.stopReason ?? `Stopped by the hook "${hook.command}"`;
      const specific = output.hookSpecificOutput ?? {};
      if (specific.additionalContext !== undefined)
        verdict.additionalContext.push(specific.additionalContext);
      const reason = specific.permissionDecisionReason ?? output.reason;
      if (output.decision === 'block' || specific.permissionDecision === 'deny') {
        blocked.push(reason ?? `Blocked by the hook "${hook.command}"`);
      } else if (specific.permissionDecision === 'ask') {
        asked.push(reason ?? `The hook "${hook.command}" asks for approval`);
      } else if (specific.permissionDecision === 'allow' || output.decision === 'approve') {
        allowed.push(reason ?? `Allowed by the hook "${hook.command}"`);
      }
      if (specific.updatedInput !== undefined) verdict.updatedInput = specific.updatedInput;
    }
    // The strictest wins: deny, then ask (a guard that did not run asks), then allow.
    if (notRun.length > 0) verdict.notRun = notRun.join('\n');
    if (blocked.length > 0) verdict.blocked = blocked.join('\n');
    else if (asked.length > 0 || notRun.length > 0) verdict.ask = [...notRun, ...asked].join('\n');
    else if (allowed.length > 0) verdict.allow = allowed.join('\n');
    return verdict;
  }

  /** Whether `hook` belongs in the sandbox and the sandbox cannot run here. */
  #withheld(hook: CommandHook): boolean {
    const sandbox = this.#options.sandbox;
    return sandbox !== undefined && hook.sandbox !== false && !sandbox.status.active;
  }

  #sandboxProblem(): string {
    const reason = this.#options.sandbox?.status.reason ?? 'unavailable';
    return `hooks run only in the OS sandbox here, and it cannot run (${reason})`;
  }

  #warnWithheld(): void {
    const notice = this.sandboxNotice();
    if (notice !== undefined) this.#options.onWarning?.(notice);
  }

  /**
   * Once per instance: the line that says which hooks are withheld because the sandbox cannot run
   * here (undefined when none is, or after it was given — here or through `onWarning`).
   */
  sandboxNotice(): string | undefined {
    if (this.#notice.given) return undefined;
    const withheld = hookEventNames.flatMap((event) =>
      (this.#config[event] ?? [])
        .flatMap((entry) => entry.hooks)
        .filter((hook) => this.#withheld(hook))
        .map((hook) => `${event} "${hook.command}"`),
    );
    if (withheld.length === 0) return undefined;
    this.#notice.given = true;
    return `${withheld.length} hook${withheld.length === 1 ? '' : 's'} will not run (${withheld.join(', ')}): ${this.#sandboxProblem()}. PreToolUse hooks that do not run make the calls they match ask.`;
  }

  #preToolUse(call: ToolCallInfo, signal?: AbortSignal): Promise<HookVerdict> {
    return this.run(
      'PreToolUse',
      { tool_name: call.toolName, tool_input: hookInput(call), tool_use_id: call.toolCallId },
      namesOf(call),
      signal,
    );
  }

  /**
   * Wraps a permission gate so PreToolUse hooks decide first: a block denies with the hook's
   * reason; `allow` goes to `inner` marked `allowedBy` — a `PermissionPolicy` then runs it without
   * a question but still applies disabled tools, deny rules, "never" grants, plan mode and ask
   * rules (as Claude Code does: a hook's allow does not bypass permission rules); `ask` makes
   * `inner` ask (the request is marked opaque, which no rule, grant or mode can allow). A guard
   * that did not run (see {@link HookVerdict.notRun}) asks too; with no `inner` to ask, it denies.
   */
  wrapGate(inner: PermissionGate | undefined): PermissionGate {
    this.#gateWrapped = true;
    return async (request: PermissionRequest): Promise<PermissionDecision> => {
      if (!this.has('PreToolUse'))
        return inner === undefined ? { behavior: 'allow' } : inner(request);
      const replaced = this.#takeReplaced(request);
      const verdict = replaced ?? (await this.#preToolUse(request, request.signal));
      // A throw of `inner` keeps nothing either. An abort is seen here exactly: it comes from an
      // event, and the loop, which stops waiting for the gate on it, gets this answer in the same
      // turn of the event loop.
      const decision = await gateDecision(verdict, inner, request);
      if (replaced === undefined && decision.behavior === 'allow' && !request.signal?.aborted)
        this.#preVerdicts.set(request.toolCallId, verdict);
      return decision;
    };
  }

  /**
   * The verdict kept for this replaced call, taken out. Only the same call with the hook's own
   * arguments reuses it; anything else (a later call reusing the id) runs the hook.
   */
  #takeReplaced(request: PermissionRequest): HookVerdict | undefined {
    const pending = this.#replacedVerdicts.get(request.assistantMessage);
    const entry = pending?.get(request.toolCallId);
    if (pending === undefined || entry === undefined) return undefined;
    pending.delete(request.toolCallId);
    if (pending.size === 0) this.#replacedVerdicts.delete(request.assistantMessage);
    return entry.args === jsonText(request.args) ? entry.verdict : undefined;
  }

  #keepReplaced(call: ToolCallInfo, verdict: HookVerdict, args: string): void {
    let pending = this.#replacedVerdicts.get(call.assistantMessage);
    if (pending === undefined) {
      pending = new Map();
      this.#replacedVerdicts.set(call.assistantMessage, pending);
    }
    pending.set(call.toolCallId, { verdict, args });
  }

  /** The hooks for `AgentOptions.hooks`: PreToolUse (unless the gate ran it) and PostToolUse. */
  get agentHooks(): AgentHooks {
    return {
      beforeToolExecution: async (call) => {
        let verdict = this.#preVerdicts.get(call.toolCallId);
        this.#preVerdicts.delete(call.toolCallId);
        if (verdict === undefined) {
          if (this.#gateWrapped || !this.has('PreToolUse')) return undefined;
          verdict = await this.#preToolUse(call);
          if (verdict.blocked !== undefined) return { action: 'skip', reason: verdict.blocked };
          // Without the gate wrapped no one can be asked: a call whose guard did not run is skipped.
          if (verdict.notRun !== undefined) return { action: 'skip', reason: verdict.notRun };
        }
        if (verdict.updatedInput !== undefined) {
          // The loop asks the gate about the new arguments; the wrapped gate answers with this
          // verdict (its allow or ask) rather than running the hook on its own output.
          const args = jsonText(verdict.updatedInput);
          if (this.#gateWrapped && args !== undefined && args !== jsonText(call.args))
            this.#keepReplaced(call, verdict, args);
          return { action: 'replace', args: verdict.updatedInput };
        }
        return undefined;
      },
      afterToolExecution: async (call, result) => {
        if (!this.has('PostToolUse')) return undefined;
        const verdict = await this.run(
          'PostToolUse',
          {
            tool_name: call.toolName,
            tool_input: hookInput(call),
            tool_use_id: call.toolCallId,
            tool_response: toolResponse(result),
          },
          namesOf(call),
        );
        const notes = [
          ...(verdict.blocked === undefined ? [] : [`PostToolUse hook: ${verdict.blocked}`]),
          ...verdict.additionalContext,
        ];
        if (notes.length === 0) return undefined;
        return {
          ...result,
          content: [...result.content, { type: 'text', text: notes.join('\n') }],
        };
      },
    };
  }

  /**
   * UserPromptSubmit: a block means the prompt is not sent (show `blocked` to the user); otherwise
   * `prompt` is the text to send, with the hooks' context appended.
   */
  async userPromptSubmit(
    prompt: string,
  ): Promise<{ blocked: string; messages: string[] } | { prompt: string; messages: string[] }> {
    const verdict = await this.run('UserPromptSubmit', { prompt });
    const blocked = verdict.blocked ?? verdict.stop;
    if (blocked !== undefined) return { blocked, messages: verdict.messages };
    return {
      prompt: [prompt, ...verdict.additionalContext].join('\n\n'),
      messages: verdict.messages,
    };
  }

  /**
   * Stop, when a run has ended: `continueWith` is a reason the agent should go on (a hook exited 2
   * or said `decision: "block"`); pass `stopHookActive` when this run was itself such a continuation.
   */
  async stop(stopHookActive: boolean): Promise<{ continueWith?: string; messages: string[] }> {
    const verdict = await this.run('Stop', { stop_hook_active: stopHookActive });
    if (verdict.blocked !== undefined && verdict.stop === undefined)
      return { continueWith: verdict.blocked, messages: verdict.messages };
    return { messages: verdict.messages };
  }

  /** SessionStart (`source`: startup, resume, clear): the context the hooks want the model to have ('' for none). */
  async sessionStart(source: 'startup' | 'resume' | 'clear'): Promise<string> {
    const verdict = await this.run('SessionStart', { source });
    return verdict.additionalContext.join('\n\n');
  }
}

/** What the wrapped gate answers, given the call's PreToolUse verdict (see `wrapGate`). */
function gateDecision(
  verdict: HookVerdict,
  inner: PermissionGate | undefined,
  request: PermissionRequest,
): PermissionDecision | Promise<PermissionDecision> {
  if (verdict.blocked !== undefined) return { behavior: 'deny', reason: verdict.blocked };
  // No gate to ask: a call whose guard did not run does not run either.
  if (verdict.notRun !== undefined && inner === undefined)
    return { behavior: 'deny', reason: verdict.notRun };
  if (inner === undefined) return { behavior: 'allow' };
  if (verdict.allow !== undefined) return inner({ ...request, allowedBy: verdict.allow });
  if (verdict.ask !== undefined) return inner({ ...request, opaque: verdict.ask });
  return inner(request);
}

function toolResponse(result: ToolResult): unknown {
  return {
    content: toolResultText(result.content),
    isError: result.isError === true,
  };
}

/** The tool's own name, then the names Claude Code gives it (matchers may use either). */
function namesOf(call: Pick<ToolCallInfo, 'toolName' | 'tool'>): string[] {
  return [call.toolName, ...claudeCodeNamesOf(call.tool ?? { name: call.toolName })];
}

/**
 * The call's arguments as a hook reads them: ours, plus `file_path` beside `path` for the file
 * tools Claude Code calls Read, Edit and Write — scripts written for it read `tool_input.file_path`.
 */
function hookInput(call: Pick<ToolCallInfo, 'toolName' | 'tool' | 'args'>): unknown {
  const { args } = call;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const record = args as Record<string, unknown>;
  if (typeof record.path !== 'string' || 'file_path' in record) return args;
  const claude = claudeCodeNamesOf(call.tool ?? { name: call.toolName });
  if (!claude.some((name) => /^(Read|Edit|MultiEdit|Write|NotebookEdit)$/.test(name))) return args;
  return { ...record, file_path: record.path };
}

/** A value as JSON text for comparison (undefined when it cannot be written). */
function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
