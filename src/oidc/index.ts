export { mountOidcRoutes, ProviderSlot, type OidcRouteDeps, type SignInAudit } from './routes.js';
export { emailDomainAllowed, groupsOf, roleOfGroups, type MappedRole } from './roles.js';
