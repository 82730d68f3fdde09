// The SDK parameters of a request: contents, system instruction, tools in Gemini's schema
// dialect, tool choice, search grounding and thinking.
import type { ProviderRequest, ToolChoice } from '@agent/core';
import {
  FunctionCallingConfigMode,
  type FunctionDeclaration,
  ThinkingLevel as GeminiThinkingLevel,
  type GenerateContentConfig,
  type GenerateContentParameters,
  type ThinkingConfig,
} from '@google/genai';
import { toGeminiContents } from './gemini-messages.js';
import { findGeminiModel } from './gemini-models.js';
import type { GeminiBudgetLevel, GeminiProviderOptions } from './gemini-provider.js';
import { toGeminiSchema } from './gemini-schema.js';

const defaultThinkingBudgets: Record<GeminiBudgetLevel, number> = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24_576,
};

const geminiLevels: Record<GeminiBudgetLevel, GeminiThinkingLevel> = {
  minimal: GeminiThinkingLevel.MINIMAL,
  low: GeminiThinkingLevel.LOW,
  medium: GeminiThinkingLevel.MEDIUM,
  high: GeminiThinkingLevel.HIGH,
};

function toolConfig(choice: ToolChoice): GenerateContentConfig['toolConfig'] {
  if (choice === 'auto') return { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } };
  if (choice === 'none') return { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } };
  if (choice === 'required')
    return { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } };
  return {
    functionCallingConfig: {
      mode: FunctionCallingConfigMode.ANY,
      allowedFunctionNames: [choice.name],
    },
  };
}

function thinkingConfig(
  request: ProviderRequest,
  options: GeminiProviderOptions,
): ThinkingConfig | undefined {
  const level = request.thinkingLevel;
  if (level === undefined) return undefined;
  const info = findGeminiModel(request.model);
  const usesLevels = info?.thinkingLevels ?? /(^|\/)gemini-3/.test(request.model);
  if (level === 'off') {
    // Gemini 3 cannot turn thinking off; 2.5 Pro needs at least 128 tokens.
    if (usesLevels) return { thinkingLevel: GeminiThinkingLevel.LOW, includeThoughts: false };
    return { thinkingBudget: request.model.includes('pro') ? 128 : 0, includeThoughts: false };
  }
  if (usesLevels) return { thinkingLevel: geminiLevels[level], includeThoughts: true };
  return {
    thinkingBudget: options.thinkingBudgets?.[level] ?? defaultThinkingBudgets[level],
    includeThoughts: true,
  };
}

/** Builds the SDK parameters for a provider request (without signal and transport options). */
export function buildGeminiParams(
  request: ProviderRequest,
  providerId: string,
  options: GeminiProviderOptions = {},
  warn: (message: string) => void = (message) => console.warn(message),
): GenerateContentParameters {
  const config: GenerateContentConfig = {
    // We run our own retries; continuation hops would re-send on their own.
    automaticContinuation: false,
  };
  if (request.systemPrompt !== undefined && request.systemPrompt !== '')
    config.systemInstruction = request.systemPrompt;
  if (request.tools !== undefined && request.tools.length > 0) {
    const dialect = options.schemaDialect ?? 'json-schema';
    const declarations: FunctionDeclaration[] = request.tools.map((tool) => {
      const { schema, warnings } = toGeminiSchema(tool.parameters, dialect);
      for (const warning of warnings)
        warn(`Gemini tool "${tool.name}": ${warning} (still enforced when validating arguments)`);
      const declaration: FunctionDeclaration = { name: tool.name, description: tool.description };
      // The OpenAPI form rejects an OBJECT without properties ("should be non-empty for OBJECT
      // type"): a parameterless tool is declared without `parameters`.
      if (dialect === 'openapi') {
        if (hasProperties(schema)) declaration.parameters = schema;
      } else declaration.parametersJsonSchema = schema;
      return declaration;
    });
    config.tools = [{ functionDeclarations: declarations }];
    if (request.toolChoice !== undefined) {
      const tools = toolConfig(request.toolChoice);
      if (tools !== undefined) config.toolConfig = tools;
    }
  }
  for (const hosted of request.hostedTools ?? []) {
    if (hosted.type !== 'web_search') continue;
    // Grounding with Google Search: run by the API; sources come back as groundingMetadata.
    config.tools = [...(config.tools ?? []), { googleSearch: {} }];
    if ((hosted.allowedDomains?.length ?? 0) > 0 || (hosted.blockedDomains?.length ?? 0) > 0)
      warn('Gemini search grounding takes no domain lists; allowedDomains/blockedDomains ignored');
  }
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  const thinking = thinkingConfig(request, options);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return {
    model: request.model,
    contents: toGeminiContents(request.messages, providerId),
    config,
  };
}

function hasProperties(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  return (
    (properties !== null && typeof properties === 'object' && Object.keys(properties).length > 0) ||
    schema.anyOf !== undefined
  );
}
