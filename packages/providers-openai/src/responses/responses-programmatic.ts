/**
 * OpenAI's programmatic tool calling (Responses API), mapped onto our contract. With it on, the
 * request offers the `programmatic_tool_calling` tool and marks the chosen function tools
 * `allowed_callers: ['direct', 'programmatic']`; the model may then write a JavaScript program
 * (run by OpenAI) that calls them. The program is a `program` output item; each call it makes is
 * an ordinary `function_call` item with `caller: { type: 'program', caller_id }` — a normal tool
 * call for the loop, so it goes through our gate, hooks and events — and its result goes back as a
 * `function_call_output` with the same caller. While the program waits for results, the next
 * request replays its `program` item (with the opaque `fingerprint` it must carry back) and the
 * callers; once it finished (a `program_output`), its calls are replayed as plain direct calls.
 *
 * Wire format: as the official `openai` SDK (7.57) types it — `Tool.ProgrammaticToolCalling`,
 * `FunctionTool.allowed_callers`, `ResponseOutputItem.Program`/`ProgramOutput`,
 * `ResponseFunctionToolCall.caller`, `ResponseInputItem.Program`, `FunctionCallOutput.caller`.
 * OpenAI's guide for it was not found; the streaming order of a program's items is assumed to be
 * that of any output item (`response.output_item.added` / `.done`).
 */
import type { Message, ToolCallContent } from '@agent/core';
import type {
  ResponseCreateParamsStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';

/** Options of programmatic tool calling (`programmaticToolCalling` of the provider). */
export interface OpenAIProgrammaticOptions {
  /** Names of the function tools a program may call [every one of the request]. */
  tools?: readonly string[];
}

/** The caller of a call a program made. */
interface ProgramCaller {
  type: 'program';
  caller_id: string;
}

/** A `program` item as it is sent back (`ResponseInputItem.Program`). */
type ProgramItem = Extract<ResponseInputItem, { type: 'program' }>;

/** What a program's call keeps in `providerMetadata.openai` for its replay. */
interface ProgramMetadata {
  caller: ProgramCaller;
  /** The `program` item, on the first call it made in a message. */
  program?: ProgramItem;
}

function programMetadata(call: ToolCallContent): ProgramMetadata | undefined {
  const openai = call.providerMetadata?.openai as Partial<ProgramMetadata> | undefined;
  const caller = openai?.caller;
  if (caller?.type !== 'program' || typeof caller.caller_id !== 'string') return undefined;
  return openai as ProgramMetadata;
}

/** Resolves the provider option: off, or what to offer. */
export function programmaticSetting(
  option: boolean | OpenAIProgrammaticOptions | undefined,
): OpenAIProgrammaticOptions | undefined {
  if (option === undefined || option === false) return undefined;
  return option === true ? {} : option;
}

/** Offers programmatic tool calling and lets it call the chosen function tools (in place). */
export function applyProgrammaticToolCalling(
  body: ResponseCreateParamsStreaming,
  setting: OpenAIProgrammaticOptions | undefined,
): void {
  if (setting === undefined) return;
  const chosen = setting.tools === undefined ? undefined : new Set(setting.tools);
  const tools = body.tools ?? [];
  for (const tool of tools) {
    if (tool.type !== 'function') continue;
    if (chosen !== undefined && !chosen.has(tool.name)) continue;
    // Direct too: the model keeps calling them itself, and a finished program's calls are
    // replayed as direct ones.
    tool.allowed_callers = ['direct', 'programmatic'];
  }
  tools.push({ type: 'programmatic_tool_calling' });
  body.tools = tools;
}

/**
 * The calls of programs still waiting for results, by call id: a program is waiting when it made
 * a call in the newest assistant message (a program that finished makes no more calls); all its
 * calls, in that message and before, keep their caller.
 */
export function openProgramCalls(messages: readonly Message[]): Map<string, ProgramCaller> {
  const open = new Set<string>();
  const newest = messages.findLast((message) => message.role === 'assistant');
  for (const block of newest?.role === 'assistant' ? newest.content : []) {
    if (block.type !== 'toolCall') continue;
    const metadata = programMetadata(block);
    if (metadata !== undefined) open.add(metadata.caller.caller_id);
  }
  const calls = new Map<string, ProgramCaller>();
  if (open.size === 0) return calls;
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'toolCall') continue;
      const caller = programMetadata(block)?.caller;
      if (caller !== undefined && open.has(caller.caller_id)) calls.set(block.id, caller);
    }
  }
  return calls;
}

/**
 * How to replay one call: the items to send before its `function_call` (its program's item, kept
 * on the first call a program made in a message) and the caller it keeps — only while its
 * program waits; any other call is a direct one.
 */
export function programReplay(
  call: ToolCallContent,
  openCalls: ReadonlyMap<string, ProgramCaller>,
): { before: ResponseInputItem[]; caller?: ProgramCaller } {
  const caller = openCalls.get(call.id);
  if (caller === undefined) return { before: [] };
  const program = programMetadata(call)?.program;
  return { before: program === undefined ? [] : [program], caller };
}

/** Collects, while a response streams, the programs and which call each made. */
export class ProgramCapture {
  readonly #programs = new Map<string, ProgramItem>();
  readonly #callers = new Map<string, ProgramCaller>();

  /** A `program` output item (added, then done with its whole code): kept by its call id. */
  program(item: { id: string; call_id: string; code?: string; fingerprint?: string }): void {
    this.#programs.set(item.call_id, {
      type: 'program',
      id: item.id,
      call_id: item.call_id,
      code: item.code ?? '',
      fingerprint: item.fingerprint ?? '',
    });
  }

  /** A `function_call` item: its caller, when a program made it. */
  functionCall(callId: string, caller: unknown): void {
    const program = caller as Partial<ProgramCaller> | null | undefined;
    if (program?.type === 'program' && typeof program.caller_id === 'string')
      this.#callers.set(callId, { type: 'program', caller_id: program.caller_id });
  }

  /**
   * Puts each program call's replay data in its `providerMetadata.openai`, in place (the
   * finished message holds these blocks), once the response ended and every item is whole.
   */
  annotate(content: readonly unknown[]): void {
    if (this.#callers.size === 0) return;
    const placed = new Set<string>();
    for (const block of content) {
      const call = block as ToolCallContent;
      if (call.type !== 'toolCall') continue;
      const caller = this.#callers.get(call.id);
      if (caller === undefined) continue;
      const metadata: ProgramMetadata = { caller };
      const program = this.#programs.get(caller.caller_id);
      if (program !== undefined && !placed.has(program.call_id)) {
        placed.add(program.call_id);
        metadata.program = program;
      }
      const openai = call.providerMetadata?.openai as Record<string, unknown> | undefined;
      call.providerMetadata = {
        ...call.providerMetadata,
        openai: { ...openai, ...metadata },
      };
    }
  }
}
