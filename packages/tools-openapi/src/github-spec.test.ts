import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { toolNamePattern } from '@agent/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { httpMethods } from './normalized-types.js';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';

// GitHub's real REST API description (api.github.com, OpenAPI 3.0, ~13 MB of JSON).
const specPath = createRequire(import.meta.url).resolve(
  '@octokit/openapi/generated/api.github.com.json',
);

describe("GitHub's api.github.com OpenAPI document", () => {
  it('loads whole: one valid, unique, self-contained tool per operation', async () => {
    const text = readFileSync(specPath, 'utf8');
    const document = JSON.parse(text) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.keys(item).filter((key) => (httpMethods as readonly string[]).includes(key)),
    );

    const started = performance.now();
    const warnings: string[] = [];
    const adapter = await OpenApiToolAdapter.fromFile(specPath, {
      maxTools: Number.POSITIVE_INFINITY,
      onWarning: (message) => warnings.push(message),
    });
    const loadMs = performance.now() - started;
    // Reported, not asserted: timings belong to bench/.
    console.info(
      `api.github.com: ${adapter.tools.length} tools from ${operations.length} operations in ${loadMs.toFixed(0)} ms (${warnings.length} warnings)`,
    );

    expect(adapter.specVersion).toBe('3.0');
    expect(adapter.operationCount).toBe(operations.length);
    expect(adapter.tools).toHaveLength(operations.length);
    const names = adapter.tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    const invalid = names.filter((name) => !toolNamePattern.test(name));
    expect(invalid).toEqual([]);

    const withRefs: string[] = [];
    const notCompiling: string[] = [];
    for (const tool of adapter.tools) {
      expect(tool.parameters.type).toBe('object');
      expect(tool.source).toBe('openapi:githubs-official-openapi-spec');
      const json = JSON.stringify(tool.parameters);
      if (json.includes('"$ref"') || json.includes('"$schema"')) withRefs.push(tool.name);
      try {
        // The validator core uses for plain JSON Schema tools must accept every schema.
        z.fromJSONSchema(tool.parameters as Parameters<typeof z.fromJSONSchema>[0]);
      } catch (error) {
        notCompiling.push(`${tool.name}: ${String(error)}`);
      }
    }
    expect(withRefs).toEqual([]);
    expect(notCompiling).toEqual([]);

    const getRepo = adapter.tool('repos_get');
    expect(getRepo?.operation).toMatchObject({ method: 'GET', path: '/repos/{owner}/{repo}' });
    expect(getRepo?.permissionSubjects?.({ owner: 'o', repo: 'r' })).toEqual([
      'GET /repos/{owner}/{repo}',
    ]);
    expect(getRepo?.parameters.required).toEqual(['owner', 'repo']);
    const createIssue = adapter.tool('issues_create');
    expect(createIssue?.policy?.permission).toBe('full-access');
    expect(createIssue?.parameters.properties?.body?.required).toEqual(['title']);
    expect(createIssue?.validate?.({ owner: 'o', repo: 'r', body: { title: 'Bug' } }).ok).toBe(
      true,
    );
    expect(createIssue?.validate?.({ owner: 'o', repo: 'r', body: {} }).ok).toBe(false);
    // 1,223 operations, each compiled by Ajv: seconds alone, past 30 s on a loaded 2-core CI.
  }, 120_000);
});
