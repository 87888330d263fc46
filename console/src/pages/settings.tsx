import { useState } from 'preact/hooks';
import { adminUrl, ApiError, call, type ConfigState, type Notifications, type Session } from '../api.js';
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

/** A sink is healthy when nothing waits long: no export lag past a minute, no pending deliveries with a last error. */
function sinkHealth(sink: Notifications['sinks'][number]): string {
  if (sink.kind === 'export') return sink.lagSeconds > 60 ? `behind by ${Math.round(sink.lagSeconds)} s` : 'ok';
  return sink.pending > 0 && sink.lastError !== null ? 'failing' : 'ok';
}

/** Notifications (SPEC 24): each webhook and export sink, its backlog and last outcome. */
function NotificationSinks() {
  const answer = useLoad(() => call<Notifications>(adminUrl('notifications', { limit: '1' })), []);
  const sinks = answer.data?.sinks ?? [];
  return (
    <Panel title="Notifications">
      <LoadError error={answer.error} />
      {answer.data !== null && sinks.length === 0 && <p class="muted">No webhooks or export sinks are configured (notifications: in the config file).</p>}
      {sinks.length > 0 && (
        <table aria-label="Notification sinks">
          <thead><tr><th>Sink</th><th>Kind</th><th>Where</th><th>Health</th><th>Pending</th><th>Export lag</th><th>Last success</th><th>Last error</th></tr></thead>
          <tbody>
            {sinks.map((sink) => (
              <tr key={sink.name}>
                <td>{sink.name}</td>
                <td>{sink.kind === 'export' ? 'export (CloudEvents)' : `webhook (${sink.format})`}</td>
                <td>{sink.url}</td>
                <td>{sinkHealth(sink)}</td>
                <td>{sink.kind === 'export' ? '—' : sink.pending}</td>
                <td>{sink.kind === 'export' ? `${Math.round(sink.lagSeconds)} s` : '—'}</td>
                <td>{sink.lastSuccessAt === null ? 'never' : formatTime(sink.lastSuccessAt)}</td>
                <td>{sink.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
      <NotificationSinks />
      {session.role === 'admin' ? <RunningConfig /> : <p class="muted">The running configuration is shown to admin keys only.</p>}
    </>
  );
}
