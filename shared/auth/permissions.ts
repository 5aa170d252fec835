/** Permissions the API checks, as the spec names them. */
export const PERMISSIONS = [
  'assets:read',
  'assets:write',
  'metrics:read',
  'logs:read',
  'changes:read',
  'alerts:read',
  // Beyond the spec: the live-read audit trail (GET /api/v1/audit/live-reads).
  'audit:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
