export { mountOidcRoutes, ProviderSlot, type OidcRouteDeps, type SignInAudit } from './routes.js';
export { emailDomainAllowed, groupsOf, roleOfGroups, type MappedRole } from './roles.js';
export { flowCookie, openFlow, sealFlow, type SignInFlow } from './flow-cookie.js';
