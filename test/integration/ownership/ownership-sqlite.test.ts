import { tempDatabasePath } from '../../helpers/gateway.js';
import { describeOwnership, describeProjectScope, type OwnershipStore } from './ownership-behaviour.js';

/** One SQLite file per suite: every gateway a suite starts (a restart included) opens the same one. */
function sqliteStore(): OwnershipStore {
  let path: string | undefined;
  return {
    name: 'SQLite',
    database: async () => ({ url: '', path: (path ??= tempDatabasePath()) }),
    drop: async () => undefined,
  };
}

describeOwnership(sqliteStore());
describeProjectScope(sqliteStore());
