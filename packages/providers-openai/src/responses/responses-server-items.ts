// Output items the Responses API's own servers produced within a response (its web search, file
// search, code interpreter, image generation, remote MCP calls): kept as opaque content and sent
// back, in their place, to the provider that produced them. Dropped, the next request lacked them:
// the model lost what it had found, and a reasoning item replayed without the search call that
// followed it is refused by the API.
import type { OpaqueContent } from '@agent/core';
import type { ResponseInputItem } from 'openai/resources/responses/responses';

/**
 * Item kinds kept: only ones the API runs itself. An allow-list, so a hand-edited session cannot
 * slip a `message` or a `function_call_output` the transcript never shows into what the model
 * reads, and a client-side call (`computer_call`, `shell_call`…) is never replayed without its
 * output.
 */
const serverItemKinds: ReadonlySet<string> = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
]);

/** True for an output item the API's servers ran (kept as opaque content). */
export function isServerItem(item: { type: string }): boolean {
  return serverItemKinds.has(item.type);
}

/** An opaque block as the input item it came from, when it goes back to `providerId`. */
export function serverItemInput(
  block: OpaqueContent,
  providerId: string,
): ResponseInputItem | undefined {
  const data = block.data;
  if (block.provider !== providerId || typeof data?.type !== 'string') return undefined;
  if (!serverItemKinds.has(data.type)) return undefined;
  return data as unknown as ResponseInputItem;
}
