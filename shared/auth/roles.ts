/**
 * Roles bundle permissions. A grant (shared/auth/grants.ts) gives one role
 * on a client, or on one environment of it; the roles themselves live here
 * in code, and migration 0001's check constraint keeps stored names valid.
 *
 * - viewer: reads the inventory (assets:read), as the spec says of "all
 *   system roles".
 * - operator: also the operate views: metrics charts, live container logs,
 *   recorded changes and alerts. Logs can carry application data, so they sit
 *   with the role that operates the workloads, not with a plain reader.
 * - admin and super_admin: everything above plus assets:write (the spec's
 *   "Super Admin, Admin") and audit:read, the live-read audit trail: who
 *   read which logs and manifests is for the tenant's administrators, not
 *   for the operators being audited. A super_admin grant is still scoped to
 *   the client (or environment) it names; no role is global.
 */
import type { Permission } from './permissions.ts';

export const ROLES = ['viewer', 'operator', 'admin', 'super_admin'] as const;

export type Role = (typeof ROLES)[number];

const viewer: readonly Permission[] = ['assets:read'];
const operator: readonly Permission[] = [
  ...viewer,
  'metrics:read',
  'logs:read',
  'changes:read',
  'alerts:read',
];
const admin: readonly Permission[] = [
  ...operator,
  'assets:write',
  'audit:read',
];

export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  viewer,
  operator,
  admin,
  super_admin: admin,
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function roleHas(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}
