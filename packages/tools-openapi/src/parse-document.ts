import { errorMessage } from '@agent/core';
import { parse as parseYaml } from 'yaml';
import { OpenApiSpecError } from './spec-error.js';

/**
 * Parses an OpenAPI document written as JSON or YAML. Text that starts with `{` is read as JSON
 * (fast, and its errors name the position); anything else as YAML 1.2 with merge keys.
 */
export function parseDocumentText(text: string): unknown {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') throw new OpenApiSpecError('Cannot parse the OpenAPI document: it is empty');
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
