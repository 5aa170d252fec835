/**
 * The one Logger. Structured JSON (Powertools); never log a payload value, a
 * token or a query parameter value that could be a secret.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({
  serviceName: 'k8s-inventory',
  logLevel: (process.env.LOG_LEVEL as 'INFO' | undefined) ?? 'INFO',
});
