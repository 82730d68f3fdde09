/**
 * The session's settings as tools (issue 12's `config`): `config` reads them (model, permission
 * mode, rules, grants, sandbox, MCP servers) and is read-only; `config_set` changes the mode or the
 * model and is a full-access tool, so it goes through the permission gate like any other call — a
 * model cannot widen its own permissions without the user's say (a rule such as
 * `--allow 'config_set(model:*)'` may let it through; in `full-access` mode there is nothing left to
 * widen). Its subjects are `mode:<mode>` and `model:<id>`.
 */
import { type AnyAgentTool, defineTool, type PermissionMode, ToolError } from '@agent/core';
import * as z from 'zod';
import type { Session } from './session.js';

const modes = ['default', 'read-only', 'workspace-write', 'full-access'] as const;

/** What `config` returns (also its result's `details`). */
export interface ConfigSnapshot {
  model: string;
  provider: string;
  /** The model the session switches to when the current run ends, after a `config_set`. */
  nextModel?: string;
  mode: PermissionMode;
  rules: { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] };
  grants: { tool: string; subject?: string; decision: 'allow' | 'deny' }[];
  sandbox: string;
  mcpServers: { name: string; status: string; tools: number }[];
  cwd: string;
}

/** The session's settings now. */
export function configSnapshot(session: Session): ConfigSnapshot {
  return {
    model: session.model.model,
    provider: session.model.label,
    ...(session.pendingModel === undefined ? {} : { nextModel: session.pendingModel.model }),
    mode: session.policy.mode,
    rules: session.rules,
    grants: session.policy.grants,
    sandbox: session.tools.sandbox.describe(),
    mcpServers: session.tools.mcp.map((server) => ({
      name: server.name,
      status: String(server.status),
      tools: server.tools().length,
    })),
    cwd: session.cwd,
  };
}

/**
 * `config` and `config_set` for a session that does not exist yet when the tools are made (the
 * agent needs its tools first): `session()` returns it once it does.
 */
export function createConfigTools(session: () => Session): AnyAgentTool[] {
  const read = defineTool({
    name: 'config',
    label: 'Settings',
    description:
      "Reads this session's settings: the model, the permission mode, the allow/ask/deny rules and the grants given during the session, the sandbox of bash, the MCP servers and the workspace. To change the mode or the model, use config_set.",
    input: z.object({}),
    source: 'cli',
    policy: { permission: 'read-only', parallelSafePerTurn: true },
    execute: async () => {
      const snapshot = configSnapshot(session());
      return {
        content: [{ type: 'text', text: JSON.stringify(snapshot, null, 2) }],
        details: snapshot,
      };
    },
  });
  const set = defineTool({
    name: 'config_set',
    label: 'Change a setting',
    description:
      'Changes a setting of this session: "mode" (default, read-only, workspace-write, full-access — which calls run without asking the user) takes effect at once; "model" (a model id of the same provider) takes effect when this run ends, the conversation going on. The user is asked first unless a rule allows it.',
    input: z.object({
      setting: z.enum(['mode', 'model']).describe('What to change.'),
      value: z.string().min(1).max(200).describe('The new mode, or the model id.'),
    }),
    source: 'cli',
    policy: { permission: 'full-access', exclusive: true },
    permissionSubjects: ({ setting, value }) => [`${setting}:${value}`],
    execute: async ({ setting, value }) => {
      const current = session();
      if (setting === 'mode') {
        if (!(modes as readonly string[]).includes(value))
          throw new ToolError(`Unknown mode "${value}": one of ${modes.join(', ')}`);
        const before = current.policy.mode;
        current.policy.setMode(value as PermissionMode);
        return {
          content: [{ type: 'text', text: `The permission mode is now ${value} (was ${before}).` }],
          details: configSnapshot(current),
        };
      }
      let choice: Session['model'];
      try {
        choice = await current.chooseModel(value);
      } catch (error) {
        throw new ToolError(
          `Cannot use the model "${value}": ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      current.pendingModel = choice;
      return {
        content: [
          {
            type: 'text',
            text: `The model changes from ${current.model.model} to ${choice.model} when this run ends (the conversation goes on).`,
          },
        ],
        details: configSnapshot(current),
      };
    },
  });
  // Small, and what the model needs to know about its session: never deferred behind tool_search.
  return [read, set].map((tool) => Object.assign(tool, { defer: false })) as AnyAgentTool[];
}
