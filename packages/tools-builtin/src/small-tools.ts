/**
 * The small tools: `sleep` (wait, abortable and bounded — for polling a background job or a
 * rate limit) and `send_user_message` (tell the user something mid-run: the app shows it, the
 * model only learns it was delivered).
 */
import { type DefinedTool, defineTool, renameArguments, ToolError } from '@agent/core';
import * as z from 'zod';

/** Options of {@link createSleepTool}. */
export interface SleepToolOptions {
  /** Longest wait one call may ask for, in seconds [300]. */
  maxSeconds?: number;
}

/** claw-code's `{duration_ms}` becomes `{seconds}` (when `seconds` is absent). */
function sleepSeedArguments(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const { duration_ms: milliseconds, ...rest } = raw as Record<string, unknown>;
  if (milliseconds === undefined || 'seconds' in rest) return raw;
  return {
    ...rest,
    seconds: typeof milliseconds === 'number' ? milliseconds / 1000 : milliseconds,
  };
}

/** `sleep`: waits the given seconds; an abort (the run's, or the call's timeout) ends it at once. */
export function createSleepTool(
  options: SleepToolOptions = {},
): DefinedTool<{ seconds: number }, { sleptMs: number }> {
  const maxSeconds = options.maxSeconds ?? 300;
  return defineTool({
    name: 'sleep',
    label: 'Sleep',
    description: `Waits the given number of seconds (at most ${maxSeconds}), e.g. before checking a background job again. Returns early only when the run is stopped.`,
    // claw-code's `Sleep {duration_ms}`.
    aliases: ['Sleep'],
    prepareArguments: sleepSeedArguments,
    input: z.object({
      seconds: z
        .number()
        .min(0)
        .max(maxSeconds)
        .describe(`Seconds to wait (at most ${maxSeconds}).`),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', timeoutMs: (maxSeconds + 5) * 1000 },
    execute: async ({ seconds }, ctx) => {
      const started = Date.now();
      await new Promise<void>((resolve, reject) => {
        if (ctx.signal.aborted) {
          reject(ToolError.cancelled('sleep'));
          return;
        }
        const timer = setTimeout(() => {
          ctx.signal.removeEventListener('abort', stop);
          resolve();
        }, seconds * 1000);
        function stop() {
          clearTimeout(timer);
          reject(ToolError.cancelled('sleep'));
        }
        ctx.signal.addEventListener('abort', stop, { once: true });
      });
      const sleptMs = Date.now() - started;
      return {
        content: [{ type: 'text', text: `Slept ${(sleptMs / 1000).toFixed(1)} s.` }],
        details: { sleptMs },
      };
    },
  });
}

/** `details` of a send_user_message result; apps show `message` (the CLI prints it). */
export interface UserMessageDetails {
  userMessage: string;
  /** Paths of files the model asked to show with the message (not read by the tool). */
  attachments?: string[];
}

/**
 * `send_user_message`: a message for the user, shown by the app as it arrives (a
 * `tool-execution-update` whose `partial.details.userMessage` is the text, and the result's
 * details); the model reads only that it was delivered.
 */
export function createSendUserMessageTool(): DefinedTool<
  { message: string; attachments?: string[] | undefined },
  UserMessageDetails
> {
  return defineTool({
    name: 'send_user_message',
    label: 'Message to the user',
    // claw-code's `SendUserMessage` (also `Brief`) {message, attachments, status}: `status`
    // (normal | proactive) only styles their UI and is dropped.
    aliases: ['SendUserMessage', 'Brief'],
    prepareArguments: renameArguments({}, { drop: ['status'] }),
    description:
      'Shows a short message to the user now, while you keep working (progress, a finding, a question you will wait for in your final answer). The user cannot reply through this tool.',
    input: z.object({
      message: z.string().min(1).max(4000).describe('The message, plain text.'),
      attachments: z
        .array(z.string().min(1))
        .max(20)
        .optional()
        .describe('Paths of files to show with the message.'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', countsTowardTerminationVote: false },
    execute: async ({ message, attachments }, ctx) => {
      const details: UserMessageDetails = {
        userMessage: message,
        ...(attachments === undefined || attachments.length === 0 ? {} : { attachments }),
      };
      ctx.onUpdate({ content: [{ type: 'text', text: message }], details });
      const count = details.attachments?.length ?? 0;
      return {
        content: [
          {
            type: 'text',
            text: `Delivered to the user${count === 0 ? '' : ` with ${count} attachment${count === 1 ? '' : 's'}`}.`,
          },
        ],
        details,
      };
    },
  });
}
