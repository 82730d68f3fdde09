/**
 * Kiro's `fs_read` batch shape on read_file: `{ operations: [{ mode: Line | Directory | Search |
 * Image, … }] }`. Each operation runs one of our tools — read_file, list_files or search — with
 * Kiro's arguments mapped onto that tool's own, and the results come back in order, each under a
 * header. The model is shown only read_file's own schema; the batch shape is accepted because a
 * model trained on Kiro sends it.
 */
import {
  type AgentTool,
  type AnyAgentTool,
  normalisePermissionSubjects,
  type PermissionSubjectsResult,
  type ToolContext,
  ToolError,
  type ToolResult,
  type ToolResultContent,
  type ValidationResult,
  validateWithZod,
} from '@agent/core';
import * as z from 'zod';
import type { ReadFileArgs } from './read-file.js';

// Kiro sends `null` for an absent optional field: nullish everywhere.
const lineOperation = z.object({
  mode: z.literal('Line'),
  path: z.string().min(1),
  start_line: z.number().int().nullish(),
  end_line: z.number().int().nullish(),
});
const directoryOperation = z.object({
  mode: z.literal('Directory'),
  path: z.string().min(1),
  depth: z.number().int().min(0).max(19).nullish(),
});
const searchOperation = z.object({
  mode: z.literal('Search'),
  path: z.string().min(1),
  pattern: z.string().min(1),
  context_lines: z.number().int().min(0).max(20).nullish(),
});
const imageOperation = z.object({
  mode: z.literal('Image'),
  image_paths: z.array(z.string().min(1)).min(1).max(20),
});

/** Kiro's fs_read arguments: a batch of operations (`summary`/`purpose` are accepted and ignored). */
export const fsReadBatchInput = z.object({
  // Kiro's notes for the user: known (so never refused as unknown), not used.
  summary: z.string().optional(),
  purpose: z.string().optional(),
  operations: z
    .array(
      z.discriminatedUnion('mode', [
        lineOperation,
        directoryOperation,
        searchOperation,
        imageOperation,
      ]),
    )
    .min(1)
    .max(50),
});

/** One operation of a Kiro fs_read batch. */
export type FsReadOperation = z.output<typeof fsReadBatchInput>['operations'][number];

/** `details` of a batch result: per operation, its mode, whether it failed, and its own details. */
export interface FsReadBatchDetails {
  operations: { mode: FsReadOperation['mode']; isError: boolean; details?: unknown }[];
}

/**
 * Kiro's newer shapes as an operations batch: fs_read `{ ops: [{ path, offset?, limit? }] }`
 * (`offset` counts lines from the start, 0-based) and image_read `{ paths: [...] }`. Anything else
 * passes through.
 */
export function kiroReadShapes(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || 'path' in raw) return raw;
  const record = raw as Record<string, unknown>;
  if ('operations' in record) return raw;
  if (Array.isArray(record.ops)) {
    return {
      operations: record.ops.map((op: unknown) => {
        if (op === null || typeof op !== 'object') return op;
        const { path, offset, limit } = op as Record<string, unknown>;
        const start = typeof offset === 'number' ? offset + 1 : 1;
        return {
          mode: 'Line',
          path,
          start_line: start,
          ...(typeof limit === 'number' ? { end_line: start + Math.max(limit, 1) - 1 } : {}),
        };
      }),
    };
  }
  if (Array.isArray(record.paths))
    return { operations: [{ mode: 'Image', image_paths: record.paths }] };
  return raw;
}

/** Whether raw arguments are the batch shape (an `operations` array), not read_file's own. */
export function isFsReadBatch(args: unknown): args is { operations: unknown } {
  return (
    args !== null &&
    typeof args === 'object' &&
    !Array.isArray(args) &&
    'operations' in args &&
    !('path' in args)
  );
}

/** The tools the operations run: read_file for Line and Image, list_files, search. */
export interface FsReadBatchTools {
  readFile: AgentTool<ReadFileArgs>;
  /** Directory mode; without it such an operation fails with a clear error. */
  listFiles?: AnyAgentTool;
  /** Search mode; without it such an operation fails with a clear error. */
  search?: AnyAgentTool;
  /**
   * Characters of text the whole batch returns [100000]: the operation that crosses it is cut
   * there and the rest are not run (each read alone is capped, fifty of them were not).
   */
  maxOutputChars?: number;
  /** Bytes of images the whole batch returns [10 MiB]; images past it are not read. */
  maxImageBytes?: number;
}

/** What a batch has returned so far, against its budget. */
class BatchBudget {
  #chars = 0;
  #imageBytes = 0;
  readonly maxChars: number;
  readonly maxImageBytes: number;

  constructor(maxChars: number, maxImageBytes: number) {
    this.maxChars = maxChars;
    this.maxImageBytes = maxImageBytes;
  }

  /** True once the text or the image budget is used up: nothing more is run. */
  get spent(): boolean {
    return this.#chars >= this.maxChars || this.#imageBytes >= this.maxImageBytes;
  }

  /** `parts` as far as the budget goes: text cut at the room left (with a marker), images past it dropped. */
  take(parts: readonly ToolResultContent[]): ToolResultContent[] {
    const kept: ToolResultContent[] = [];
    for (const part of parts) {
      if (part.type === 'text') {
        const room = this.maxChars - this.#chars;
        if (room <= 0) break;
        if (part.text.length <= room) {
          kept.push(part);
          this.#chars += part.text.length;
          continue;
        }
        kept.push({
          ...part,
          text: `${part.text.slice(0, room)}\n[cut: the batch returns at most ${this.maxChars} characters; read the rest in another call]`,
        });
        this.#chars = this.maxChars;
        break;
      }
      if (part.type === 'image') {
        const bytes = Math.floor((part.data.length * 3) / 4);
        if (this.#imageBytes + bytes > this.maxImageBytes) {
          this.#imageBytes = this.maxImageBytes;
          kept.push({
            type: 'text',
            text: `[image not shown: the batch returns at most ${this.maxImageBytes} bytes of images; read it in another call]`,
          });
          break;
        }
        this.#imageBytes += bytes;
      }
      kept.push(part);
    }
    return kept;
  }
}

/** A regular expression matching `text` literally (Kiro's Search pattern is a plain substring). */
function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One call of one of our tools: which tool, with which (our) arguments. */
interface PlannedCall {
  tool: AnyAgentTool;
  args: unknown;
  label: string;
}

/**
 * read_file extended with Kiro's batch shape. Everything else — name, aliases, schema, policy —
 * is read_file's. The call's permission subjects are every operation's, so one approval (or one
 * rule) covers the batch, and each operation then runs its tool directly (not asked again).
 */
export function withFsReadBatch(tools: FsReadBatchTools): AgentTool<unknown> {
  const { readFile } = tools;
  const validateSingle = (args: unknown): ValidationResult<unknown> =>
    readFile.validate === undefined ? { ok: true, value: args } : readFile.validate(args);

  /** The tool calls of one operation (an Image operation reads each image in turn). */
  async function plan(operation: FsReadOperation, index: number): Promise<PlannedCall[]> {
    switch (operation.mode) {
      case 'Line':
        return [
          {
            tool: readFile as AnyAgentTool,
            args: await lineRange(operation, index),
            label: `Line ${operation.path}`,
          },
        ];
      case 'Directory':
        return [
          {
            tool: need(tools.listFiles, 'Directory', 'list_files'),
            // Kiro's depth 0 is the directory's own entries: our depth 1.
            args: { path: operation.path, depth: (operation.depth ?? 0) + 1 },
            label: `Directory ${operation.path}`,
          },
        ];
      case 'Search':
        return [
          {
            tool: need(tools.search, 'Search', 'search'),
            args: {
              pattern: literalPattern(operation.pattern),
              path: operation.path,
              case_sensitive: false,
              context: operation.context_lines ?? 2,
              output_mode: 'content',
            },
            label: `Search ${operation.path} for "${operation.pattern}"`,
          },
        ];
      case 'Image':
        return operation.image_paths.map((imagePath) => ({
          tool: readFile as AnyAgentTool,
          args: { path: imagePath },
          label: `Image ${imagePath}`,
        }));
      default: {
        const _exhaustive: never = operation;
        throw new Error(`unknown mode ${String(_exhaustive)}`);
      }
    }
  }

  function need(tool: AnyAgentTool | undefined, mode: string, name: string): AnyAgentTool {
    if (tool === undefined)
      throw ToolError.invalidArguments(
        readFile.name,
        `${mode} operations need the ${name} tool, which this agent does not have`,
      );
    return tool;
  }

  /**
   * Kiro's 1-based inclusive range, negative counting from the end (-1 = the last line), default
   * the whole file; an end before the start reads the start line. Negative numbers need the
   * file's line count, which a first one-line read gives.
   */
  async function lineRange(
    operation: z.output<typeof lineOperation>,
    index: number,
  ): Promise<ReadFileArgs> {
    let start = operation.start_line ?? 1;
    let end = operation.end_line ?? -1;
    if (start <= 0 || (end <= 0 && end !== -1)) {
      const probe = await readFile.execute(
        { path: operation.path, offset: 1, limit: 1 },
        probeContext(index),
      );
      const total = (probe.details as { totalLines?: number } | undefined)?.totalLines;
      if (total === undefined)
        throw ToolError.invalidArguments(
          readFile.name,
          `operation ${index + 1}: counting from the end needs the line count of ${operation.path}, which is too large to count; give positive line numbers`,
        );
      const fromEnd = (line: number) => (line <= 0 ? Math.max(total + line, 0) + 1 : line);
      start = fromEnd(start);
      if (end !== -1) end = fromEnd(end);
    }
    if (end === -1) return { path: operation.path, offset: start };
    return { path: operation.path, offset: start, limit: Math.max(end, start) - start + 1 };
  }

  let probes = 0;
  function probeContext(index: number): ToolContext {
    return {
      toolCallId: `fs_read-probe-${index}-${++probes}`,
      toolName: readFile.name,
      signal: new AbortController().signal,
      onUpdate: () => undefined,
      onProgress: () => undefined,
    };
  }

  async function subjectsOf(call: PlannedCall): Promise<PermissionSubjectsResult> {
    const validated = call.tool.validate?.(call.args) ?? { ok: true, value: call.args };
    if (!validated.ok) return [];
    return (await call.tool.permissionSubjects?.(validated.value)) ?? [];
  }

  async function runCall(call: PlannedCall, ctx: ToolContext): Promise<ToolResult> {
    const validated = call.tool.validate?.(call.args) ?? { ok: true, value: call.args };
    if (!validated.ok)
      throw ToolError.invalidArguments(
        call.tool.name,
        validated.issues.map((issue) => issue.message).join('; '),
      );
    return call.tool.execute(validated.value, ctx);
  }

  async function runBatch(
    operations: readonly FsReadOperation[],
    ctx: ToolContext,
  ): Promise<ToolResult<FsReadBatchDetails>> {
    const content: ToolResultContent[] = [];
    const done: FsReadBatchDetails['operations'] = [];
    const budget = new BatchBudget(
      tools.maxOutputChars ?? 100_000,
      tools.maxImageBytes ?? 10 * 1024 * 1024,
    );
    for (const [index, operation] of operations.entries()) {
      ctx.signal.throwIfAborted();
      const header = `=== ${index + 1}/${operations.length} `;
      if (budget.spent) {
        const rest = operations.length - index;
        content.push({
          type: 'text',
          text: `=== ${index + 1}-${operations.length}/${operations.length}: not run — the batch's output budget is spent; run ${rest === 1 ? 'it' : `these ${rest} operations`} in another call ===`,
        });
        for (const skipped of operations.slice(index))
          done.push({ mode: skipped.mode, isError: true });
        break;
      }
      let calls: PlannedCall[];
      try {
        calls = await plan(operation, index);
      } catch (error) {
        content.push({
          type: 'text',
          text: `${header}${operation.mode}: failed\n${message(error)}`,
        });
        done.push({ mode: operation.mode, isError: true });
        continue;
      }
      let failed = false;
      const details: unknown[] = [];
      for (const call of calls) {
        if (budget.spent) {
          content.push({
            type: 'text',
            text: `${header}${call.label}: not run — the batch's output budget is spent ===`,
          });
          failed = true;
          continue;
        }
        try {
          const result = await runCall(call, ctx);
          content.push(
            ...budget.take([
              { type: 'text', text: `${header}${call.label} ===` },
              ...result.content,
            ]),
          );
          details.push(result.details);
          if (result.isError === true) failed = true;
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          content.push({ type: 'text', text: `${header}${call.label}: failed\n${message(error)}` });
          failed = true;
        }
      }
      done.push({
        mode: operation.mode,
        isError: failed,
        details: details.length === 1 ? details[0] : details,
      });
    }
    return {
      content,
      details: { operations: done },
      // A batch fails only when nothing in it worked: partial results are still results.
      ...(done.every((operation) => operation.isError) ? { isError: true } : {}),
    };
  }

  const batchTool: AgentTool<unknown> = {
    ...(readFile as AgentTool<unknown>),
    aliases: [...(readFile.aliases ?? []), 'image_read', 'imageRead'],
    prepareArguments: (raw) => {
      const batch = kiroReadShapes(raw);
      return isFsReadBatch(batch) ? batch : (readFile.prepareArguments?.(raw) ?? raw);
    },
    validate: (args) =>
      isFsReadBatch(args) ? validateWithZod(fsReadBatchInput, args) : validateSingle(args),
    permissionSubjects: async (args) => {
      if (!isFsReadBatch(args))
        return (await readFile.permissionSubjects?.(args as ReadFileArgs)) ?? [];
      const { operations } = args as z.output<typeof fsReadBatchInput>;
      const subjects: string[] = [];
      const opaque: string[] = [];
      for (const [index, operation] of operations.entries()) {
        // An operation that cannot be planned fails at run time; it touches nothing.
        const calls = await plan(operation, index).catch(() => []);
        for (const call of calls) {
          const each = normalisePermissionSubjects(await subjectsOf(call));
          for (const subject of each.subjects)
            if (!subjects.includes(subject)) subjects.push(subject);
          if (each.opaque !== undefined) opaque.push(each.opaque);
        }
      }
      return opaque.length === 0 ? subjects : { subjects, opaque: opaque.join('; ') };
    },
    execute: (args, ctx) =>
      isFsReadBatch(args)
        ? runBatch((args as z.output<typeof fsReadBatchInput>).operations, ctx)
        : readFile.execute(args as ReadFileArgs, ctx),
  };
  return batchTool;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
