/** Admin keys made at run time (SPEC 16): their admin operations, sync across instances, the /admin/admin-keys handlers. Checking a presented one is auth/'s. */
export { AdminKeyAdmin, syncAdminKeys, type AdminKeyView, type NewAdminKey } from './admin-key-admin.js';
export { createAdminKeyHandler, getAdminKeyHandler, listAdminKeysHandler, revokeAdminKeyHandler, rotateAdminKeyHandler, updateAdminKeyHandler } from './admin-key-routes.js';
