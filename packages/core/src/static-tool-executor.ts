/**
 * A one-line way to run tools by name without a model: register closures (or whole tools), then
 * `await executor.execute('add', { a: 1, b: 2 })` gives the result as a string. For tests and for
 * embedding tools in a program that is not an agent. Every call goes through the loop's own path
 * (`executeTool`): `prepareArguments`, validation, the permission gate and hooks when given,
 * timeout, resource locks.
 */
import { ToolError } from './errors.js';
import { type ExecuteToolOptions, executeTool } from './execute-tool.js';
import type { JsonSchemaObject } from './json-schema.js';
import { type ToolResultMessage, toolResultText } from './messages.js';
import type { AnyAgentTool, ToolContext, ToolPolicy, ToolResult } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

/** A registered closure: gets the (validated) arguments; a string becomes a text result. */
export type StaticToolHandler = (
  input: unknown,
  ctx: ToolContext,
) => string | ToolResult | Promise<string | ToolResult>;

/** Options of {@link StaticToolExecutor.register} for a closure. */
export interface StaticToolOptions {
  /** What the tool does [the name]. */
  description?: string;
  /** JSON Schema the arguments are validated against [any object]. */
  parameters?: JsonSchemaObject;
  /** Other names that reach it. */
  aliases?: readonly string[];
  /** Scheduling, limits and permission tier. */
  policy?: ToolPolicy;
}

/**
 * Tools by name → `execute(name, input)` → `Promise<string>`. `input` is a value or the raw JSON
 * text a model would send. A call that fails (unknown name, invalid arguments, a thrown error,
 * an `isError` result, a denial) rejects with a `ToolError` whose `kind` says why and whose
 * message is what the model would have read; {@link executeResult} gives the whole result instead.
 */
export class StaticToolExecutor {
  readonly #registry = new ToolRegistry();
  readonly #options: ExecuteToolOptions;
  #calls = 0;

  /** `options` apply to every call (permission gate, hooks, timeout, signal, events). */
  constructor(options: ExecuteToolOptions = {}) {
    this.#options = options;
  }

  /**
   * Registers a closure under `name`, or an `AgentTool` (under its own name and aliases; `name`
   * must then equal the tool's name). Throws when the name is taken or not a valid wire name.
   */
  register(name: string, handler: StaticToolHandler, options?: StaticToolOptions): this;
  register(tool: AnyAgentTool): this;
  register(
    nameOrTool: string | AnyAgentTool,
    handler?: StaticToolHandler,
    options: StaticToolOptions = {},
  ): this {
    if (typeof nameOrTool !== 'string') {
      this.#registry.register(nameOrTool);
      return this;
    }
    if (handler === undefined) throw new TypeError(`register("${nameOrTool}"): no handler given`);
    const tool: AnyAgentTool = {
      name: nameOrTool,
      description: options.description ?? nameOrTool,
      parameters: options.parameters ?? { type: 'object' },
      execute: async (args, ctx) => {
        const returned = await handler(args, ctx);
        return typeof returned === 'string'
          ? { content: [{ type: 'text', text: returned }] }
          : returned;
      },
    };
    if (options.aliases !== undefined) tool.aliases = options.aliases;
    if (options.policy !== undefined) tool.policy = options.policy;
    this.#registry.register(tool);
    return this;
  }

  /** Canonical names of the registered tools, in registration order. */
  names(): string[] {
    return this.#registry.list().map((tool) => tool.name);
  }

  /** Runs `name` (or an alias) and resolves with its result as text; rejects on any failure. */
  async execute(name: string, input: unknown = {}): Promise<string> {
    const result = await this.executeResult(name, input);
    const text = toolResultText(result.content);
    if (result.isError)
      throw new ToolError(text, { kind: result.errorKind ?? 'failed', toolName: result.toolName });
    return text;
  }

  /** Runs `name` (or an alias) and resolves with the whole result message; never rejects. */
  async executeResult(name: string, input: unknown = {}): Promise<ToolResultMessage> {
    const toolCallId = `call_${++this.#calls}`;
    const tool = this.#registry.get(name);
    if (tool === undefined) {
      const error = ToolError.notFound(name, this.names());
      return {
        role: 'toolResult',
        toolCallId,
        toolName: name,
        content: [{ type: 'text', text: error.message }],
        isError: true,
        errorKind: 'not-found',
        timestamp: Date.now(),
      };
    }
    return executeTool(tool, input, { ...this.#options, toolCallId });
  }
}
