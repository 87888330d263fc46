import { useState } from 'preact/hooks';
import { adminUrl, ApiError, call, type ConfigState, type Session } from '../api.js';
import { formatTime } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { LoadError, Panel } from '../ui/widgets.js';

interface ReloadAnswer {
  readonly status: string;
  readonly changed?: readonly string[];
  readonly restartRequired?: readonly string[];
}

/** The running configuration (admins only: GET /admin/config), and the Reload button. */
function RunningConfig() {
  const config = useLoad(() => call<ConfigState>(adminUrl('config')), []);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const reload = (): void => {
    setOutcome(null);
    call<ReloadAnswer>(adminUrl('config/reload'), { method: 'POST' }).then(
      (answer) => (setOutcome({ ok: true, text: `Reloaded: ${answer.changed?.length ? `changed ${answer.changed.join(', ')}` : 'nothing changed'}.` }), config.reload()),
      (err: unknown) => (setOutcome({ ok: false, text: err instanceof ApiError ? err.message : String(err) }), config.reload()),
    );
  };
  const data = config.data;
  return (
    <Panel title="Running configuration" actions={<button type="button" onClick={reload}>Reload</button>}>
      <LoadError error={config.error} />
      {outcome !== null && <p class={outcome.ok ? 'notice' : 'form-error'} role="status">{outcome.text}</p>}
      {data !== null && (
        <dl class="details">
          <div><dt>Source</dt><dd>{data.source}</dd></div>
          <div><dt>Loaded</dt><dd>{formatTime(data.loadedAt)}</dd></div>
          <div>
            <dt>Last reload</dt>
            <dd>{data.lastReload === null ? 'none since start' : `${formatTime(data.lastReload.at)}: ${data.lastReload.outcome}${data.lastReload.error ? ` — ${data.lastReload.error}` : ''}`}</dd>
          </div>
          <div>
            <dt>Changes that need a restart</dt>
            <dd>{data.restartRequired.length === 0 ? 'none' : data.restartRequired.join(', ')}</dd>
          </div>
        </dl>
      )}
    </Panel>
  );
}

/** Settings (SPEC 17): this session, and for admins the running config's source, last reload and restart-only changes. */
export function SettingsPage({ session }: { readonly session: Session }) {
  return (
    <>
      <Panel title="This session">
        <dl class="details">
          <div><dt>Admin key</dt><dd>{session.keyId}</dd></div>
          <div><dt>Role</dt><dd>{session.role}{session.team === null ? '' : ` of ${session.team}`}</dd></div>
          <div><dt>Expires</dt><dd>{formatTime(session.expiresAt)}</dd></div>
        </dl>
      </Panel>
      {session.role === 'admin' ? <RunningConfig /> : <p class="muted">The running configuration is shown to admin keys only.</p>}
    </>
  );
}
