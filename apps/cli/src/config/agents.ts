/**
 * Sub-agents defined as Markdown files with YAML front matter, in `$AGENT_HOME/agents/` (the
 * user's) and `.agent/agents/` (the project's, winning by name), offered to the model as
 * `@agent/subagent` tools:
 *
 * ```markdown
 * ---
 * name: reviewer
 * description: Reviews a diff for bugs; give it the paths to look at.
 * tools: read_file, grep, glob
 * model: claude-haiku-4-5
 * ---
 * You are a careful code reviewer. …
 * ```
 */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type AnyAgentTool, errorMessage, type Provider } from '@agent/core';
import { realFolder } from '@agent/workspace-trust';
import { redactToolText } from '../ui/redaction.js';
import { agentHome } from './agent-home.js';
import { CliError } from './cli-error.js';
import { readProjectFile, readSettingsText } from './project-file.js';

/** One agent file, checked. */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Tool names it may use; `undefined` for all of the session's tools (sub-agents excepted). */
  tools: string[] | undefined;
  /** A model name, or `undefined` to use the session's. */
  model: string | undefined;
  /** The Markdown body: the agent's system prompt. */
  prompt: string;
  /** The file it came from. */
  path: string;
}

const namePattern = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * Most agent files read from a project, and most characters of them in all: each is read whole
 * and its body kept as a system prompt, and a repository's thousands of 1 MiB files (a few kB of
 * git objects, compressed) were all read and kept at every start — gigabytes of memory.
 */
export const maximumProjectAgentFiles = 200;
/** Most characters of a project's agent files in all (see {@link maximumProjectAgentFiles}). */
export const maximumProjectAgentBytes = 8 * 1024 * 1024;
/**
 * Largest front matter parsed (four short keys fit many times over): yaml compares keys pairwise,
 * and a repository's agent file of 60,000 keys (600 kB) held the CLI's start for 43 s.
 */
export const maxFrontMatterChars = 16 * 1024;
const knownKeys = ['name', 'description', 'tools', 'model'];
/** Keys other tools' agent files carry that mean nothing here; ignored rather than refused. */
const ignoredKeys = ['color'];

/** Parses one agent file (front matter with the `yaml` package; the body is the system prompt). */
export async function parseAgentFile(path: string, text: string): Promise<AgentDefinition> {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (match === null)
    throw new CliError(`${path}: an agent file starts with front matter between --- lines`);
  const frontMatter = match[1] ?? '';
  if (frontMatter.length > maxFrontMatterChars)
    throw new CliError(
      `${path}: the front matter is ${frontMatter.length} characters (at most ${maxFrontMatterChars})`,
    );
  const { parse } = await import('./yaml.js');
  let data: unknown;
  try {
    // Errors only: yaml's warnings (an unknown tag) quote the file's line on stderr.
    data = parse(frontMatter, { logLevel: 'error' });
  } catch (error) {
    // yaml's message goes on with lines of the file and a caret: the first line says what is wrong.
    const reason = (error as Error).message.split('\n')[0] ?? '';
    throw new CliError(`${path}: the front matter is not valid YAML: ${reason}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new CliError(`${path}: the front matter must be a mapping (name, description, …)`);
  const record = data as Record<string, unknown>;
  for (const key of Object.keys(record))
    if (!knownKeys.includes(key) && !ignoredKeys.includes(key))
      throw new CliError(`${path}: unknown key "${key}" (known: ${knownKeys.join(', ')})`);
  const { name, description, tools, model } = record;
  if (typeof name !== 'string' || !namePattern.test(name))
    throw new CliError(`${path}: "name" must be letters, digits, _ or - (at most 64)`);
  if (typeof description !== 'string' || description.trim() === '')
    throw new CliError(`${path}: "description" must say what the agent is for`);
  let toolList: string[] | undefined;
  if (typeof tools === 'string')
    toolList = tools
      .split(',')
      .map((tool) => tool.trim())
      .filter((tool) => tool !== '');
  else if (Array.isArray(tools) && tools.every((tool) => typeof tool === 'string'))
    toolList = tools as string[];
  else if (tools !== undefined && tools !== null)
    throw new CliError(`${path}: "tools" must be a list of tool names or a comma-separated string`);
  if (model !== undefined && typeof model !== 'string')
    throw new CliError(`${path}: "model" must be a string`);
  return {
    name,
    description: description.trim(),
    tools: toolList,
    model: model === undefined || model === 'inherit' ? undefined : model,
    prompt: (match[2] ?? '').trim(),
    path,
  };
}

async function markdownFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir))
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => join(dir, file));
  } catch {
    return [];
  }
}

/** Options of {@link loadAgentDefinitions}. */
export interface LoadAgentsOptions {
  /** [$AGENT_HOME] */
  home?: string;
  /** Told about project agent files left out, or what of them is ignored [nothing]. */
  log?: (line: string) => void;
  /**
   * Whether the project's configuration is trusted [true]. Not trusted: a project agent's
   * `model` is ignored (it runs on the session's), as the project's own `model` setting is, and
   * one named like the user's own agent is left out (the user's stays).
   */
  trusted?: boolean;
}

/**
 * The agents of the user and of the project `cwd` (its root; the project's win by name), sorted
 * by name. A project's agent file is read only when it is a regular file inside the project (its
 * body becomes a system prompt: a link out of the project would hand the model what it points
 * to); one that is not is left out, with a line to `log`.
 */
export async function loadAgentDefinitions(
  cwd: string,
  options: LoadAgentsOptions = {},
): Promise<AgentDefinition[]> {
  const { home = agentHome(), log = () => undefined, trusted = true } = options;
  const byName = new Map<string, AgentDefinition>();
  for (const path of await markdownFiles(join(home, 'agents'))) {
    const text = await readSettingsText(path).catch((error: unknown) => {
      log(`agent: ${errorMessage(error)}; it is not used`);
      return undefined;
    });
    if (text === undefined) continue;
    const definition = await parseAgentFile(path, text);
    byName.set(definition.name, definition);
  }
  const root = realFolder(resolve(cwd));
  const folder = join(root, '.agent', 'agents');
  const files = await markdownFiles(folder);
  if (files.length > maximumProjectAgentFiles)
    log(
      `agent: ${files.length - maximumProjectAgentFiles} of the ${files.length} agent files in ${folder} are not used (at most ${maximumProjectAgentFiles}, by name)`,
    );
  let bytes = 0;
  for (const [index, path] of files.slice(0, maximumProjectAgentFiles).entries()) {
    const found = await readProjectFile(path, root);
    if (found.kind === 'refused') log(`agent: ${path} is not used: ${found.reason}`);
    if (found.kind !== 'read') continue;
    bytes += found.text.length;
    if (bytes > maximumProjectAgentBytes) {
      log(
        `agent: ${path} and the ${files.slice(0, maximumProjectAgentFiles).length - index - 1} agent files after it in ${folder} are not used: together they are over ${maximumProjectAgentBytes} characters`,
      );
      break;
    }
    // A repository's broken (or hostile: an alias bomb, an unknown key) agent file is left out
    // with the reason, as a malformed skill is: it must not stop the CLI from starting there.
    let definition: AgentDefinition;
    try {
      definition = await parseAgentFile(path, found.text);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      log(`agent: ${error.message}; it is not used`);
      continue;
    }
    if (!trusted && byName.has(definition.name)) {
      // Untrusted configuration may narrow, never replace: the user's own agent of that name stays.
      log(
        `agent: ${path} is not used: this folder is not trusted, and your own agent "${definition.name}" has that name`,
      );
      continue;
    }
    if (!trusted && definition.model !== undefined) {
      log(
        `agent: ${path} chooses the model ${definition.model}; ignored, as this folder is not trusted (it uses the session's)`,
      );
      definition.model = undefined;
    }
    byName.set(definition.name, definition);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The sub-agent tools of the definitions, each with its tools picked from `available`. */
export async function createAgentTools(
  definitions: readonly AgentDefinition[],
  context: {
    available: readonly AnyAgentTool[];
    provider: Provider;
    model: string;
    /** The provider for a definition's own model (the session's for scripted runs). */
    providerFor: (model: string) => Promise<Provider>;
    /** Told about tool names a definition lists that the session does not have (they are skipped). */
    log: (line: string) => void;
    /** Names the session's own tools take besides `available` (tool_search, exit_plan_mode, …). */
    reserved?: readonly string[];
  },
): Promise<AnyAgentTool[]> {
  if (definitions.length === 0) return [];
  const { createSubAgentTool } = await import('@agent/subagent');
  // Other agents' names for the same tools (Read, Grep…) are the built-ins' aliases.
  const byName = new Map<string, AnyAgentTool>();
  for (const tool of context.available)
    for (const name of [tool.name, ...(tool.aliases ?? [])])
      if (!byName.has(name)) byName.set(name, tool);
  // An agent file named after a tool would stop the session from starting (two tools of one
  // name), or — for a name the session adds later, such as tool_search — stand in for that tool
  // with a prompt the file wrote. Case is ignored: `Bash` beside `bash` reads as the same tool.
  const taken = new Set(
    [...byName.keys(), ...(context.reserved ?? [])].map((name) => name.toLowerCase()),
  );
  const tools: AnyAgentTool[] = [];
  for (const definition of definitions) {
    if (taken.has(definition.name.toLowerCase())) {
      context.log(
        `agent: ${definition.path} is not used: its name "${definition.name}" is a tool's name in this session`,
      );
      continue;
    }
    let childTools: AnyAgentTool[];
    if (definition.tools === undefined) childTools = [...context.available];
    else {
      childTools = [];
      for (const name of definition.tools) {
        const tool = byName.get(name);
        if (tool === undefined)
          context.log(
            `${definition.path}: no tool "${name}" in this session (it has ${context.available.map((t) => t.name).join(', ')}); skipped`,
          );
        else if (!childTools.includes(tool)) childTools.push(tool);
      }
    }
    // use_aws runs its command as a call of bash: an agent without bash gets no use_aws either.
    const names = new Set(childTools.map((tool) => tool.name));
    if (names.has('use_aws') && !names.has('bash')) {
      childTools = childTools.filter((tool) => tool.name !== 'use_aws');
      context.log(
        `${definition.path}: use_aws left out (it runs its aws command as a bash call, and the agent's tools leave out bash)`,
      );
    }
    taken.add(definition.name.toLowerCase());
    tools.push(
      createSubAgentTool({
        name: definition.name,
        // A project's file, read unasked: redacted as a tool's result is (the model reads both).
        description: redactToolText(definition.description),
        provider:
          definition.model === undefined
            ? context.provider
            : await context.providerFor(definition.model),
        model: definition.model ?? context.model,
        ...(definition.prompt === '' ? {} : { systemPrompt: redactToolText(definition.prompt) }),
        tools: childTools,
        // Starting the agent does nothing by itself; each of its calls goes through the session's
        // permission gate (the parent's gate always applies to a child), so it is not asked twice.
        policy: { permission: 'read-only' },
      }),
    );
  }
  return tools;
}
