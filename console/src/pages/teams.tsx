import { useState } from 'preact/hooks';
import { adminUrl, ApiError, call, type Key, type List, type ModelsTable, type Session, type Team, type UsageRow } from '../api.js';
import { formatCost, formatCount, thisMonth } from '../ui/format.js';
import { LimitFields, limitInputs, limitsInWords, NAME_PATTERN, NAME_RULE, parseLimits, type LimitInputs } from '../ui/limits.js';
import { useLoad } from '../ui/load.js';
import { ModelsField, modelsInWords, modelsText, parseModels } from '../ui/models.js';
import { submitted } from '../ui/submit.js';
import { Budget, DataTable, FormError, Input, LoadError, Panel, type FieldErrors } from '../ui/widgets.js';
import { hrefOf } from '../routes.js';

/** Each budget the team sets, as spent against limit. */
function Budgets({ team }: { readonly team: Team }) {
  const bars = [
    team.limits.costPerMonth !== undefined && <Budget key="m" label="Cost this month" spent={team.spend.month.cost} limit={team.limits.costPerMonth} format={formatCost} />,
    team.limits.costPerDay !== undefined && <Budget key="d" label="Cost today" spent={team.spend.day.cost} limit={team.limits.costPerDay} format={formatCost} />,
    team.limits.tokensPerDay !== undefined && <Budget key="t" label="Tokens today" spent={team.spend.day.total_tokens} limit={team.limits.tokensPerDay} format={formatCount} />,
  ].filter(Boolean);
  return bars.length === 0 ? <span class="muted">No budget</span> : <div class="budgets">{bars}</div>;
}

function CreateTeam({ onCreated }: { readonly onCreated: () => void }) {
  const groups = useLoad(() => call<ModelsTable>(adminUrl('models')), []).data?.groups;
  const [models, setModels] = useState('');
  const [id, setId] = useState('');
  const [description, setDescription] = useState('');
  const [limits, setLimits] = useState<LimitInputs>(limitInputs());
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = async (event: Event): Promise<void> => {
    event.preventDefault();
    const check = (): FieldErrors => ({ ...parseLimits(limits).errors, ...(NAME_PATTERN.test(id) ? {} : { id: `Enter a team name: ${NAME_RULE}.` }) });
    const body = { id, limits: parseLimits(limits).limits, models: parseModels(models), ...(description.trim() === '' ? {} : { description: description.trim() }) };
    const created = await submitted(['id', 'description', 'models', 'rpm', 'tpm', 'costPerDay', 'costPerMonth'], check, () => call<Team>(adminUrl('teams'), { method: 'POST', body }), setErrors);
    if (created !== null) {
      setId('');
      setDescription('');
      setModels('');
      setLimits(limitInputs());
      onCreated();
    }
  };
  return (
    <Panel title="Create a team">
      <form onSubmit={create} noValidate aria-label="Create a team" class="grid-form">
        <Input label="Team name" name="id" value={id} onInput={setId} errors={errors} required />
        <Input label="Description" name="description" value={description} onInput={setDescription} errors={errors} />
        <ModelsField value={models} onInput={setModels} errors={errors} groups={groups} />
        <LimitFields inputs={limits} onChange={setLimits} errors={errors} />
        <FormError errors={errors} />
        <div class="actions">
          <button type="submit">Create team</button>
        </div>
      </form>
    </Panel>
  );
}

/** An admin's change to a team's models (SPEC 21); a config team is read-only. */
function EditTeamModels({ team, onSaved }: { readonly team: Team; readonly onSaved: () => void }) {
  const groups = useLoad(() => call<ModelsTable>(adminUrl('models')), []).data?.groups;
  const [models, setModels] = useState(modelsText(team.models));
  const [errors, setErrors] = useState<FieldErrors>({});
  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body = { models: parseModels(models) };
    if ((await submitted(['models'], () => ({}), () => call<Team>(adminUrl(`teams/${encodeURIComponent(team.id)}`), { method: 'PATCH', body }), setErrors)) !== null) onSaved();
  };
  return (
    <form onSubmit={save} noValidate aria-label={`Models of ${team.id}`} class="grid-form">
      <ModelsField value={models} onInput={setModels} errors={errors} groups={groups} />
      <FormError errors={errors} />
      <div class="actions">
        <button type="submit">Save models</button>
      </div>
    </form>
  );
}

/** One team: its budgets, its projects with this month's usage, its keys. */
function TeamDetail({ id, isAdmin }: { readonly id: string; readonly isAdmin: boolean }) {
  const range = thisMonth();
  const team = useLoad(() => call<Team>(adminUrl(`teams/${encodeURIComponent(id)}`)), [id]);
  const keys = useLoad(() => call<List<Key>>(adminUrl('keys', { team: id })), [id]);
  const usage = useLoad(() => call<List<UsageRow>>(adminUrl('usage', { team: id, ...range })), [id]);
  const projects = new Map<string, UsageRow | null>();
  for (const key of keys.data?.data ?? []) for (const project of key.projects) if (project !== '*') projects.set(project, null);
  for (const row of usage.data?.data ?? []) projects.set(row.project, row);
  return (
    <>
      <p><a href={hrefOf('Teams')}>All teams</a></p>
      <LoadError error={team.error ?? keys.error ?? usage.error} />
      {team.data !== null && (
        <Panel title={`Team ${team.data.id}`}>
          <p>{team.data.description ?? 'No description.'} {team.data.disabled && <strong>Disabled.</strong>}</p>
          <p>Limits: {limitsInWords(team.data.limits)}</p>
          <p>Models: {modelsInWords(team.data.models, 'the default')}</p>
          {isAdmin && team.data.source === 'api' && <EditTeamModels team={team.data} onSaved={team.reload} />}
          <Budgets team={team.data} />
        </Panel>
      )}
      <DataTable
        caption={`Projects of ${id}, usage this month`}
        rows={[...projects.entries()].sort(([an, a], [bn, b]) => (b?.cost ?? 0) - (a?.cost ?? 0) || an.localeCompare(bn))}
        rowKey={([name]) => name}
        columns={[
          { label: 'Project', cell: ([name]) => name },
          { label: 'Requests', cell: ([, row]) => formatCount(row?.requests ?? 0), numeric: true },
          { label: 'Tokens', cell: ([, row]) => formatCount(row?.total_tokens ?? 0), numeric: true },
          { label: 'Cost', cell: ([, row]) => formatCost(row?.cost ?? 0), numeric: true },
        ]}
      />
      <DataTable
        caption={`Keys of ${id}`}
        rows={keys.data?.data ?? []}
        rowKey={(key) => key.id}
        columns={[
          { label: 'Key', cell: (key) => <code>{key.id}</code> },
          { label: 'Projects', cell: (key) => key.projects.join(', ') },
          { label: 'Limits', cell: (key) => limitsInWords(key.limits) },
          { label: 'Status', cell: (key) => (key.disabled ? 'Disabled' : 'Active') },
        ]}
      />
    </>
  );
}

/** Teams (SPEC 17): each team's budgets as bars; a team's own page. */
export function TeamsPage({ session, teamId }: { readonly session: Session; readonly teamId: string | null }) {
  const teams = useLoad(() => call<List<Team>>(adminUrl('teams')), []);
  const [failure, setFailure] = useState<string | null>(null);
  const isAdmin = session.role === 'admin';
  if (teamId !== null) return <TeamDetail id={teamId} isAdmin={isAdmin} />;
  const toggle = (team: Team): void => {
    setFailure(null);
    call(adminUrl(`teams/${encodeURIComponent(team.id)}`), { method: 'PATCH', body: { disabled: !team.disabled } }).then(
      () => teams.reload(),
      (err: unknown) => setFailure(err instanceof ApiError ? err.message : String(err)),
    );
  };
  return (
    <>
      {isAdmin && <CreateTeam onCreated={teams.reload} />}
      {failure !== null && <p class="form-error" role="alert">{failure}</p>}
      <LoadError error={teams.error} />
      <DataTable
        caption="Teams"
        rows={teams.data?.data ?? []}
        rowKey={(team) => team.id}
        empty={teams.loading ? 'Loading…' : 'No team records. Keys of teams without a record keep working.'}
        columns={[
          { label: 'Team', cell: (team) => <a href={hrefOf('Teams', team.id)}>{team.id}</a> },
          { label: 'Budgets', cell: (team) => <Budgets team={team} /> },
          { label: 'This month', cell: (team) => `${formatCount(team.spend.month.requests)} ${team.spend.month.requests === 1 ? 'request' : 'requests'} · ${formatCost(team.spend.month.cost)}` },
          { label: 'Status', cell: (team) => (team.disabled ? 'Disabled' : 'Active') },
          { label: 'Models', cell: (team) => modelsInWords(team.models, 'the default') },
          ...(isAdmin
            ? [{ label: 'Actions', cell: (team: Team) => (team.source === 'config' ? <span class="muted">from the config file</span> : <button type="button" class="small" aria-label={`${team.disabled ? 'Enable' : 'Disable'} team ${team.id}`} onClick={() => toggle(team)}>{team.disabled ? 'Enable' : 'Disable'}</button>) }]
            : []),
        ]}
      />
    </>
  );
}
