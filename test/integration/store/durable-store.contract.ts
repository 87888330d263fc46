import { afterEach, beforeEach, describe } from 'vitest';
import type { DurableStore } from '../../../src/store/index.js';
import { describeAuditAndFeedContract } from './contract-audit-feed.js';
import { describeKeyContract } from './contract-keys.js';
import { describeLedgerContract } from './contract-ledger.js';
import { describeOverviewContract } from './contract-overview.js';
import { describeResourceContract } from './contract-resources.js';
import { describeTeamContract } from './contract-teams.js';

/** One database implementation, as the contract needs it. */
export interface ContractTarget {
  /** Opens a store on the current database (called again: a second instance, or a restart). */
  open(): Promise<DurableStore>;
  /** Starts the next test on an empty database. */
  empty(): Promise<void>;
}

/** What each part of the contract gets: the test's store, and more stores on the same data. */
export interface ContractContext {
  store(): DurableStore;
  openAnother(): Promise<DurableStore>;
}

/**
 * What every implementation must do the same way (SPEC 11–14), written once and run against
 * SQLite and PostgreSQL. Multi-instance behaviour (NOTIFY, races, migrations) lives in the
 * PostgreSQL tests.
 */
export function describeDurableStoreContract(name: string, target: ContractTarget): void {
  describe(`durable store contract (${name})`, () => {
    let store: DurableStore | undefined;
    const others: DurableStore[] = [];
    beforeEach(async () => {
      await target.empty();
      store = await target.open();
    });
    afterEach(async () => {
      await Promise.all([store, ...others.splice(0)].map((s) => s?.close()));
    });
    const context: ContractContext = {
      store: () => {
        if (!store) throw new Error('no store open');
        return store;
      },
      async openAnother() {
        const another = await target.open();
        others.push(another);
        return another;
      },
    };
    describeKeyContract(context);
    describeResourceContract(context);
    describeAuditAndFeedContract(context);
    describeLedgerContract(context);
    describeOverviewContract(context);
    describeTeamContract(context);
  });
}
