import type { JsonSchemaObject, ToolCallContent, ToolDefinition } from '@agent/core';
import {
  planHasMap,
  type StrictArgumentsPlan,
  stripAbsentNulls,
  toStrictSchema,
} from './strict-schema.js';

/** A tool as both APIs take it (Chat wraps it in `function`, Responses inlines it). */
export interface WireTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/** The tools of one request, converted, plus the way back for their arguments. */
export interface PreparedTools {
  tools: WireTool[];
  /** Plans of the tools sent strict, by wire name. */
  plans: Map<string, StrictArgumentsPlan>;
}

type Conversion = ReturnType<typeof toStrictSchema>;
const conversions = new WeakMap<JsonSchemaObject, Conversion>();

/**
 * Converts tool definitions for the wire. With `strict`, each tool whose schema the strict
 * dialect can express is sent strict; the others go non-strict and `warn` is called once per
 * schema object with the reason.
 */
export function prepareTools(
  definitions: readonly ToolDefinition[] | undefined,
  options: { strict: boolean; warn: (message: string) => void; warned: WeakSet<object> },
): PreparedTools {
  const tools: WireTool[] = [];
  const plans = new Map<string, StrictArgumentsPlan>();
  for (const definition of definitions ?? []) {
    if (!options.strict) {
      tools.push({
        name: definition.name,
        description: definition.description,
        parameters: definition.parameters,
        strict: false,
      });
      continue;
    }
    let conversion = conversions.get(definition.parameters);
    if (conversion === undefined) {
      conversion = toStrictSchema(definition.parameters);
      conversions.set(definition.parameters, conversion);
    }
    if (conversion.ok) {
      tools.push({
        name: definition.name,
        description: definition.description,
        parameters: conversion.schema,
        strict: true,
      });
      plans.set(definition.name, conversion.plan);
    } else {
      if (!options.warned.has(definition.parameters)) {
        options.warned.add(definition.parameters);
        options.warn(`Tool "${definition.name}" is sent without strict mode: ${conversion.reason}`);
      }
      tools.push({
        name: definition.name,
        description: definition.description,
        parameters: definition.parameters,
        strict: false,
      });
    }
  }
  return { tools, plans };
}

/**
 * The final tool-call block. For a tool sent strict, the `null`s that stood for absent optional
 * properties are removed from `arguments` (so the tool's validation sees the original shape);
 * the model's raw text is then kept in `providerMetadata.openai.rawArguments` and sent back
 * verbatim on the next turn. Malformed JSON is left as is for the loop to report.
 */
export function finalToolCall(
  call: { id: string; name: string; rawArguments: string; itemId?: string },
  plans: Map<string, StrictArgumentsPlan>,
): ToolCallContent {
  const toolCall: ToolCallContent = {
    type: 'toolCall',
    id: call.id,
    name: call.name,
    arguments: call.rawArguments,
  };
  const metadata: Record<string, unknown> = {};
  if (call.itemId !== undefined) metadata.itemId = call.itemId;
  const plan = plans.get(call.name);
  if (plan !== undefined) {
    const mapped = mapStrictArguments(call.rawArguments, plan);
    if (mapped !== call.rawArguments) {
      toolCall.arguments = mapped;
      metadata.rawArguments = call.rawArguments;
    }
  }
  if (Object.keys(metadata).length > 0) toolCall.providerMetadata = { openai: metadata };
  return toolCall;
}

/** Removes absent-meaning `null`s from raw argument text; returns the text unchanged when nothing was removed or it is not JSON. */
export function mapStrictArguments(raw: string, plan: StrictArgumentsPlan): string {
  if (!raw.includes('null') && !planHasMap(plan)) return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  const stripped = stripAbsentNulls(parsed, plan);
  const text = JSON.stringify(stripped);
  return text === JSON.stringify(parsed) ? raw : text;
}

/** The argument text to send back for a tool call: the model's own raw text when we rewrote it. */
export function replayArguments(toolCall: ToolCallContent): string {
  const raw = openaiMetadata(toolCall)?.rawArguments;
  return typeof raw === 'string' ? raw : toolCall.arguments;
}

/** This package's metadata on a tool call, if any. */
export function openaiMetadata(toolCall: ToolCallContent): Record<string, unknown> | undefined {
  const metadata = toolCall.providerMetadata?.openai;
  return typeof metadata === 'object' && metadata !== null
    ? (metadata as Record<string, unknown>)
    : undefined;
}
