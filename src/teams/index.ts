/** Teams (SPEC 16): records from the config file and the durable store, their limits and spend, the admin operations on them. */
export { TeamDirectory, type Team } from './directory.js';
export { startTeamSync } from './team-sync.js';
export { TeamAdmin, teamNotFound, type NewTeam, type SpendView, type TeamView } from './team-admin.js';
