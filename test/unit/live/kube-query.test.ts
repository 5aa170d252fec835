import { describe, expect, it, vi } from 'vitest';
import {
  commandSubject,
  kubeQueryRequestSchema,
  parseKubeQueryReply,
} from '../../../shared/live/kube-query.ts';

const base = {
  type: 'kube_query',
  version: 1,
  request_id: '3b0f6f7e-2f1c-4c59-9d3e-1b2a3c4d5e6f',
  actor: 'alice@example.com',
};

describe('kubeQueryRequestSchema', () => {
  it('reads a logs request and fills the defaults of what was left out', () => {
    // Act
    const request = kubeQueryRequestSchema.parse({
      ...base,
      query: 'logs',
      namespace: 'shop',
      pod: 'api-7d9f8c5b4-x2x9k',
    });

    // Assess
    expect(request).toMatchObject({
      query: 'logs',
      tail: 100,
      previous: false,
      timestamps: false,
    });
  });

  it('refuses a manifest of a Secret or ConfigMap, naming the field', () => {
    for (const kind of ['Secret', 'ConfigMap']) {
      // Act
      const result = kubeQueryRequestSchema.safeParse({
        ...base,
        query: 'manifest',
        kind,
        namespace: 'shop',
        name: 'db',
      });

      // Assess
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(['kind']);
    }
  });

  it('refuses revisions of a kind without a rollout history', () => {
    const result = kubeQueryRequestSchema.safeParse({
      ...base,
      query: 'revisions',
      kind: 'Pod',
      namespace: 'shop',
      name: 'api',
    });
    expect(result.success).toBe(false);
  });

  it.each([
    ['tail', 0],
    ['tail', 301],
    ['namespace', 'Shop'],
    ['pod', 'a_b'],
    ['since_time', '2026-10-01 11:58'],
  ])('refuses a logs request whose %s is %s', (field, value) => {
    const result = kubeQueryRequestSchema.safeParse({
      ...base,
      query: 'logs',
      namespace: 'shop',
      pod: 'api-0',
      [field]: value,
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([field]);
  });
});

describe('parseKubeQueryReply', () => {
  it('checks a success result against the query it answers', () => {
    // Prepare
    const reply = {
      ok: true,
      agent_version: 'v0.9.0',
      observed_at: '2026-10-01T12:00:00Z',
      result: { pod: 'api-0', lines: [] },
    };

    // Act / Assess
    expect(() => parseKubeQueryReply('logs', reply)).toThrow();
    const good = parseKubeQueryReply('logs', {
      ...reply,
      result: {
        pod: 'api-0',
        container: 'api',
        previous: false,
        lines: ['x'],
        truncated: false,
        timestamps: false,
      },
    });
    expect(good.ok && good.result.lines).toEqual(['x']);
    expect(good.ok && good.notes).toEqual([]);
  });

  it('reads an error reply with its code', () => {
    const reply = parseKubeQueryReply('manifest', {
      ok: false,
      agent_version: 'v0.9.0',
      error: { code: 'not_found', message: 'deployments "x" not found' },
    });
    expect(reply.ok).toBe(false);
    expect(!reply.ok && reply.error.code).toBe('not_found');
  });

  it('names the command subject after the lower-cased agent id', () => {
    expect(commandSubject('3B0F6F7E-2F1C-4C59-9D3E-1B2A3C4D5E6F')).toBe(
      'proxima.system.commands.3b0f6f7e-2f1c-4c59-9d3e-1b2a3c4d5e6f',
    );
  });
});

describe('the schemas are built when first parsed', () => {
  /** Whether `schema` is a z.lazy whose inner schema is not built yet. */
  const unbuilt = (schema: { _zod: { def: object } }) => {
    const def = schema._zod.def as { type: string; _cachedInner?: unknown };
    return def.type === 'lazy' && def._cachedInner === undefined;
  };

  it('a manifest reply builds only what reads it: no request schema, no other result', async () => {
    // Prepare: a module instance of its own, which no other test parsed with.
    vi.resetModules();
    const kubeQuery = await import('../../../shared/live/kube-query.ts');
    const schemas = {
      manifestRequestSchema: kubeQuery.manifestRequestSchema,
      revisionsRequestSchema: kubeQuery.revisionsRequestSchema,
      logsRequestSchema: kubeQuery.logsRequestSchema,
      kubeQueryRequestSchema: kubeQuery.kubeQueryRequestSchema,
      manifestResultSchema: kubeQuery.manifestResultSchema,
      revisionSchema: kubeQuery.revisionSchema,
      revisionsResultSchema: kubeQuery.revisionsResultSchema,
      logsResultSchema: kubeQuery.logsResultSchema,
      kubeQueryReplySchema: kubeQuery.kubeQueryReplySchema,
    };
    expect(
      Object.entries(schemas)
        .filter(([, schema]) => !unbuilt(schema))
        .map(([name]) => name),
    ).toEqual([]);

    // Act
    kubeQuery.parseKubeQueryReply('manifest', {
      ok: true,
      agent_version: 'v0.9.0',
      observed_at: '2026-10-01T12:00:00Z',
      result: {
        kind: 'Deployment',
        namespace: 'shop',
        name: 'api',
        object: {},
      },
    });

    // Assess
    expect(unbuilt(schemas.kubeQueryReplySchema)).toBe(false);
    expect(unbuilt(schemas.manifestResultSchema)).toBe(false);
    expect(
      Object.entries(schemas)
        .filter(([, schema]) => unbuilt(schema))
        .map(([name]) => name),
    ).toEqual([
      'manifestRequestSchema',
      'revisionsRequestSchema',
      'logsRequestSchema',
      'kubeQueryRequestSchema',
      'revisionSchema',
      'revisionsResultSchema',
      'logsResultSchema',
    ]);
  });
});
