// Who may do what in the dashboard. Every page and action names the permission it needs; the server checks it
// on every request (src/routes/dashboard.ts), whatever the page showed.

export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * `read`: every page; `write`: send, templates, domains, senders, suppressions, webhooks, keys' creation;
 * `revoke_keys`: revoke API keys and OTP tokens; `manage_members`: invite, change roles, remove, sign out.
 */
export type Permission = 'read' | 'write' | 'revoke_keys' | 'manage_members';

const GRANTS: Record<Role, readonly Permission[]> = {
  owner: ['read', 'write', 'revoke_keys', 'manage_members'],
  admin: ['read', 'write', 'revoke_keys', 'manage_members'],
  developer: ['read', 'write'],
  viewer: ['read'],
};

export const can = (role: Role, permission: Permission): boolean => GRANTS[role].includes(permission);

/** Only an owner makes, unmakes or removes an owner (an admin has everything but owners). */
export const canManageRole = (actor: Role, role: Role): boolean =>
  can(actor, 'manage_members') && (role !== 'owner' || actor === 'owner');

export const ROLE_SUMMARY: Record<Role, string> = {
  owner: 'Everything, including owners',
  admin: 'Everything but owners',
  developer: 'Everything but members and revoking keys',
  viewer: 'Reads only',
};
