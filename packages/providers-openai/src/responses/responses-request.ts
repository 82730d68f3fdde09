// The Responses API request body.
import type { ProviderRequest } from '@agent/core';
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import type { BuildContext } from '../chat/chat-request.js';
import { functionTool, toResponsesInput } from './responses-messages.js';
import { applyProgrammaticToolCalling } from './responses-programmatic.js';

/** The Responses API request body for a provider request. */
export function buildResponsesRequest(
  request: ProviderRequest,
  context: BuildContext,
): ResponseCreateParamsStreaming {
  const body: ResponseCreateParamsStreaming = {
    model: request.model,
    input: toResponsesInput(request, context.providerId, context.tools),
    stream: true,
  };
  if (request.systemPrompt !== undefined && request.systemPrompt !== '')
    body.instructions = request.systemPrompt;
  const deferral = request.deferredTools;
  const deferred = new Set(deferral?.tools.map((tool) => tool.name));
  if (context.tools.tools.length > 0) {
    body.tools = context.tools.tools
      .filter((tool) => !deferred.has(tool.name))
      .map((tool): NonNullable<typeof body.tools>[number] => {
        if (tool.name !== deferral?.searchTool) return functionTool(tool);
        // The agent's search, run by us: the model calls it as `tool_search` and gets the
        // definitions it loaded in a `tool_search_output` (appended, so the cache holds).
        const original = request.tools?.find((definition) => definition.name === tool.name);
        return {
          type: 'tool_search',
          execution: 'client',
          description: tool.description,
          parameters: original?.parameters ?? tool.parameters,
        };
      });
    const choice = request.toolChoice;
    if (choice !== undefined)
      body.tool_choice =
        typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
  }
  for (const hosted of request.hostedTools ?? []) {
    if (hosted.type !== 'web_search') continue;
    // OpenAI's own web search: run by the API within this response; citations come back as
    // url_citation annotations on the output text.
    const search: Record<string, unknown> = { type: 'web_search' };
    if (hosted.allowedDomains !== undefined && hosted.allowedDomains.length > 0)
      search.filters = { allowed_domains: [...hosted.allowedDomains] };
    body.tools = [
      ...(body.tools ?? []),
      search as unknown as NonNullable<typeof body.tools>[number],
    ];
  }
  applyProgrammaticToolCalling(body, context.programmatic);
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  const level = request.thinkingLevel;
  const wantsReasoning =
    context.compat.reasoningEffort && context.reasoning && level !== undefined && level !== 'off';
  if (wantsReasoning) body.reasoning = { effort: level, summary: 'auto' };
  if (context.compat.statelessResponses) {
    body.store = false;
    // Without storage, reasoning can only be replayed from its encrypted content — asked for
    // whenever the model reasons, which a reasoning model does with no level set too (its
    // default effort): without it, those reasoning items came back unreplayable and were lost.
    if (context.compat.reasoningEffort && context.reasoning)
      body.include = ['reasoning.encrypted_content'];
  }
  return body;
}
