/**
 * The one Logger. Structured JSON (Powertools); never log a payload value, a
 * token or a query parameter value that could be a secret. Its level is the
 * configuration's LOG_LEVEL.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { logLevelOf } from '../config.ts';

export const logger = new Logger({
  serviceName: 'k8s-inventory',
  logLevel: logLevelOf(),
});
