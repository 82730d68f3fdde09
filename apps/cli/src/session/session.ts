import { randomUUID } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { CommandHooks } from '@agent/command-hooks';
import {
  Agent,
  AgentError,
  type AgentEvent,
  type AgentOptions,
  type AgentRunResult,
  type AgentStopReason,
  type Compaction,
  errorMessage,
  type Message,
  type PermissionApprover,
  type PermissionMode,
  PermissionPolicy,
  type PermissionRequest,
  type RunBudgetLimits,
  type ToolSearchData,
} from '@agent/core';
import { type AgentDefinition, createAgentTools, loadAgentDefinitions } from '../config/agents.js';
import { type CliOptions, UsageError } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { denyTypoRefusal } from '../config/deny-typos.js';
import type { McpToolChangeQuestion } from '../config/mcp-pins.js';
import { agentsInstructions } from '../config/settings.js';
import type { McpInteractions } from '../ui/mcp-interactions.js';
import { redactToolText } from '../ui/redaction.js';
import { CheckpointStore, checkpointsDir, withCheckpoints } from './checkpoints.js';
import { codeModeToolName, sessionCodeModeTool } from './code-mode.js';
import { createConfigTools } from './config-tool.js';
import { reportUnmatched } from './mcp-tools.js';
import { createExitPlanModeTool, type PlanApprover, promptInMode } from './plan-mode.js';
import { chooseProvider, type ModelChoice } from './providers.js';
import { redactAddedContext, redactingGate, redactingHooks } from './result-redaction.js';
import { loadSavedSession, type SavedSession, saveConversation } from './session-file.js';
import { createSessionHooks } from './session-hooks.js';
import { SessionJournal } from './session-journal.js';
import { loadTools, sandboxPatterns, type ToolSet } from './tool-sources.js';
/** Where a run's events go: the text transcript, or the JSON output. */
export interface EventSink {
  onEvent(event: AgentEvent): void;
}

/** Everything one CLI session holds: the agent, its permission policy, tools and model. */
export interface Session {
  agent: Agent;
  policy: PermissionPolicy;
  tools: ToolSet;
  model: ModelChoice;
  /** The permission rules in force (settings files and flags), for `/permissions`. */
  rules: { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] };
  /** Usage summed over the session's runs, for `/cost`. */
  usage: {
    input: number;
    output: number;
    cacheRead: number;
    cost: number | undefined;
    runs: number;
  };
  /** The command hooks of the settings files, when any are configured. */
  commandHooks: CommandHooks | undefined;
  /** For the banner and stream-json's `run-start`: the hooks' OS sandbox, when they run in one. */
  hooksSandbox: string | undefined;
  /** The session's id (in hook events and JSON output). */
  id: string;
  /** The workspace (absolute). */
  cwd: string;
  /** The project root whose configuration the session uses (a real path; see project-root.ts). */
  projectRoot: string;
  /** Sub-agents from `.agent/agents/` and `$AGENT_HOME/agents/`, offered as tools. */
  agents: AgentDefinition[];
  /** The provider and model for a model name (the session's provider; a scripted session keeps its script). */
  chooseModel(name: string): Promise<ModelChoice>;
  /** Starts a fresh agent with the same tools and settings: another model, or other messages (`[]` clears). */
  replaceAgent(change: {
    model?: ModelChoice;
    messages?: Message[];
    compactions?: Compaction[];
  }): void;
  /** A model chosen during a run (`config_set`), taken when the run ends. */
  pendingModel: ModelChoice | undefined;
  /** Writes the conversation and this session's grants to `path` (then empties the journal). */
  save(path: string): Promise<void>;
  /** Writes the session file as it is before a run (the journal is kept). */
  saveBeforeRun(path: string): Promise<void>;
  /** The session's run journal. */
  journal: SessionJournal;
  /** The files' content before the file tools changed them, for `/rewind` (see checkpoints.ts). */
  checkpoints: CheckpointStore;
  /** Journaled runs the resumed session file lacks (a crash cut them off): resume these first. */
  runsToResume: string[];
  /** The last run of the session (written with it, so a later start knows what it holds). */
  lastRunId: string | undefined;
  /** Releases MCP servers and background commands. */
  close(): Promise<void>;
}

/** Exit code of a `-p` run in which a call needed approval and there was no one to ask. */
export const deniedWithoutApproverExitCode = 4;

/** Model calls of one run and its sub-agents together when `--max-turns` is not given. */
export const defaultTreeModelCalls = 400;
/** Tool calls of one run, its sub-agents' and scripts' included, without `--max-tool-calls`. */
export const defaultTreeToolCalls = 2_000;

/**
 * The whole run tree's caps: --max-turns bounds the run's model calls, its sub-agents' included
 * (a child has turns of its own, and a run that delegates must not spend past the user's limit);
 * without it, and for tool calls, a default holds, so four sub-agents three deep that each keep
 * calling cannot run on for ever.
 */
function runTreeBudget(options: Pick<CliOptions, 'maxTurns' | 'maxToolCalls'>): RunBudgetLimits {
  return {
    maxModelCalls: options.maxTurns ?? defaultTreeModelCalls,
    maxToolCalls: options.maxToolCalls ?? defaultTreeToolCalls,
  };
}

/** The exit code for a run's stop reason: 0 completed, 1 error, 3 max-turns, budget spent or loop detected, 130 aborted. */
export function exitCodeFor(stopReason: AgentStopReason): number {
  switch (stopReason) {
    case 'completed':
    case 'terminated':
      return 0;
    case 'error':
      return 1;
    case 'max-turns':
    case 'budget-exhausted':
    case 'loop-detected':
      return 3;
    case 'aborted':
      return 130;
    default: {
      const exhaustive: never = stopReason;
      return exhaustive;
    }
  }
}

/** The system prompt when `--system` is not given. */
export function defaultSystemPrompt(cwd: string): string {
  return [
    'You are a careful coding agent working in a terminal.',
    `Your workspace is ${cwd}; file tools take paths relative to it.`,
    'Use the tools to look before you change anything, keep changes small, and say what you did.',
  ].join(' ');
}

/**
 * `tool_search`'s learned data (word associations and embeddings, `@agent/tool-search-data`):
 * imported when the first keyword search needs it (~0.2 s, ~17 MB), never in a session whose tools
 * all fit in the model's tool list.
 */
async function loadToolSearchData(): Promise<ToolSearchData> {
  const data = await import('@agent/tool-search-data');
  return { associations: data.toolSearchAssociations(), embeddings: data.toolSearchEmbeddings() };
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * What would let `request` run without a question, for the denial `-p` gives when it cannot ask:
 * the `--allow` rules naming its subjects, or the `--mode` covering its tier.
 */
export function approvalHint(request: PermissionRequest, askRule: string | undefined): string {
  const opaque = (request as { opaque?: unknown }).opaque;
  if (typeof opaque === 'string') {
    return `no rule can allow it (${opaque}); approve it in an interactive session`;
  }
  if (askRule !== undefined) {
    return `the rule --ask ${shellQuote(askRule)} always asks; drop it, or run interactively to approve`;
  }
  const rules =
    request.subjects.length === 0
      ? [request.toolName]
      : request.subjects.map((subject) => `${request.toolName}(${subject})`);
  const allow = rules.map((rule) => `--allow ${shellQuote(rule)}`).join(' ');
  return `to allow it, add ${allow}, or use --mode ${request.tier}`;
}

/**
 * The approver of a `-p` run with no terminal: denies, telling the model (and the user, in the
 * transcript) exactly which flag would have allowed the call, and counts the denials.
 */
export function nonInteractiveApprover(): PermissionApprover & { denied: () => number } {
  let denied = 0;
  const approver: PermissionApprover = (request, context) => {
    denied += 1;
    // No one saw this call: the denial says so and names the flag, never "Denied by the user".
    return {
      answer: 'deny',
      unattended: true,
      reason: `No one could be asked to approve this call (-p with no terminal on stdin): ${approvalHint(request, context.askRule)}`,
    };
  };
  return Object.assign(approver, { denied: () => denied });
}

/** Fails unless `cwd` is an existing directory (a typo must not create a new workspace). */
export async function checkWorkspace(cwd: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(cwd);
  } catch {
    throw new CliError(
      `The workspace ${cwd} does not exist (--cwd must name an existing directory)`,
    );
  }
  if (!info.isDirectory()) throw new CliError(`The workspace ${cwd} is not a directory`);
  // One the user may not enter or list (another user's home, a 0700 folder): its settings,
  // AGENTS.md and .mcp.json were each said unreadable, then the session ran with tools that could
  // read nothing there. Said once, as what it is.
  const denied = async (mode: number) =>
    access(cwd, mode).then(
      () => false,
      () => true,
    );
  const what = (await denied(constants.X_OK))
    ? 'cannot be entered'
    : (await denied(constants.R_OK))
      ? 'cannot be listed'
      : undefined;
  if (what !== undefined)
    throw new CliError(
      `The workspace ${cwd} ${what} by this user (permission denied): the tools could not work in it. Check its permissions (ls -ld '${cwd}'), or start in a folder of yours (--cwd <dir>)`,
    );
}

/** Builds a session from the options; `log` receives setup warnings. */
export async function createSession(
  options: CliOptions,
  settings: {
    mode: PermissionMode;
    approver: PermissionApprover | undefined;
    log: (line: string) => void;
    /** MCP servers' requests (elicitation, sampling, roots, logs): asked on the terminal. */
    mcpInteractions?: McpInteractions;
    /** Asked when an MCP server's tools changed since first used (the REPL); absent: left out. */
    confirmMcpToolChanges?: McpToolChangeQuestion;
    /** Asks the user to approve a plan (plan mode); absent (`-p`): the plan is printed with `printPlan` and the run ends. */
    planApprover?: PlanApprover;
    printPlan?: (plan: string) => void;
  },
): Promise<Session> {
  const saved: SavedSession =
    options.resume === undefined
      ? { messages: [], grants: [] }
      : await loadSavedSession(options.resume);
  // "never" grants only narrow what runs: always kept. "always" grants only when asked to.
  const grants = saved.grants.filter(
    (grant) => grant.decision === 'deny' || options.keepGrants === true,
  );
  // Not restored, but not forgotten: written back with the session, for a later --keep-grants.
  const notRestored = saved.grants.filter((grant) => !grants.includes(grant));
  const dropped = notRestored.length;
  if (dropped > 0)
    settings.log(
      `${dropped} "always" grant${dropped === 1 ? '' : 's'} saved with this session ${dropped === 1 ? 'was' : 'were'} not restored (--keep-grants, or "permissions": { "keepGrants": true } in settings, restores them)`,
    );
  // A session saved while planning (no plan approved) goes on planning, unless --mode says
  // otherwise: a settings default such as workspace-write took over on --continue, and the model,
  // told by exit_plan_mode that no approval was needed any more, carried out a plan no one approved.
  const resumedPlanning = options.modeExplicit !== true && saved.planning === true;
  if (resumedPlanning && settings.mode !== 'plan')
    settings.log(
      'This session was in plan mode (no plan approved yet): it goes on in plan mode. /mode (or --mode) leaves it.',
    );
  let policy: PermissionPolicy;
  try {
    policy = new PermissionPolicy({
      mode: resumedPlanning ? 'plan' : settings.mode,
      allow: options.allow,
      ask: options.ask,
      deny: options.deny,
      grants,
      // File tools' subjects are real paths: relative path rules resolve against the real root.
      workspaceRoot: await realpath(resolve(options.cwd)).catch(() => resolve(options.cwd)),
      // `~/` in Claude Code's path rules (`Read(~/.ssh/**)`).
      homeDirectory: homedir(),
      ...(settings.approver === undefined ? {} : { approver: settings.approver }),
    });
  } catch (error) {
    // An invalid rule is a mistake on the command line.
    if (AgentError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
  await checkWorkspace(resolve(options.cwd));
  // Where the project's configuration lives (its git root…); the tools stay in the workspace.
  const projectRoot = options.projectRoot ?? resolve(options.cwd);
  const model = await chooseProvider(options);
  const messages = saved.messages;
  const tools = await loadTools(
    {
      ...options,
      hiddenPaths: () => policy.pathsToHide('read'),
      readOnlyPaths: () => policy.pathsToHide('write'),
      ...sandboxPatterns(policy),
      beforeMcpServers: (builtIns) => policy.setTools(builtIns),
      ...(settings.mcpInteractions === undefined
        ? {}
        : { mcpInteractions: settings.mcpInteractions }),
      ...(settings.confirmMcpToolChanges === undefined
        ? {}
        : { confirmMcpToolChanges: settings.confirmMcpToolChanges }),
    },
    settings.log,
  );
  // The session, once it exists (below): tools reach it through this.
  let sessionRef: Session | undefined;
  // Checkpoints of what the file tools change (sub-agents' calls too), kept with the session's id.
  // The id chooseSession gave: the file's own, or a new one when another process holds that.
  const sessionId = options.sessionId ?? saved.sessionId ?? randomUUID();
  const checkpoints = await CheckpointStore.open({
    dir: checkpointsDir(sessionId),
    workspace: resolve(options.cwd),
    log: settings.log,
  });
  tools.tools.splice(
    0,
    tools.tools.length,
    ...withCheckpoints(tools.tools, () => ({
      store: sessionRef?.checkpoints ?? checkpoints,
      messages: sessionRef?.agent.messages ?? [],
    })),
  );
  // The session's settings as tools; they reach the session once it exists (below).
  const configTools = createConfigTools(() => {
    if (sessionRef === undefined) throw new Error('The session is not ready');
    return sessionRef;
  });
  let agents: AgentDefinition[];
  try {
    const defined = await loadAgentDefinitions(projectRoot, {
      log: settings.log,
      trusted: options.workspaceTrusted !== false,
    });
    // `--tools` / "tools" choose sub-agents as `agent__<name>` (`default` has them all).
    reportUnmatched(
      tools.choice,
      'agent',
      new Map(defined.map((definition) => [definition.name, []])),
      settings.log,
    );
    agents = defined.filter((definition) =>
      tools.choice.hasFamilyTool('agent', definition.name, definition.name),
    );
    const agentTools = await createAgentTools(agents, {
      available: tools.tools,
      provider: model.provider,
      model: model.model,
      providerFor: async (name) =>
        options.scripted === undefined
          ? (await chooseProvider({ ...options, model: name })).provider
          : model.provider,
      log: settings.log,
      // The names of the tools the session adds below (and core's tool_search).
      reserved: [
        'tool_search',
        'exit_plan_mode',
        codeModeToolName,
        ...configTools.flatMap((tool) => [tool.name, ...(tool.aliases ?? [])]),
      ],
    });
    tools.tools.push(...agentTools);
    // An agent file left out (its name is a tool's) is not listed by /agents either.
    const offered = new Set(agentTools.map((tool) => tool.name));
    agents = agents.filter((definition) => offered.has(definition.name));
  } catch (error) {
    await tools.close();
    throw error;
  }
  if (agents.length > 0) tools.sources.push(`agents (${agents.length})`);
  // Plan mode ends with a plan the user approves (or, in -p, that is printed). Left out by the
  // tools lists, plan mode is left with /mode instead.
  if (tools.choice.has('exit_plan_mode')) {
    tools.tools.push(
      createExitPlanModeTool({
        policy: () => sessionRef?.policy ?? policy,
        ...(settings.planApprover === undefined ? {} : { approve: settings.planApprover }),
        ...(settings.printPlan === undefined ? {} : { print: settings.printPlan }),
      }),
    );
    tools.sources.push('plan mode (1): exit_plan_mode');
  }
  const chosenConfigTools = configTools.filter((tool) => tools.choice.has(tool.name));
  tools.tools.push(...chosenConfigTools);
  if (chosenConfigTools.length > 0)
    tools.sources.push(
      `settings (${chosenConfigTools.length}): ${chosenConfigTools.map((tool) => tool.name).join(', ')}`,
    );
  // run_script comes with code mode, and only when the tools list keeps it.
  const codeModeOff = options.codeMode === undefined || options.codeMode === false;
  if (!codeModeOff && !tools.choice.has(codeModeToolName))
    settings.log(`tools: code mode is on, but the tools list leaves out ${codeModeToolName}`);
  else if (codeModeOff && tools.choice.namedTools().includes(codeModeToolName))
    settings.log(
      `tools: ${codeModeToolName} is not available here (it comes with --code-mode or "codeMode" in your settings)`,
    );
  let codeMode: Awaited<ReturnType<typeof sessionCodeModeTool>>;
  try {
    codeMode = tools.choice.has(codeModeToolName)
      ? await sessionCodeModeTool(tools.tools, options.codeMode, settings.log)
      : undefined;
  } catch (error) {
    await tools.close();
    throw error;
  }
  if (codeMode !== undefined) {
    tools.tools.push(codeMode.tool);
    tools.sources.push(`code mode: run_script calls ${codeMode.callable.length} tools`);
  }
  // Path rules cover every reader (or writer) of the session; a rule that can never match says so.
  policy.setTools(tools.tools);
  const unmatchable = policy.unmatchableRules();
  const everyTool = options.tools === undefined || options.tools.length === 0;
  const typo = denyTypoRefusal(unmatchable, options.denyFlags, everyTool);
  if (typo !== undefined) {
    await tools.close();
    throw new CliError(typo);
  }
  for (const problem of unmatchable) settings.log(`warning: ${problem}`);
  // A resumed session keeps its id, so `--resume <id>` finds it again.
  const id = sessionId;
  // In a folder the user has not trusted, the user's own hooks run contained (session-hooks.ts).
  const hooks = createSessionHooks(options, { id, projectRoot, log: settings.log });
  const { commandHooks, sandbox: hooksSandbox } = hooks;
  let agent: Agent;
  // Every step of every run on disk before the run moves on; --continue resumes what it holds.
  // A session that cannot be kept (no writable $AGENT_HOME: said at start) has nothing to resume into.
  const journal =
    options.save === undefined ? SessionJournal.off() : await SessionJournal.open(id, settings.log);
  let agentOptions: AgentOptions;
  try {
    const startContext =
      commandHooks === undefined
        ? ''
        : await commandHooks.sessionStart(options.resume === undefined ? 'startup' : 'resume');
    agentOptions = {
      provider: model.provider,
      model: model.model,
      systemPrompt: [
        options.systemPrompt ?? defaultSystemPrompt(resolve(options.cwd)),
        // Read by the CLI itself, unasked, and sent with every request: redacted as a tool's
        // result is (a project's AGENTS.md may be a link to the `.env` you fill in).
        redactToolText(
          await agentsInstructions(
            { cwd: options.cwd, root: projectRoot },
            undefined,
            settings.log,
          ),
        ),
        // A SessionStart hook's output is the hooks', not the user's: redacted as results are.
        redactToolText(startContext),
      ]
        .filter((part) => part !== '')
        .join('\n\n'),
      tools: tools.tools,
      messages,
      ...(saved.compactions === undefined ? {} : { compactions: saved.compactions }),
      ...(options.compaction === undefined ? {} : { compaction: options.compaction }),
      permissionGate: redactingGate(
        commandHooks === undefined ? policy.gate : commandHooks.wrapGate(policy.gate),
      ),
      ...(journal.active ? { journal } : {}),
      isPathDenied: policy.isPathDenied,
      hooks: redactingHooks(commandHooks?.agentHooks),
      ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
      budget: runTreeBudget(options),
      ...(options.hostedWebSearch === true
        ? { hostedTools: [{ type: 'web_search' as const }] }
        : {}),
      toolSearch: {
        loadData: loadToolSearchData,
        onLoadError: (error) =>
          settings.log(
            `tool_search searches by keywords alone: its learned data did not load (${errorMessage(error)}).`,
          ),
      },
    };
    agent = new Agent(agentOptions);
    // What a call changed of a hook's files is on disk before the next call: a SIGKILL loses nothing.
    agent.subscribe((event) => {
      if (event.type === 'tool-execution-end') hooks.recordChangesSoFar();
    });
  } catch (error) {
    await tools.close();
    await hooksSandbox?.close();
    // A bad "compactions" list is a mistake in the file being resumed: say which.
    const where = options.resume === undefined ? '' : `${options.resume}: `;
    throw new CliError(`${where}${errorMessage(error)}`);
  }
  const deferred = agent.deferredTools;
  if (deferred.automatic && deferred.pending.length > 0) {
    settings.log(
      `${deferred.pending.length} tools are deferred (too many to send them all): the model finds and loads them with tool_search.`,
    );
  }
  const session: Session = {
    agent,
    policy,
    tools,
    model,
    rules: { allow: options.allow, ask: options.ask, deny: options.deny },
    usage: { input: 0, output: 0, cacheRead: 0, cost: undefined, runs: 0 },
    commandHooks,
    hooksSandbox: hooks.description,
    id,
    agents,
    cwd: resolve(options.cwd),
    projectRoot,
    close: async () => {
      await tools.close();
      hooks.recordChanges();
      await hooksSandbox?.close();
      await journal.close();
    },
    pendingModel: undefined,
    journal,
    checkpoints,
    runsToResume: options.resume === undefined ? [] : journal.runsToResume(saved.lastRunId),
    lastRunId: saved.lastRunId,
    saveBeforeRun: (path) =>
      saveConversation(session.agent, path, {
        grants: [...notRestored, ...session.policy.grants],
        sessionId: id,
        ...(session.lastRunId === undefined ? {} : { lastRunId: session.lastRunId }),
        mode: session.policy.mode,
      }),
    save: async (path) => {
      await session.saveBeforeRun(path);
      // The file holds every run now: the journal need not.
      await journal.saved();
    },
    replaceAgent: (change) => {
      // Messages queued for the next run go with the conversation to the new agent.
      const queued = session.agent.takeQueuedMessages();
      const next = {
        ...agentOptions,
        ...(change.model === undefined
          ? {}
          : { provider: change.model.provider, model: change.model.model }),
        messages: change.messages ?? [...session.agent.messages],
        // Other messages bring their own compactions (none unless given); the same ones keep theirs.
        compactions:
          change.messages === undefined
            ? [...session.agent.compactions]
            : (change.compactions ?? []),
      };
      session.agent = new Agent(next);
      for (const message of queued) session.agent.steer(message);
      agentOptions = next;
      if (change.model !== undefined) session.model = change.model;
    },
    chooseModel: async (name) =>
      options.scripted === undefined
        ? await chooseProvider({ ...options, model: name })
        : { ...model, model: name, label: `${model.label} as ${name}` },
  };
  sessionRef = session;
  // Sampling requests run on the session's model, as it is when they arrive.
  settings.mcpInteractions?.useModel(() => session.model);
  return session;
}

/** How many times in a row Stop hooks may send the agent back to work. */
const maxStopContinuations = 5;

/**
 * Runs one prompt, printing the transcript; `onStart` receives the function that aborts this run.
 * With command hooks: UserPromptSubmit may block the prompt (the result is then `undefined` and
 * `onNotice` says why) or add context; Stop hooks may send the agent on with their reason.
 */
export async function runPrompt(
  session: Session,
  prompt: string | { resume: string },
  transcript: EventSink,
  hooks: {
    onStart?: (abort: () => void) => void;
    onNotice?: (line: string) => void;
    /** The session file: written before the run if it does not exist yet, so `--continue` finds a run a crash cuts off. */
    savePath?: string | undefined;
  } = {},
): Promise<AgentRunResult | undefined> {
  const commandHooks = session.commandHooks;
  if (hooks.savePath !== undefined && session.journal.active && !existsSync(hooks.savePath))
    await session.saveBeforeRun(hooks.savePath);
  // A run a crash cut off goes on from its journal (its prompt was submitted when it began).
  let resume = typeof prompt === 'string' ? undefined : prompt.resume;
  let text = typeof prompt === 'string' ? prompt : '';
  if (resume !== undefined)
    hooks.onNotice?.(
      'Resuming the run a crash cut off: finished steps come from the journal; a call that was running then is reported to the model as interrupted.',
    );
  if (resume === undefined && commandHooks?.has('UserPromptSubmit')) {
    const submitted = await commandHooks.userPromptSubmit(text);
    for (const message of submitted.messages) hooks.onNotice?.(message);
    if ('blocked' in submitted) {
      hooks.onNotice?.(`Prompt blocked by a UserPromptSubmit hook: ${submitted.blocked}`);
      return undefined;
    }
    text = redactAddedContext(text, submitted.prompt);
  }
  // In plan mode the prompt says so first: the model knows what it may do and how to finish.
  if (resume === undefined) text = promptInMode(text, session.policy.mode);
  const unsubscribe = session.agent.subscribe((event) => transcript.onEvent(event));
  try {
    let result: AgentRunResult;
    let continuations = 0;
    for (;;) {
      const run =
        resume === undefined
          ? session.agent.run(text)
          : session.agent.run(undefined, { runId: resume });
      resume = undefined;
      hooks.onStart?.(() => run.abort(new Error('Interrupted by the user')));
      result = await run.result;
      session.lastRunId = result.runId;
      session.runsToResume = session.runsToResume.filter((runId) => runId !== result.runId);
      const usage = result.treeUsage;
      session.usage.input += usage.input;
      session.usage.output += usage.output;
      session.usage.cacheRead += usage.cacheRead;
      if (usage.cost !== undefined)
        session.usage.cost = (session.usage.cost ?? 0) + usage.cost.total;
      session.usage.runs += 1;
      if (result.stopReason !== 'completed' || !commandHooks?.has('Stop')) break;
      const stop = await commandHooks.stop(continuations > 0);
      for (const message of stop.messages) hooks.onNotice?.(message);
      if (stop.continueWith === undefined || continuations >= maxStopContinuations) break;
      continuations += 1;
      hooks.onNotice?.(`A Stop hook sends the agent on: ${stop.continueWith}`);
      text = `A Stop hook did not let you finish yet: ${redactToolText(stop.continueWith)}`;
    }
    return result;
  } finally {
    unsubscribe();
    // A model chosen by config_set during the run: the conversation goes on with it.
    const next = session.pendingModel;
    if (next !== undefined) {
      session.pendingModel = undefined;
      session.replaceAgent({ model: next });
      hooks.onNotice?.(`model: ${next.model} (chosen with config_set; the conversation goes on)`);
    }
  }
}
