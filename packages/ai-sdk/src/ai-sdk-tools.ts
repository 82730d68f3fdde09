import {
  AgentError,
  type AnyAgentTool,
  createToolRunner,
  jsonContentAsText,
  ToolError,
  type ToolResultMessage,
  type ToolRunner,
  type ToolRunnerOptions,
  toolNamePattern,
  toolResultText,
} from '@agent/core';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { jsonSchema, type ModelMessage, type Tool } from 'ai';
import { jsonValue } from './json-value.js';

/** Options of {@link toAiSdkTools}: the gate, hooks and limits every call goes through. */
export interface AiSdkToolsOptions extends Omit<ToolRunnerOptions, 'approvals'> {
  /**
   * Where a permission question goes [ai-sdk]: `ai-sdk` — the AI SDK's tool approval (each
   * tool's `needsApproval`: `generateText`/`streamText` stop with a `tool-approval-request`
   * and run the call once a `tool-approval-response` approves it); `approver` — the policy's
   * own approver, asked while the call runs.
   */
  approvals?: 'ai-sdk' | 'approver';
}

/**
 * What one of our tools returns to the AI SDK: the result message as our loop records it
 * (`details` included, never clipped), in the process (`result.steps`, `onStepFinish`). The model
 * gets it through `toModelOutput`: the text clipped to the tool's `maxResultChars`, images as
 * files. Serialized — to the browser by `toUIMessageStream`, to the model by a
 * `convertToModelMessages` given no `tools` — it is the message as the model reads it: clipped,
 * without `details`.
 */
export type AiSdkToolOutput = ToolResultMessage;

/**
 * What an app may hand each of our tools in `toolsContext` (optional): your session or chat id.
 * It is never given to the tool; it tells conversations apart for the AI SDK's approvals.
 */
export type AiSdkToolContext = Record<string, unknown>;

/** An AI SDK tool made from one of ours. */
export type AiSdkTool = Tool<unknown, AiSdkToolOutput, AiSdkToolContext | undefined>;

/**
 * Our tools as an AI SDK `ToolSet` (keyed by wire name) for `generateText`/`streamText`. Each
 * call goes through our own path — `prepareArguments`, validation against the tool's schema
 * (the AI SDK does not validate: `inputSchema` is its JSON Schema as is), the permission gate,
 * hooks, resource locks, timeout, the AI SDK's abort signal — and a failed, denied, timed-out or
 * cancelled call throws a `ToolError` (its `kind` says which), which the AI SDK reports as a
 * `tool-error` the model reads. A question of the gate becomes the AI SDK's tool approval.
 */
export function toAiSdkTools(
  tools: readonly AnyAgentTool[],
  options: AiSdkToolsOptions = {},
): Record<string, AiSdkTool> {
  const runner = createToolRunner(runnerOptions(options));
  const set: Record<string, AiSdkTool> = {};
  for (const agentTool of tools) {
    checkName(agentTool, 'toAiSdkTools');
    if (Object.hasOwn(set, agentTool.name)) {
      throw new AgentError(`toAiSdkTools: two tools are named "${agentTool.name}"`);
    }
    // Defined, not assigned: a tool may be named `__proto__` (the name pattern allows it), and
    // assignment would make it the set's prototype — gone from the set, inherited by every lookup.
    Object.defineProperty(set, agentTool.name, {
      value: adapt(agentTool, runner),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return set;
}

/** One of our tools as an AI SDK tool; see {@link toAiSdkTools}. */
export function toAiSdkTool(agentTool: AnyAgentTool, options: AiSdkToolsOptions = {}): AiSdkTool {
  checkName(agentTool, 'toAiSdkTool');
  return adapt(agentTool, createToolRunner(runnerOptions(options)));
}

/**
 * A name the providers take as it is (`^[a-zA-Z0-9_-]{1,64}$`, as `defineTool` demands): a
 * hand-made tool named otherwise is refused here, not by the provider's 400 mid-run.
 */
function checkName(agentTool: AnyAgentTool, where: string): void {
  if (!toolNamePattern.test(agentTool.name)) {
    throw new AgentError(
      `${where}: invalid tool name ${JSON.stringify(agentTool.name)}: must match ${toolNamePattern}`,
    );
  }
}

function runnerOptions(options: AiSdkToolsOptions): ToolRunnerOptions {
  const { approvals, ...rest } = options;
  return { ...rest, approvals: approvals === 'approver' ? 'approver' : 'framework' };
}

function adapt(agentTool: AnyAgentTool, runner: ToolRunner): AiSdkTool {
  // The object `tool()` would return (it is the identity), typed with an optional context:
  // `tool()` only takes a required one, and every app would then have to pass `toolsContext`.
  const adapted: AiSdkTool = {
    description: agentTool.description,
    // No `validate`: our own validation runs inside the call, after `prepareArguments`.
    inputSchema: jsonSchema<unknown>(agentTool.parameters as JSONSchema7),
    // Only where a question can go to the AI SDK: the AI SDK pays an approval check per call.
    ...(runner.frameworkApprovals
      ? {
          needsApproval: (
            input: unknown,
            {
              toolCallId,
              messages,
              context,
            }: { toolCallId: string; messages: readonly ModelMessage[]; context?: unknown },
          ) =>
            runner.needsApproval(agentTool, input, toolCallId, {
              answered: wasAsked(messages, toolCallId),
              conversation: () => conversationKey(messages, toolCallId, context),
            }),
        }
      : {}),
    execute: async (
      input,
      { toolCallId, abortSignal, messages, context },
    ): Promise<AiSdkToolOutput> => {
      const message = await runner.run(agentTool, input, {
        toolCallId,
        ...(abortSignal === undefined ? {} : { signal: abortSignal }),
        ...(runner.frameworkApprovals
          ? { conversation: () => conversationKey(messages, toolCallId, context) }
          : {}),
      });
      if (message.isError) {
        const text = toolResultText(runner.forModel(agentTool, message).content);
        throw new ToolError(text, {
          kind: message.errorKind ?? 'failed',
          toolName: agentTool.name,
        });
      }
      return leavingAsModelReads(message, runner.forModel(agentTool, message));
    },
    toModelOutput: ({ output }: { output: AiSdkToolOutput }) =>
      // A result that came back as JSON (from the browser) was clipped when it left the process:
      // clipping it again would clip the clip marker.
      modelOutput(Object.hasOwn(output, 'toJSON') ? runner.forModel(agentTool, output) : output),
  };
  return adapted;
}

/**
 * Which conversation a call is in, as far as the AI SDK lets a tool tell: a SHA-256 of the tool's
 * context (`toolsContext` of `generateText`/`streamText`: the app's own word, e.g. its session or
 * chat id — the messages come from the caller) and of what the user said before the call (the
 * messages before the assistant message holding it — all of them while the model's answer is
 * live). The same when the question is asked and when the answered call runs (from the history
 * the caller sends back), and different between two conversations that share these tools —
 * unless the app gives no context and the users said exactly the same things.
 */
async function conversationKey(
  messages: readonly ModelMessage[] | undefined,
  toolCallId: string,
  context: unknown,
): Promise<string> {
  const said: unknown[] = [contextJson(context)];
  for (const message of messages ?? []) {
    if (message.role === 'assistant' && holdsCall(message, toolCallId)) break;
    if (message.role !== 'user') continue;
    said.push(
      typeof message.content === 'string'
        ? [message.content]
        : // A file or an image by its kind only: its data may come back in another form
          // (bytes live, base64 or a URL from the caller's history).
          message.content.map((part) => (part.type === 'text' ? part.text : { type: part.type })),
    );
  }
  const bytes = new TextEncoder().encode(JSON.stringify(said));
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The tool context as JSON ('' when there is none, or it cannot be written as JSON). */
function contextJson(context: unknown): string {
  try {
    return JSON.stringify(context) ?? '';
  } catch {
    return '';
  }
}

function holdsCall(message: ModelMessage, toolCallId: string): boolean {
  if (typeof message.content === 'string') return false;
  return message.content.some(
    (part) =>
      part.type === 'tool-call' && (part as { toolCallId?: string }).toolCallId === toolCallId,
  );
}

/**
 * Whether the history already holds the approval question for this call: the AI SDK is then
 * checking a call the messages say was answered (messages the caller may have edited or made
 * up), not asking about a call the model just made.
 */
function wasAsked(messages: readonly ModelMessage[] | undefined, toolCallId: string): boolean {
  for (const message of messages ?? []) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) return true;
    }
  }
  return false;
}

/**
 * The whole result, serialized as the clipped one without `details`. What leaves the process is
 * sent back as it is: a chat route's `convertToModelMessages(messages)` without `tools` skips our
 * `toModelOutput` and handed the model the whole text and the details next turn.
 */
function leavingAsModelReads(
  message: ToolResultMessage,
  forModel: ToolResultMessage,
): ToolResultMessage {
  const { details: _details, ...serialized } = forModel;
  // Not enumerable: spreading or cloning the result in the process gives the plain whole message.
  Object.defineProperty(message, 'toJSON', { value: () => serialized, enumerable: false });
  return message;
}

/** What `toModelOutput` returns. */
type ToolResultOutput = Awaited<ReturnType<NonNullable<AiSdkTool['toModelOutput']>>>;

/** A result as the AI SDK sends it to the model: one JSON value, plain text, or text and images. */
function modelOutput(message: ToolResultMessage): ToolResultOutput {
  // The AI SDK carries JSON natively: a result that is one JSON block goes as that value.
  const [only] = message.content;
  if (message.content.length === 1 && only?.type === 'json')
    return { type: 'json', value: jsonValue(only) };
  const blocks = jsonContentAsText(message.content);
  if (blocks.every((block) => block.type === 'text')) {
    return { type: 'text', value: toolResultText(message.content) };
  }
  return {
    type: 'content',
    value: blocks.map((block) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'file', mediaType: block.mimeType, data: { type: 'data', data: block.data } },
    ),
  };
}
