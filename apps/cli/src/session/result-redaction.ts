/**
 * The model never reads a credential of the CLI's environment. Tools run without those variables
 * (the first line), but a value can still reach a result another way: a `.env` file read, a
 * command that prints `/proc/<pid>/environ` of the CLI when no sandbox hides it, a variable the
 * user passed with `--pass-env`, an MCP server or web page that echoes it. Every tool result is
 * therefore redacted before it enters the conversation, as the transcript and session files are —
 * and so is every other text a command hook hands the model: a denial's reason (PreToolUse), the
 * context SessionStart and UserPromptSubmit add, a Stop hook's reason to go on (a `cat .env` in
 * any of them sent the key before).
 */
import type { AgentHooks, PermissionGate, ToolResult, ToolResultContent } from '@agent/core';
import { redactToolJson, redactToolText } from '../ui/redaction.js';

/**
 * `hooks` with one more step after each tool call, before the command hooks' own
 * `afterToolExecution` (they never see a credential) and again after it (a hook that adds text to a
 * result is redacted too): each credential value in the result's content is replaced with
 * `[redacted:NAME]`. Sub-agents inherit it with the rest of their parent's hooks.
 */
export function redactingHooks(hooks: AgentHooks | undefined): AgentHooks {
  const after = hooks?.afterToolExecution;
  const before = hooks?.beforeToolExecution;
  return {
    ...hooks,
    ...(before === undefined
      ? {}
      : {
          beforeToolExecution: async (call) => {
            const decision = await before(call);
            // A skip's reason is what the model reads instead of a result.
            return decision?.action === 'skip'
              ? { ...decision, reason: redactToolText(decision.reason) }
              : decision;
          },
        }),
    afterToolExecution: async (call, result) => {
      // Before the hooks too: a PostToolUse hook is handed the result (`tool_response`), and one
      // that logs its input wrote the key to its log.
      const redacted = redactResult(result);
      const final = (await after?.(call, redacted)) ?? redacted;
      return redactResult(final);
    },
  };
}

/**
 * `gate` with the reason of each denial redacted: the model reads it as the call's result, and a
 * PreToolUse hook's reason is whatever the hook printed.
 */
export function redactingGate(gate: PermissionGate): PermissionGate {
  return async (request) => {
    const decision = await gate(request);
    return decision.behavior === 'deny'
      ? { ...decision, reason: redactToolText(decision.reason) }
      : decision;
  };
}

/**
 * What a UserPromptSubmit hook made of the prompt `typed`: the hooks' added context redacted, the
 * user's own text as typed (what the user types is sent as typed).
 */
export function redactAddedContext(typed: string, submitted: string): string {
  return submitted.startsWith(typed)
    ? typed + redactToolText(submitted.slice(typed.length))
    : redactToolText(submitted);
}

/**
 * The result with its content and details redacted; the same object when nothing in it was a
 * credential. Details never reach the model, but the session file keeps them (bash's whole
 * `stdout`), and a file is redacted for the exact values only: a `base64 .env` there was the key.
 */
export function redactResult(result: ToolResult): ToolResult {
  let changed = false;
  const content = result.content.map((part): ToolResultContent => {
    const redacted = redactContent(part);
    if (redacted !== part) changed = true;
    return redacted;
  });
  const details = redactDetails(result.details);
  if (details !== result.details) changed = true;
  return changed ? { ...result, content, details } : result;
}

function redactContent(part: ToolResultContent): ToolResultContent {
  switch (part.type) {
    case 'text': {
      const text = redactToolText(part.text);
      return text === part.text ? part : { ...part, text };
    }
    case 'json': {
      // Compared as JSON: the redacted copy is a new object even when nothing was replaced.
      const value = redactToolJson(part.value);
      return JSON.stringify(value) === JSON.stringify(part.value) ? part : { ...part, value };
    }
    default:
      return part;
  }
}

/** Details redacted as plain JSON when their JSON text holds a credential; else as they are. */
function redactDetails(details: unknown): unknown {
  if (details === undefined) return details;
  let text: string | undefined;
  try {
    text = JSON.stringify(details);
  } catch {
    // Not JSON (a cycle, a BigInt): it cannot be saved either.
    return details;
  }
  // The JSON text holds every string as the structured pass would see it, escapes included
  // (which the encoded forms cover), so one scan tells whether anything is to be replaced.
  if (text === undefined || redactToolText(text) === text) return details;
  return redactToolJson(details);
}
