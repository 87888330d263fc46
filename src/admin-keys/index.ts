/** Admin keys made at run time (SPEC 16): the /admin/admin-keys handlers. */
export { createAdminKeyHandler, getAdminKeyHandler, listAdminKeysHandler, revokeAdminKeyHandler, rotateAdminKeyHandler, updateAdminKeyHandler } from './admin-key-routes.js';
