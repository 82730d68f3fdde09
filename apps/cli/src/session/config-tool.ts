/**
 * The session's settings as tools (issue 12's `config`): `config` reads them (model, permission
 * mode, rules, grants, sandbox, MCP servers) and is read-only; `config_set` changes the mode or the
 * model and is a full-access tool, so it goes through the permission gate like any other call — a
 * model cannot widen its own permissions without the user's say (a rule such as
 * `--allow 'config_set(model:*)'` may let it through; in `full-access` mode there is nothing left to
 * widen). Its subjects are `mode:<mode>` and `model:<id>`.
 */
import {
  type AnyAgentTool,
  type ConfigSetting,
  createConfigTools as createSettingsTools,
  type PermissionMode,
  type PermissionPolicy,
  ToolError,
} from '@agent/core';
import type { ModelChoice } from './providers.js';
import type { ToolSet } from './tool-sources.js';

/** What the config tools read and change of a session (the session's `Session` has all of it). */
export interface ConfigurableSession {
  model: ModelChoice;
  pendingModel: ModelChoice | undefined;
  chooseModel(name: string): Promise<ModelChoice>;
  policy: PermissionPolicy;
  rules: { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] };
  tools: Pick<ToolSet, 'sandbox' | 'mcp'>;
  cwd: string;
}

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
export function configSnapshot(session: ConfigurableSession): ConfigSnapshot {
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
 * `config` and `config_set` (core's `createConfigTools`) over the session's settings, for a session
 * that does not exist yet when the tools are made (the agent needs its tools first): `session()`
 * returns it once it does.
 */
export function createConfigTools(session: () => ConfigurableSession): AnyAgentTool[] {
  const snapshot = () => configSnapshot(session());
  const readOnly = (description: string, key: keyof ConfigSnapshot): ConfigSetting => ({
    description,
    get: () => snapshot()[key],
  });
  return createSettingsTools({
    subject: "this session's settings",
    source: 'cli',
    settings: {
      model: {
        description:
          'The model id; a new one (of the same provider) takes effect when this run ends, the conversation going on.',
        get: () => session().model.model,
        set: async (value) => {
          const current = session();
          let choice: ModelChoice;
          try {
            choice = await current.chooseModel(String(value));
          } catch (error) {
            throw new ToolError(
              `Cannot use the model "${String(value)}": ${error instanceof Error ? error.message : String(error)}`,
            );
          }
          current.pendingModel = choice;
          return `The model changes from ${current.model.model} to ${choice.model} when this run ends (the conversation goes on).`;
        },
      },
      mode: {
        description: 'The permission mode: which calls run without asking the user (at once).',
        values: modes,
        get: () => session().policy.mode,
        set: (value) => {
          const current = session();
          const before = current.policy.mode;
          current.policy.setMode(value as PermissionMode);
          return `The permission mode is now ${String(value)} (was ${before}).`;
        },
      },
      provider: readOnly('The provider of the model.', 'provider'),
      nextModel: readOnly('The model chosen for when this run ends, if any.', 'nextModel'),
      rules: readOnly('The allow, ask and deny rules.', 'rules'),
      grants: readOnly('The permissions granted during the session.', 'grants'),
      sandbox: readOnly('The sandbox bash runs in.', 'sandbox'),
      mcpServers: readOnly('The MCP servers, their status and tool counts.', 'mcpServers'),
      cwd: readOnly('The workspace.', 'cwd'),
    },
  });
}
