import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { principalFromEvent } from '../../../shared/auth/claims.ts';
import { UnauthorizedError } from '../../../shared/errors.ts';

/** The part of an HTTP API (payload 2.0) event the JWT authorizer fills. */
function eventWith(
  claims: Record<string, string> | undefined,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  return {
    requestContext: {
      routeKey: 'GET /api/v1/clusters',
      ...(claims && {
        authorizer: {
          principalId: '',
          integrationLatency: 0,
          jwt: { claims, scopes: [] },
        },
      }),
    },
  } as unknown as APIGatewayProxyEventV2WithJWTAuthorizer;
}

describe('principalFromEvent', () => {
  it('reads sub and email from the authorizer claims', () => {
    // Act
    const principal = principalFromEvent(
      eventWith({
        sub: 'auth0|42',
        email: 'alice@example.com',
        iss: 'https://issuer',
      }),
    );

    // Assess
    expect(principal).toEqual({ sub: 'auth0|42', email: 'alice@example.com' });
  });

  it('accepts a subject without an email (it then holds no grants)', () => {
    // Act
    const principal = principalFromEvent(eventWith({ sub: 'svc' }));

    // Assess
    expect(principal).toEqual({ sub: 'svc', email: undefined });
  });

  it('takes no email from a token whose issuer did not verify it, so it matches no grant', () => {
    // Act: API Gateway passes every claim as a string.
    const unverified = principalFromEvent(
      eventWith({
        sub: 'idp|7',
        email: 'alice@example.com',
        email_verified: 'false',
      }),
    );
    const verified = principalFromEvent(
      eventWith({
        sub: 'idp|8',
        email: 'alice@example.com',
        email_verified: 'true',
      }),
    );

    // Assess
    expect(unverified).toEqual({ sub: 'idp|7', email: undefined });
    expect(verified).toEqual({ sub: 'idp|8', email: 'alice@example.com' });
  });

  it('refuses an event without verified claims', () => {
    // Act + Assess
    expect(() => principalFromEvent(eventWith(undefined))).toThrow(
      UnauthorizedError,
    );
    expect(() => principalFromEvent(eventWith({ email: 'a@b' }))).toThrow(
      UnauthorizedError,
    );
  });
});
