/**
 * docs/api.md, the API reference a reader opens first: rendered from the
 * OpenAPI document (itself generated from the route table), so it lists
 * exactly the routes, methods, permissions, parameters and error codes the
 * code serves. `npm run openapi` writes it beside docs/openapi.json and a
 * test fails while either is stale.
 */
import { openApiDocument } from './openapi.ts';

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Record<string, unknown>;
}

interface Operation {
  operationId: string;
  summary: string;
  description: string;
  'x-permissions': string[];
  'x-unknown-parameter-code': string;
  parameters: Parameter[];
  responses: Record<string, { 'x-error-codes'?: string[] }>;
}

/** A parameter's rule in a few words, from its JSON Schema. */
function ruleOf(schema: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof schema.description === 'string') parts.push(schema.description);
  if (typeof schema.description !== 'string' && Array.isArray(schema.enum)) {
    parts.push(
      `one of ${schema.enum.map((value) => `\`${value}\``).join(', ')}`,
    );
  }
  if (schema.const !== undefined) parts.push(`only \`${schema.const}\``);
  if (schema.default !== undefined) parts.push(`default \`${schema.default}\``);
  return parts.join('; ');
}

function parameterLine(parameter: Parameter): string {
  const where = parameter.in === 'path' ? 'path' : 'query';
  const required = parameter.required ? 'required' : 'optional';
  const rule = ruleOf(parameter.schema);
  return `| \`${parameter.name}\` | ${where} | ${required} | ${rule} |`;
}

function operationSection(
  method: string,
  path: string,
  operation: Operation,
): string[] {
  const lines = [
    `### ${method.toUpperCase()} \`${path}\``,
    '',
    `${operation.summary}. ${operation.description}`,
    '',
    `Function: \`functions/api/${operation.operationId}.ts\`. Permissions: ${
      operation['x-permissions'].length > 0
        ? operation['x-permissions'].map((p) => `\`${p}\``).join(', ')
        : 'none'
    }.`,
    '',
  ];
  if (operation.parameters.length > 0) {
    lines.push(
      '| parameter | in | | rule |',
      '|---|---|---|---|',
      ...operation.parameters.map(parameterLine),
      '',
      `An unknown query parameter is a 400 \`${operation['x-unknown-parameter-code']}\` naming it.`,
      '',
    );
  }
  const errors = Object.entries(operation.responses)
    .filter(([status]) => status !== '200')
    .map(
      ([status, response]) =>
        `${status} ${(response['x-error-codes'] ?? []).map((code) => `\`${code}\``).join(', ')}`,
    );
  lines.push(`Errors: ${errors.join('; ')}.`, '');
  return lines;
}

/** The reference as docs/api.md holds it. */
export async function apiReferenceText(): Promise<string> {
  const document = (await openApiDocument()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  const entries = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method,
      path,
      operation,
    })),
  );
  const lines = [
    '# API reference',
    '',
    '<!-- Generated from shared/http/routes.ts by `npm run openapi`; do not edit. -->',
    '',
    `${entries.length} routes. Each takes a bearer JWT unless it says otherwise and answers`,
    '`{"data": ..., "meta"?: ...}`, or `{"error": {"code", "message", "details"?}}`. Access is',
    "checked before any parameter: a cluster outside the caller's environments is 404, one without",
    'the permission on its environment 403, and only then is a bad parameter a 400 naming it. The',
    "machine-readable form, with each parameter's JSON Schema, is `docs/openapi.json`.",
    '',
    '| method | path | permissions | summary |',
    '|---|---|---|---|',
    ...entries.map(
      ({ method, path, operation }) =>
        `| ${method.toUpperCase()} | \`${path}\` | ${operation['x-permissions'].join(', ') || 'none'} | ${operation.summary} |`,
    ),
    '',
    '## Routes',
    '',
    ...entries.flatMap(({ method, path, operation }) =>
      operationSection(method, path, operation),
    ),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}
