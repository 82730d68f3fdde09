/**
 * How much of one tool result the model is given. The agent loop clips only results older than
 * the newest batch, so a server that answered with 200 MB of text (or fifty 5 MiB images) had all
 * of it sent in the next request, which the provider refused — a context overflow that stays in
 * the conversation. Text (and structured content) past `maxResultChars` is cut, head and tail
 * kept; images past 20 per result or 20 MiB together are described instead. `details` keep what
 * the server sent.
 */
import { clipText, jsonContentText, type ToolResult, type ToolResultContent } from '@agent/core';

/** Default of `maxResultChars`: characters of text (and JSON) of one result the model reads. */
export const defaultMaxResultChars = 100_000;
/** Images of one result passed to the model at most. */
export const maxImagesPerResult = 20;
/** Bytes of all images of one result passed to the model at most (decoded). */
export const maxImageBytesPerResult = 20 * 1024 * 1024;
/** Below this many characters left, a text block is left out whole rather than cut to a stub. */
const smallestCut = 200;

/** A result within the budget, and our note on what was cut (to add after the server's blocks). */
export function boundResult<T>(
  result: ToolResult<T>,
  maxChars: number,
): { result: ToolResult<T>; note: string | undefined } {
  let left = maxChars;
  let images = 0;
  let imageBytes = 0;
  let cutBlocks = 0;
  let droppedChars = 0;
  let droppedImages = 0;
  const content: ToolResultContent[] = [];
  for (const block of result.content) {
    if (block.type === 'text' || block.type === 'json') {
      const length = block.type === 'text' ? block.text.length : jsonContentText(block).length;
      if (length <= left) {
        content.push(block);
        left -= length;
        continue;
      }
      cutBlocks++;
      if (left >= smallestCut) {
        const text = block.type === 'text' ? block.text : jsonContentText(block);
        content.push({ type: 'text', text: clipText(text, left) });
        droppedChars += length - left;
        left = 0;
      } else droppedChars += length;
    } else if (block.type === 'image') {
      const bytes = Math.floor((block.data.length * 3) / 4);
      if (images < maxImagesPerResult && imageBytes + bytes <= maxImageBytesPerResult) {
        content.push(block);
        images++;
        imageBytes += bytes;
      } else droppedImages++;
    } else content.push(block);
  }
  if (cutBlocks === 0 && droppedImages === 0) return { result, note: undefined };
  const parts: string[] = [];
  if (cutBlocks > 0)
    parts.push(
      `${droppedChars.toLocaleString('en-US')} characters of text were cut (maxResultChars: ${maxChars.toLocaleString('en-US')})`,
    );
  if (droppedImages > 0)
    parts.push(
      `${droppedImages} image${droppedImages === 1 ? ' was' : 's were'} left out (at most ${maxImagesPerResult} images and ${maxImageBytesPerResult / 1024 / 1024} MiB per result)`,
    );
  if (content.length === 0) content.push({ type: 'text', text: '(nothing of the result fits)' });
  return {
    result: { ...result, content },
    note: `[The result was too large: ${parts.join('; ')}. Ask the tool for less if you need the rest.]`,
  };
}
