import { describe, expect, it } from 'vitest';
import { expectDocumentedError } from '../../helpers/api-server.ts';

describe("the test client's check of error answers against the route table", () => {
  it('passes a documented code with its status and a success', () => {
    // Act / Assess
    expect(() =>
      expectDocumentedError('GET', '/api/v1/clusters/x/live/logs', 504, {
        error: { code: 'agent_timeout' },
      }),
    ).not.toThrow();
    expect(() =>
      expectDocumentedError('GET', '/api/v1/clusters', 200, { data: [] }),
    ).not.toThrow();
  });

  it('fails a code the route does not document, or one under another status', () => {
    // Act / Assess
    expect(() =>
      expectDocumentedError('GET', '/api/v1/clusters/x/pods', 504, {
        error: { code: 'agent_timeout' },
      }),
    ).toThrow(/list-pods answered 504 agent_timeout/);
    expect(() =>
      expectDocumentedError('GET', '/api/v1/clusters/x/live/logs', 502, {
        error: { code: 'agent_timeout' },
      }),
    ).toThrow(/comes with 504/);
    expect(() =>
      expectDocumentedError('GET', '/api/v1/clusters', 500, 'plain text'),
    ).toThrow(/undefined/);
  });
});
