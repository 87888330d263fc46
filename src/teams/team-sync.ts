import { StoreMirror, type StoreHandle } from '../store/index.js';
import type { TeamDirectory } from './directory.js';

/** This instance's stored teams kept in step with the durable store (see StoreMirror): a change reaches every instance within 1 s. */
export function startTeamSync(handle: StoreHandle, teams: TeamDirectory, options: { refreshIntervalMs: number; onError: (err: unknown) => void }): StoreMirror {
  return new StoreMirror(handle, {
    refreshIntervalMs: options.refreshIntervalMs,
    onError: options.onError,
    loadAll: async (store) => teams.replaceAll(await store.listTeams()),
    loadOne: async (store, id) => teams.apply(id, await store.getTeam(id)),
    idOf: (change) => (change.kind === 'team' ? change.id : undefined),
  });
}
