/**
 * Kiro's `session { operation: list | get | set | reset, key?, value? }` on the config tools:
 * `list` reads every setting, `get` one, `set` changes one — each exactly as `config`/`config_set`
 * would, through `config_set`'s permission tier. `reset` is refused: settings here have no
 * temporary layer over saved ones, so the model sets the value it wants back instead.
 */
import * as z from 'zod';
import { validateWithZod } from './define-tool.js';
import { ToolError } from './errors.js';
import type { AgentTool, AnyAgentTool, ToolContext, ValidationResult } from './tool.js';

const sessionInput = z.strictObject({
  operation: z.enum(['list', 'get', 'set', 'reset']),
  key: z.string().min(1).optional(),
  value: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

type SessionCall = z.infer<typeof sessionInput> & { kiroSession: true };

function isSessionShape(args: unknown): boolean {
  return args !== null && typeof args === 'object' && !Array.isArray(args) && 'operation' in args;
}

function isSessionCall(args: unknown): args is SessionCall {
  return isSessionShape(args) && (args as { kiroSession?: unknown }).kiroSession === true;
}

/** `write` (config_set) that also takes Kiro's session shape, reading through `read` (config). */
export function withSessionShape(write: AnyAgentTool, read: AnyAgentTool): AgentTool<unknown> {
  const needKey = (call: SessionCall): string => {
    if (call.key === undefined)
      throw ToolError.invalidArguments(write.name, `${call.operation} needs "key"`);
    return call.key;
  };
  const asWrite = (call: SessionCall): unknown => {
    switch (call.operation) {
      case 'get':
        return { setting: needKey(call) };
      case 'set':
        if (call.value === undefined)
          throw ToolError.invalidArguments(write.name, 'set needs "value"');
        return { setting: needKey(call), value: call.value };
      default:
        return undefined;
    }
  };
  return {
    ...write,
    validate: (args): ValidationResult<unknown> => {
      if (!isSessionShape(args)) return write.validate?.(args) ?? { ok: true, value: args };
      const validated = validateWithZod(sessionInput, args);
      return validated.ok
        ? { ok: true, value: { ...validated.value, kiroSession: true } }
        : validated;
    },
    permissionSubjects: (args) => {
      if (!isSessionCall(args)) return write.permissionSubjects?.(args) ?? [];
      const mapped = asWrite(args);
      return mapped === undefined ? ['read:*'] : (write.permissionSubjects?.(mapped) ?? []);
    },
    execute: async (args, ctx: ToolContext) => {
      if (!isSessionCall(args)) return write.execute(args, ctx);
      if (args.operation === 'reset')
        throw ToolError.invalidArguments(
          write.name,
          'reset is not offered: settings here have no temporary layer to clear; set the value you want with operation "set"',
        );
      if (args.operation === 'list') return read.execute({}, ctx);
      return write.execute(asWrite(args), ctx);
    },
  };
}
