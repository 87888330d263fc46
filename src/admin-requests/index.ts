/**
 * What every /admin handler shares, whichever concern it belongs to: reading a request (bodies,
 * query parameters, date ranges, NUL-free paths), the caller's scope by role, and CSV answers.
 */
export { dayRange, descriptionField, expiresAtField, invalidQuery, invalidRequest, onlyParams, parseBody, refuseNul, singleParam } from './request.js';
export { adminOf, authorize, insufficientRole, narrowedTeam, teamScopeOf, type AdminRole, type RoleAccess, type RouteAccess } from './scope.js';
export { CsvNumber, toCsv } from './csv.js';
