import { errorMessage } from '@agent/core';
import { parse as parseYaml } from 'yaml';
import { OpenApiSpecError } from './spec-error.js';

/**
 * Parses an OpenAPI document written as JSON or YAML. Text that starts with `{` is read as JSON
 * (fast, and its errors name the position); anything else as YAML 1.2 with merge keys. A web page
 * or JSON that starts with a comment is said as such.
 */
export function parseDocumentText(text: string): unknown {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') throw new OpenApiSpecError('Cannot parse the OpenAPI document: it is empty');
  const problem = notADocument(trimmed);
  if (problem !== undefined)
    throw new OpenApiSpecError(`Cannot parse the OpenAPI document: ${problem}`);
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch (jsonError) {
      // A flow-style YAML mapping also starts with `{`.
      try {
        return parseYaml(trimmed, { merge: true });
      } catch {
        throw new OpenApiSpecError(
          `Cannot parse the OpenAPI document as JSON: ${errorMessage(jsonError)}`,
          {
            cause: jsonError,
          },
        );
      }
    }
  }
  try {
    return parseYaml(trimmed, { merge: true });
  } catch (error) {
    throw new OpenApiSpecError(
      `Cannot parse the OpenAPI document as YAML: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Why a text is no OpenAPI document, where the cause is a common one, said before a parser quotes it:
 * a web page (`--openapi https://docs.example.com/api`, the documentation rather than its
 * openapi.json), a JSON file that starts with a comment. Before, the check that follows said
 * "the document must be an object, found a string" and quoted the page (or YAML's error did).
 */
function notADocument(text: string): string | undefined {
  if (/^<(!doctype|html|\?xml|head|body)\b/i.test(text))
    return 'it is an HTML or XML page, not an OpenAPI document (JSON or YAML); for a documentation site, give the address of its openapi.json or openapi.yaml';
  if (/^(\/\/|\/\*)/.test(text))
    return 'it starts with a comment, which JSON does not allow (remove the comments, or write the document as YAML, whose comments start with #)';
  return undefined;
}
