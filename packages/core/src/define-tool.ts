import * as z from 'zod';
import { AgentError } from './errors.js';
import { inlineJsonSchema, type JsonSchema, type JsonSchemaObject } from './json-schema.js';
import {
  type AgentTool,
  type PermissionSubjectsResult,
  type ToolContext,
  type ToolPolicy,
  type ToolResult,
  toolNamePattern,
  type ValidationIssue,
  type ValidationResult,
} from './tool.js';
import { unknownKeyIssues } from './unknown-keys.js';
import { describeReceived, typeMismatchHint } from './validation.js';

/** Configuration of a tool written with zod schemas. */
export interface DefineToolConfig<TInput extends z.ZodType, TDetails> {
  /** Wire name, `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  /** Human label for UIs; defaults to the name. */
  label?: string;
  /** What the tool does, for the model. */
  description: string;
  /** Schema of the arguments; must describe an object. */
  input: TInput;
  /** Schema of `details` in the result; checked after every call when given. */
  output?: z.ZodType<TDetails>;
  /** Other wire names that resolve to this tool. */
  aliases?: readonly string[];
  /** Origin for availability patterns (`@source`). */
  source?: string;
  /** Scheduling, limits and permission tier. */
  policy?: ToolPolicy<z.output<TInput>>;
  /** Pure normalisation of the parsed JSON arguments before validation. */
  prepareArguments?: (raw: unknown) => unknown;
  /** The permission subjects these arguments touch. */
  permissionSubjects?: (
    args: z.output<TInput>,
  ) => PermissionSubjectsResult | Promise<PermissionSubjectsResult>;
  /** Runs the tool; a returned string becomes a text result. */
  execute: (args: z.output<TInput>, ctx: ToolContext) => Promise<ToolResult<TDetails> | string>;
}

/** An `AgentTool` made by `defineTool`, with its zod schemas kept for reuse. */
export interface DefinedTool<TArgs, TDetails> extends AgentTool<TArgs, TDetails> {
  /** The zod schema of the arguments. */
  inputSchema: z.ZodType<TArgs>;
}

/**
 * Defines a tool from zod v4 schemas. The JSON Schema sent to providers is generated from
 * `input` with every sub-schema inlined; validation errors name the bad field's path and
 * what was received, with a hint for common mistakes.
 */
export function defineTool<TInput extends z.ZodType, TDetails = unknown>(
  config: DefineToolConfig<TInput, TDetails>,
): DefinedTool<z.output<TInput>, TDetails> {
  if (!toolNamePattern.test(config.name)) {
    throw new AgentError(`Invalid tool name "${config.name}": must match ${toolNamePattern}`);
  }
  for (const alias of config.aliases ?? []) {
    if (!toolNamePattern.test(alias)) {
      throw new AgentError(
        `Invalid alias "${alias}" of tool "${config.name}": must match ${toolNamePattern}`,
      );
    }
  }
  const parameters = zodToJsonSchema(config.input);
  if (parameters.type !== 'object') {
    throw new AgentError(
      `Tool "${config.name}": input schema must describe an object, got ${String(parameters.type)}`,
    );
  }
  const input = config.input;
  const output = config.output;
  const tool: DefinedTool<z.output<TInput>, TDetails> = {
    name: config.name,
    label: config.label ?? config.name,
    description: config.description,
    parameters: parameters as JsonSchemaObject,
    inputSchema: input as z.ZodType<z.output<TInput>>,
    validate: (args) => validateWithZod(input, args) as ValidationResult<z.output<TInput>>,
    // One `.then` instead of an async wrapper: a promise hop less on every call.
    execute: (args, ctx) => Promise.resolve(config.execute(args, ctx)).then(finish),
  };
  directExecutions.set(tool.execute as AgentTool['execute'], {
    // Called as a method of `config`, as `execute` calls it.
    body: (args, ctx) => config.execute(args as z.output<TInput>, ctx),
    finish: finish as DirectExecution['finish'],
  });
  function finish(returned: ToolResult<TDetails> | string): ToolResult<TDetails> {
    const result: ToolResult<TDetails> =
      typeof returned === 'string' ? { content: [{ type: 'text', text: returned }] } : returned;
    if (output !== undefined && result.isError !== true) {
      const checked = output.safeParse(result.details);
      if (!checked.success) {
        throw new AgentError(
          `Tool "${config.name}" returned details that do not match its output schema: ${checked.error.issues
            .map((issue) => issue.message)
            .join('; ')}`,
        );
      }
    }
    return result;
  }
  if (config.aliases !== undefined) tool.aliases = config.aliases;
  if (config.source !== undefined) tool.source = config.source;
  if (config.policy !== undefined) tool.policy = config.policy;
  if (config.prepareArguments !== undefined) tool.prepareArguments = config.prepareArguments;
  if (config.permissionSubjects !== undefined) tool.permissionSubjects = config.permissionSubjects;
  if (output !== undefined) tool.outputSchema = zodToJsonSchema(output);
  return tool;
}

/** A `defineTool` execute split in two: the tool's own body, and the step that finishes its value. */
export interface DirectExecution {
  body: (args: unknown, ctx: ToolContext) => unknown;
  /** Turns the body's value into the result (a string becomes text); throws on a bad `details`. */
  finish: (returned: unknown) => ToolResult;
}

/** Keyed by the `execute` function `defineTool` made, so a wrapper that replaces it is never bypassed. */
const directExecutions = new WeakMap<AgentTool['execute'], DirectExecution>();

/**
 * The two halves of a `defineTool` tool's `execute`, for the loop: it awaits the body and finishes
 * the value itself, one promise step less than calling `execute`. Undefined for any other execute.
 */
export function directExecutionOf(tool: {
  execute: AgentTool['execute'];
}): DirectExecution | undefined {
  return directExecutions.get(tool.execute);
}

/**
 * JSON Schema of a zod schema as providers want it: the input side (defaults make fields
 * optional), every reference inlined, no `$schema`.
 */
export function zodToJsonSchema(schema: z.ZodType): JsonSchema {
  const generated = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    reused: 'inline',
    cycles: 'ref',
  }) as JsonSchema;
  return inlineJsonSchema(generated);
}

/** zod's parse options, made once (zod copies them per parse). */
const reportInput = { reportInput: true } as const;

/**
 * Validates with a zod schema and reports issues the model can act on. A key the schema does not
 * know is an issue too (listing the known ones), even where zod would strip it silently: a call
 * that ignored part of what the model asked for would look like it did what was asked.
 */
export function validateWithZod<T>(schema: z.ZodType<T>, value: unknown): ValidationResult<T> {
  const parsed = schema.safeParse(value, reportInput);
  const unknown = unknownKeyIssues(schema, value);
  if (parsed.success && unknown.length === 0) return { ok: true, value: parsed.data };
  return {
    ok: false,
    issues: [
      ...(parsed.success
        ? []
        : parsed.error.issues.flatMap((issue) => describeZodIssue(issue, value))),
      ...unknown,
    ],
  };
}

function describeZodIssue(issue: z.core.$ZodIssue, root: unknown): ValidationIssue[] {
  const path = issue.path.filter(
    (segment): segment is string | number => typeof segment !== 'symbol',
  );
  const received = 'input' in issue ? issue.input : valueAt(root, path);
  switch (issue.code) {
    case 'invalid_type': {
      if (received === undefined)
        return [{ path, message: `required ${issue.expected} is missing` }];
      return [
        {
          path,
          message: `expected ${issue.expected}, received ${describeReceived(received)}${typeMismatchHint(issue.expected, received)}`,
        },
      ];
    }
    case 'invalid_value':
      return [
        {
          path,
          message: `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, received ${describeReceived(received)}`,
        },
      ];
    case 'unrecognized_keys':
      return [
        {
          path,
          message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`,
        },
      ];
    case 'invalid_union': {
      const nested = issue.errors.flat();
      if (nested.length > 0 && nested.length <= 6) {
        const alternatives = nested.map((sub) => sub.message).join(' | ');
        return [
          {
            path,
            message: `matches none of the allowed shapes (${alternatives}), received ${describeReceived(received)}`,
          },
        ];
      }
      return [
        {
          path,
          message: `matches none of the allowed shapes, received ${describeReceived(received)}`,
        },
      ];
    }
    default:
      return [{ path, message: issue.message }];
  }
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}
