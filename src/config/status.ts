/** The last reload (SPEC 12.2): when, and whether it was applied or refused (with why). */
export interface LastReload {
  readonly at: string;
  readonly outcome: 'applied' | 'refused';
  readonly error?: string;
}

/** What the console's Settings page shows of the running configuration (`GET /admin/config`). */
export interface ConfigStatusView {
  /** The file the configuration was read from, or a description when there is none. */
  readonly source: string;
  /** When the running configuration was read: start-up, or the last applied reload. */
  readonly loadedAt: string;
  readonly lastReload: LastReload | null;
  /** Restart-only settings the file (as last reloaded) changes but this process still runs as it started. */
  readonly restartRequired: readonly string[];
}

/**
 * The running configuration's history, as the reloader records it. A refused reload leaves
 * `loadedAt` and `restartRequired` as they were: nothing of that file was applied.
 */
export class ConfigStatus {
  private loadedAt: string;
  private lastReload: LastReload | null = null;
  private restartRequired: readonly string[] = [];

  constructor(
    private readonly source: string,
    startedAt: Date = new Date(),
  ) {
    this.loadedAt = startedAt.toISOString();
  }

  /** A reload was applied; `restartRequired` is its diff's (each reload diffs against what runs, so it is the whole pending list). */
  applied(restartRequired: readonly string[], at: Date = new Date()): void {
    this.loadedAt = at.toISOString();
    this.lastReload = { at: this.loadedAt, outcome: 'applied' };
    this.restartRequired = [...restartRequired];
  }

  refused(error: string, at: Date = new Date()): void {
    this.lastReload = { at: at.toISOString(), outcome: 'refused', error };
  }

  view(): ConfigStatusView {
    return { source: this.source, loadedAt: this.loadedAt, lastReload: this.lastReload, restartRequired: this.restartRequired };
  }
}
