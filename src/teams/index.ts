/** Teams (SPEC 16): records from the config file and the durable store, their limits and spend, the admin operations on them and the /admin/teams handlers. */
export { TeamDirectory, type Team } from './directory.js';
export { startTeamSync } from './team-sync.js';
export { createTeamHandler, deleteTeamHandler, getTeamHandler, listTeamsHandler, updateTeamHandler } from './team-routes.js';
export { TeamAdmin, teamNotFound, type NewTeam, type SpendView, type TeamView } from './team-admin.js';
