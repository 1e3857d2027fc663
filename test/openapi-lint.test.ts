import { createConfig, lintFromString } from '@redocly/openapi-core';
import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';

// The served document passes Redocly's recommended rules, with every warning an error, plus
// the rules that check each example against its schema (request bodies, parameters and
// responses): a document the usual tools read without complaint.

const t = useTestApp('sqlite');

it('passes the recommended OpenAPI lint rules with examples that match their schemas', { timeout: 60_000 }, async () => {
  const response = await t.request('GET', '/api/v1/openapi.json');
  expect(response.status).toBe(200);
  const config = await createConfig({
    extends: ['recommended-strict'],
    rules: {
      'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: false },
      'no-invalid-parameter-examples': 'error',
      'no-invalid-schema-examples': 'error',
    },
  });
  const problems = await lintFromString({ source: response.raw, absoluteRef: 'openapi.json', config });
  const described = problems.map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
  expect(described).toEqual([]);
});
