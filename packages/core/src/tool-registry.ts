import { AgentError } from './errors.js';
import {
  type AnyAgentTool,
  type ToolDefinition,
  toolNamePattern,
  toToolDefinition,
} from './tool.js';

/**
 * Tools by wire name and alias. Registering a name or alias twice is an error.
 * `select` filters by availability patterns: `*`, `prefix*`, `name`, `@source`, `@source/tool`,
 * and `!pattern` to exclude.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyAgentTool>();
  readonly #byWireName = new Map<string, AnyAgentTool>();
  #version = 0;

  constructor(tools: Iterable<AnyAgentTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws when its name or an alias is taken or malformed. */
  register(tool: AnyAgentTool): this {
    const names = [tool.name, ...(tool.aliases ?? [])];
    for (const name of names) {
      if (!toolNamePattern.test(name)) {
        throw new AgentError(`Invalid tool name "${name}": must match ${toolNamePattern}`);
      }
      const existing = this.#byWireName.get(name);
      if (existing !== undefined) {
        throw new AgentError(
          `Duplicate tool name "${name}": already used by tool "${existing.name}"${existing.source ? ` from ${existing.source}` : ''}`,
        );
      }
    }
    if (new Set(names).size !== names.length) {
      throw new AgentError(
        `Tool "${tool.name}" lists the same name twice among its name and aliases`,
      );
    }
    this.#tools.set(tool.name, tool);
    for (const name of names) this.#byWireName.set(name, tool);
    this.#version++;
    return this;
  }

  /** Removes a tool and its aliases; returns whether it was there. */
  unregister(name: string): boolean {
    const tool = this.#tools.get(name);
    if (tool === undefined) return false;
    this.#tools.delete(name);
    for (const wireName of [tool.name, ...(tool.aliases ?? [])]) this.#byWireName.delete(wireName);
    this.#version++;
    return true;
  }

  /** The tool a wire name or alias resolves to. */
  get(nameOrAlias: string): AnyAgentTool | undefined {
    return this.#byWireName.get(nameOrAlias);
  }

  /** Whether a wire name or alias resolves to a tool. */
  has(nameOrAlias: string): boolean {
    return this.#byWireName.has(nameOrAlias);
  }

  /** Every tool, in registration order. */
  list(): AnyAgentTool[] {
    return [...this.#tools.values()];
  }

  /** Canonical names, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Increases on every change, so callers can cache what they derive from the tools. */
  get version(): number {
    return this.#version;
  }

  /** Number of tools (aliases not counted). */
  get size(): number {
    return this.#tools.size;
  }

  /** The provider-facing definitions of every tool. */
  definitions(): ToolDefinition[] {
    return this.list().map(toToolDefinition);
  }

  /** A new registry with the tools that match the patterns (see the class doc). */
  select(patterns: readonly string[]): ToolRegistry {
    const include = patterns.filter((pattern) => !pattern.startsWith('!'));
    const exclude = patterns
      .filter((pattern) => pattern.startsWith('!'))
      .map((pattern) => pattern.slice(1));
    return new ToolRegistry(
      this.list().filter(
        (tool) =>
          include.some((pattern) => matchesToolPattern(tool, pattern)) &&
          !exclude.some((pattern) => matchesToolPattern(tool, pattern)),
      ),
    );
  }
}

/**
 * Whether a tool matches one availability pattern (`*`, `prefix*`, `name`, `@source`,
 * `@source/tool`); a source ending in `*` is a prefix (`@mcp:*` is every MCP server's tools).
 */
export function matchesToolPattern(
  tool: Pick<AnyAgentTool, 'name' | 'source'>,
  pattern: string,
): boolean {
  if (pattern.startsWith('@')) {
    const body = pattern.slice(1);
    const slash = body.indexOf('/');
    const source = slash === -1 ? body : body.slice(0, slash);
    const sourceMatches = source.endsWith('*')
      ? tool.source?.startsWith(source.slice(0, -1)) === true
      : tool.source === source;
    if (!sourceMatches) return false;
    return slash === -1 ? true : matchesNamePattern(tool.name, body.slice(slash + 1));
  }
  return matchesNamePattern(tool.name, pattern);
}

function matchesNamePattern(name: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  return name === pattern;
}
