/**
 * Kiro's `fs_write` shape on write_file: `{ command: create | str_replace | insert | append, path,
 * file_text?, old_str?, new_str?, insert_line? }`. write_file answers to `fs_write` (its alias), so a
 * call with a `command` runs the text_editor tool, which implements exactly those commands; a call
 * without one is write_file's own. The model is shown only write_file's schema.
 */
import {
  type AgentTool,
  type AnyAgentTool,
  normalisePermissionSubjects,
  type PermissionSubjectsResult,
  ToolError,
} from '@agent/core';

/** Whether raw arguments are the command shape (a `command` field), not write_file's own. */
export function isWriteCommand(args: unknown): args is { command: unknown } {
  return args !== null && typeof args === 'object' && !Array.isArray(args) && 'command' in args;
}

/**
 * Kiro also accepts `create` with the content in `new_str`; its `summary` is a note for the user,
 * not part of the edit (taken out here, as a known field, rather than refused as unknown).
 */
function kiroCreate(raw: Record<string, unknown>): Record<string, unknown> {
  const { summary, ...withoutSummary } = raw;
  const call = typeof summary === 'string' ? withoutSummary : raw;
  if (call.command !== 'create' || 'file_text' in call || !('new_str' in call)) return call;
  const { new_str: text, ...rest } = call;
  return { ...rest, file_text: text };
}

/**
 * write_file that also takes Kiro's command shape, run by `textEditor` (validation, permission
 * subjects, locks and execution all text_editor's own for such a call).
 */
export function withWriteCommands(tools: {
  writeFile: AnyAgentTool;
  textEditor: AnyAgentTool;
}): AgentTool<unknown> {
  const { writeFile, textEditor } = tools;
  const pick = (args: unknown): AnyAgentTool => (isWriteCommand(args) ? textEditor : writeFile);
  const resourceKey = (args: unknown) => pick(args).policy?.resourceKey?.(args);
  return {
    ...writeFile,
    prepareArguments: (raw) =>
      isWriteCommand(raw)
        ? kiroCreate(raw as Record<string, unknown>)
        : (writeFile.prepareArguments?.(raw) ?? raw),
    validate: (args) => {
      const tool = pick(args);
      return tool.validate === undefined ? { ok: true, value: args } : tool.validate(args);
    },
    policy: { ...writeFile.policy, resourceKey },
    permissionSubjects: (args): PermissionSubjectsResult | Promise<PermissionSubjectsResult> =>
      pick(args).permissionSubjects?.(args) ?? [],
    execute: async (args, ctx) => {
      if (!isWriteCommand(args)) return writeFile.execute(args, ctx);
      // A command reads the file it changes (a near match is quoted back): a rule that covers
      // reading the path stops it, as it stops text_editor (write_file's own calls only write).
      const subjects = normalisePermissionSubjects(
        (await textEditor.permissionSubjects?.(args)) ?? [],
      ).subjects;
      const covered = subjects.find((subject) => ctx.isPathDenied?.(subject, 'read') === true);
      if (covered !== undefined)
        throw ToolError.denied(
          writeFile.name,
          `${covered} is covered by a rule on reading it, and ${String(args.command)} reads the file`,
        );
      return textEditor.execute(args, ctx);
    },
  };
}
