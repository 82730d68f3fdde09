/**
 * Settings as tools: `config` reads them (read-only) and `config_set` changes one (full-access,
 * so the permission gate asks unless a rule such as `config_set(mode:read-only)` allows it — a
 * model cannot widen its own permissions without the user's say). The settings are whatever the
 * host gives: each a `get` and, when changeable, a `set`. claw-code's `Config {setting, value?}`
 * reaches `config_set`: with a value it changes the setting, without one it reads it (asked like a
 * change, as in claw-code; subject `read:<setting>`).
 */
import * as z from 'zod';
import { withSessionShape } from './config-session-shape.js';
import { defineTool } from './define-tool.js';
import { AgentError, ToolError } from './errors.js';
import type { AnyAgentTool } from './tool.js';
import { toolNamePattern } from './tool.js';

/** A value a setting may be given. */
export type ConfigValue = string | number | boolean;

/** One setting: how to read it and, when the model may change it, how to change it. */
export interface ConfigSetting {
  /** What it is, for the model (one line). */
  description: string;
  /** Its current value (JSON-serialisable); `undefined` leaves it out of the listing. */
  get: () => unknown;
  /**
   * Changes it, with a value already checked against `values`. Returns the sentence the model
   * reads (default: `<name> is now <value> (was <old>).`); throw to refuse (the message is shown).
   */
  set?: (value: ConfigValue) => string | undefined | Promise<string | undefined>;
  /** The values `set` accepts [any string, number or boolean]. */
  values?: readonly ConfigValue[];
}

const writeInput = z.object({
  setting: z.string().min(1).describe('The setting.'),
  value: z.union([z.string(), z.number(), z.boolean()]).optional().describe('The new value.'),
});

/** `details` of a `config_set` result: the setting, its value now and before a change. */
export interface ConfigChange {
  setting: string;
  value: unknown;
  previous?: unknown;
}

/** Options of {@link createConfigTools}. */
export interface ConfigToolsOptions {
  /** The settings by name (their values are read through `get` at each call). */
  settings: Readonly<Record<string, ConfigSetting>>;
  /** What the settings are about, for the descriptions ["the settings of this session"]. */
  subject?: string;
  /** Names of the two tools [`config`, `config_set`]. */
  names?: { read?: string; write?: string };
  /**
   * Other names of the write tool [`['Config', 'session']`: claw-code's, and Kiro's, whose
   * `{ operation, key?, value? }` shape it also takes].
   */
  writeAliases?: readonly string[];
  /** `source` of both tools (for `@source` patterns). */
  source?: string;
}

/** The read and write tools over a set of settings; see the module comment. */
export function createConfigTools(options: ConfigToolsOptions): AnyAgentTool[] {
  const readName = options.names?.read ?? 'config';
  const writeName = options.names?.write ?? 'config_set';
  const subject = options.subject ?? 'the settings of this session';
  const settings = () => options.settings;
  const initial = options.settings;
  const names = Object.keys(initial);
  const changeable = names.filter((name) => initial[name]?.set !== undefined);
  for (const name of names)
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw new AgentError(`Config setting "${name}": names are letters, digits, _ . - (1-64)`);
  if (!toolNamePattern.test(readName) || !toolNamePattern.test(writeName))
    throw new AgentError(`Config tools: invalid tool name "${readName}" or "${writeName}"`);

  function lookup(name: string, tool: string): ConfigSetting {
    // The model names the setting: `constructor` or `toString` is no setting, not a function.
    const current = settings();
    const setting = Object.hasOwn(current, name) ? current[name] : undefined;
    if (setting === undefined)
      throw ToolError.invalidArguments(
        tool,
        `there is no setting "${name}"; the settings are: ${Object.keys(settings()).join(', ')}`,
      );
    return setting;
  }

  function snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, setting] of Object.entries(settings())) {
      const value = setting.get();
      if (value !== undefined) out[name] = value;
    }
    return out;
  }

  const listing = names
    .map((name) => {
      const setting = initial[name];
      const values = setting?.values === undefined ? '' : ` (${setting.values.join(', ')})`;
      return `- ${name}${setting?.set === undefined ? '' : ' [changeable]'}: ${setting?.description ?? ''}${values}`;
    })
    .join('\n');

  const read = defineTool({
    name: readName,
    label: 'Settings',
    description: `Reads ${subject}: all of them, or one by "setting". To change one, use ${writeName}.\n\nSettings:\n${listing}`,
    input: z.object({
      setting: z.string().min(1).optional().describe('One setting to read [all].'),
    }),
    ...(options.source === undefined ? {} : { source: options.source }),
    policy: { permission: 'read-only', parallelSafePerTurn: true },
    execute: async ({ setting }) => {
      const value = setting === undefined ? snapshot() : lookup(setting, readName).get();
      return {
        content: [{ type: 'json', value: value ?? null }],
        details: value,
      };
    },
  });

  const write = defineTool<typeof writeInput, ConfigChange>({
    name: writeName,
    aliases: options.writeAliases ?? ['Config', 'session'],
    label: 'Change a setting',
    description: `Changes one of ${subject}${changeable.length === 0 ? '' : ` (${changeable.join(', ')})`}. The user is asked first unless a rule allows it. Without a value it reads the setting.`,
    input: writeInput,
    ...(options.source === undefined ? {} : { source: options.source }),
    policy: { permission: 'full-access', exclusive: true },
    permissionSubjects: ({ setting, value }) => [
      value === undefined ? `read:${setting}` : `${setting}:${String(value)}`,
    ],
    execute: async ({ setting: name, value }) => {
      const setting = lookup(name, writeName);
      if (value === undefined) {
        const current = setting.get();
        return {
          content: [{ type: 'json', value: current ?? null }],
          details: { setting: name, value: current },
        };
      }
      if (setting.set === undefined)
        throw ToolError.invalidArguments(
          writeName,
          `"${name}" cannot be changed${changeable.length === 0 ? '' : `; these can: ${changeable.join(', ')}`}`,
        );
      if (setting.values !== undefined && !setting.values.includes(value))
        throw ToolError.invalidArguments(
          writeName,
          `invalid value ${JSON.stringify(value)} for "${name}": one of ${setting.values.join(', ')}`,
        );
      const before = setting.get();
      const said = await setting.set(value);
      return {
        content: [
          {
            type: 'text',
            text:
              said ?? `${name} is now ${String(value)} (was ${JSON.stringify(before ?? null)}).`,
          },
        ],
        details: { setting: name, value, previous: before },
      };
    },
  });
  // Small, and what the model needs to know about its session: never deferred behind tool_search.
  return [read, withSessionShape(write, read)].map((tool) =>
    Object.assign(tool, { defer: false }),
  ) as AnyAgentTool[];
}
