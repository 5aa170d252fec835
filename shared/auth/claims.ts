/**
 * The caller's identity from a request's verified JWT claims. In AWS the HTTP
 * API's JWT authorizer verified the token and put its claims in
 * `requestContext.authorizer.jwt.claims`; the local API server puts the
 * claims it verified in the same place. Handlers never see the token itself.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { UnauthorizedError } from '../errors.ts';
import type { Principal } from './access.ts';

/** The principal of `event`; UnauthorizedError without verified claims. */
export function principalFromEvent(
  event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>,
): Principal {
  // The type says the authorizer is always there; an event from a route
  // deployed without one (or a local request without a token) has none.
  const claims = event.requestContext?.authorizer?.jwt?.claims as
    | Record<string, string | number | boolean | string[]>
    | undefined;
  const sub = claims?.sub;
  if (typeof sub !== 'string' || sub === '') {
    throw new UnauthorizedError('authentication required');
  }
  const email = claims?.email;
  // An email its issuer says it has not verified may be anyone's: it never
  // stands for the person a grant was made for. API Gateway passes claims
  // as strings, the local server too; a boolean is taken as well.
  const verified = claims?.email_verified;
  const unverified = verified === false || verified === 'false';
  return {
    sub,
    email:
      typeof email === 'string' && email !== '' && !unverified
        ? email
        : undefined,
  };
}
