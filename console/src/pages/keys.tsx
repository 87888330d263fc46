import { useState } from 'preact/hooks';
import { adminUrl, ApiError, call, type Key, type List, type ModelsTable, type Session } from '../api.js';
import { Confirm } from '../ui/confirm.js';
import { formatTime } from '../ui/format.js';
import { LimitFields, limitInputs, limitsInWords, NAME_PATTERN, NAME_RULE, parseLimits, type LimitInputs } from '../ui/limits.js';
import { useLoad } from '../ui/load.js';
import { ModelsField, modelsInWords, modelsText, parseModels } from '../ui/models.js';
import { SecretBox } from '../ui/secret.js';
import { submitted } from '../ui/submit.js';
import { DataTable, FormError, Input, LoadError, Panel, type FieldErrors } from '../ui/widgets.js';

const KEY_FIELDS = ['team', 'projects', 'description', 'expiresAt', 'rpm', 'tpm', 'costPerDay', 'costPerMonth', 'limits', 'models', 'overlapSeconds'];

/** `a, b` → ['a', 'b']; each a project name or `*`. */
const projectList = (text: string): string[] => text.split(',').map((part) => part.trim()).filter(Boolean);

function CreateKey({ session, groups, onCreated }: { readonly session: Session; readonly groups: ModelsTable['groups'] | undefined; readonly onCreated: (key: Key & { key: string }) => void }) {
  const fixedTeam = session.role === 'team-admin' ? session.team : null;
  const [team, setTeam] = useState(fixedTeam ?? '');
  const [projects, setProjects] = useState('*');
  const [description, setDescription] = useState('');
  const [expires, setExpires] = useState('');
  const [models, setModels] = useState('');
  const [limits, setLimits] = useState<LimitInputs>(limitInputs());
  const [errors, setErrors] = useState<FieldErrors>({});
  const check = (): FieldErrors => {
    const problems: Record<string, string> = { ...parseLimits(limits).errors };
    if (!NAME_PATTERN.test(team)) problems.team = `Enter the team's name: ${NAME_RULE}.`;
    const names = projectList(projects);
    if (names.length === 0 || names.some((name) => name !== '*' && !NAME_PATTERN.test(name))) problems.projects = `Enter project names separated by commas (${NAME_RULE}), or *.`;
    if (expires !== '' && !(Date.parse(`${expires}T23:59:59Z`) > Date.now())) problems.expiresAt = 'Choose a day from today on.';
    return problems;
  };
  const create = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body = {
      team,
      projects: projectList(projects),
      limits: parseLimits(limits).limits,
      models: parseModels(models),
      ...(description.trim() === '' ? {} : { description: description.trim() }),
      ...(expires === '' ? {} : { expiresAt: `${expires}T23:59:59Z` }),
    };
    const created = await submitted(KEY_FIELDS, check, () => call<Key & { key: string }>(adminUrl('keys'), { method: 'POST', body }), setErrors);
    if (created !== null) {
      setDescription('');
      setLimits(limitInputs());
      onCreated(created);
    }
  };
  return (
    <Panel title="Create a key">
      <form onSubmit={create} noValidate aria-label="Create a key" class="grid-form">
        {fixedTeam === null ? <Input label="Team" name="team" value={team} onInput={setTeam} errors={errors} required /> : <p class="fixed">Team: <strong>{fixedTeam}</strong></p>}
        <Input label="Projects" name="projects" value={projects} onInput={setProjects} errors={errors} hint="Comma-separated; * for every project." />
        <Input label="Description" name="description" value={description} onInput={setDescription} errors={errors} />
        <ModelsField value={models} onInput={setModels} errors={errors} groups={groups} />
        <Input label="Expires at the end of (UTC)" name="expiresAt" type="date" value={expires} onInput={setExpires} errors={errors} />
        <LimitFields inputs={limits} onChange={setLimits} errors={errors} />
        <FormError errors={errors} />
        <div class="actions">
          <button type="submit">Create key</button>
        </div>
      </form>
    </Panel>
  );
}

function EditKey({ keyRecord, groups, onDone }: { readonly keyRecord: Key; readonly groups: ModelsTable['groups'] | undefined; readonly onDone: (changed: boolean) => void }) {
  const [models, setModels] = useState(modelsText(keyRecord.models));
  const [limits, setLimits] = useState<LimitInputs>(limitInputs(keyRecord.limits));
  const [description, setDescription] = useState(keyRecord.description ?? '');
  const [errors, setErrors] = useState<FieldErrors>({});
  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    // Models go only when changed: a team-admin's edit of a key's limits never re-checks its list.
    const modelsChanged = models !== modelsText(keyRecord.models);
    const body = { limits: parseLimits(limits, keyRecord.limits).limits, ...(modelsChanged ? { models: parseModels(models) } : {}), description: description.trim() === '' ? null : description.trim() };
    const saved = await submitted(KEY_FIELDS, () => parseLimits(limits).errors, () => call<Key>(adminUrl(`keys/${encodeURIComponent(keyRecord.id)}`), { method: 'PATCH', body }), setErrors);
    if (saved !== null) onDone(true);
  };
  return (
    <Panel title={`Edit ${keyRecord.id}`}>
      <form onSubmit={save} noValidate aria-label={`Edit ${keyRecord.id}`} class="grid-form">
        <Input label="Description" name="description" value={description} onInput={setDescription} errors={errors} />
        <ModelsField value={models} onInput={setModels} errors={errors} groups={groups} />
        <LimitFields inputs={limits} onChange={setLimits} errors={errors} />
        <FormError errors={errors} />
        <div class="actions">
          <button type="submit">Save</button>
          <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
        </div>
      </form>
    </Panel>
  );
}

function RotateKey({ keyRecord, onRotated, onCancel }: { readonly keyRecord: Key; readonly onRotated: (key: Key & { key: string }) => void; readonly onCancel: () => void }) {
  const [overlap, setOverlap] = useState('3600');
  const [errors, setErrors] = useState<FieldErrors>({});
  const rotate = async (event: Event): Promise<void> => {
    event.preventDefault();
    const check = (): FieldErrors => (/^\d+$/.test(overlap) && Number(overlap) <= 86_400 ? {} : { overlapSeconds: 'Enter whole seconds from 0 to 86400 (one day).' });
    const rotated = await submitted(KEY_FIELDS, check, () => call<Key & { key: string }>(adminUrl(`keys/${encodeURIComponent(keyRecord.id)}/rotate`), { method: 'POST', body: { overlapSeconds: Number(overlap) } }), setErrors);
    if (rotated !== null) onRotated(rotated);
  };
  return (
    <Panel title={`Rotate ${keyRecord.id}`}>
      <form onSubmit={rotate} noValidate aria-label={`Rotate ${keyRecord.id}`} class="grid-form">
        <Input label="Old secret keeps working for (seconds)" name="overlapSeconds" inputMode="numeric" value={overlap} onInput={setOverlap} errors={errors} />
        <FormError errors={errors} />
        <div class="actions">
          <button type="submit">Rotate</button>
          <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </Panel>
  );
}

type Editing = { readonly what: 'edit' | 'rotate' | 'revoke'; readonly key: Key } | null;

/** Keys (SPEC 17): create (secret shown once), edit limits, rotate with an overlap, disable, revoke after a confirmation. */
export function KeysPage({ session }: { readonly session: Session }) {
  const keys = useLoad(() => call<List<Key>>(adminUrl('keys')), []);
  // The groups a models field offers (SPEC 21).
  const groups = useLoad(() => call<ModelsTable>(adminUrl('models')), []).data?.groups;
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const canWrite = session.role !== 'viewer';
  const act = (work: Promise<unknown>): void => {
    setFailure(null);
    work.then(
      () => keys.reload(),
      (err: unknown) => setFailure(err instanceof ApiError ? err.message : String(err)),
    );
  };
  const keyUrl = (key: Key): string => adminUrl(`keys/${encodeURIComponent(key.id)}`);
  const actions = (key: Key) =>
    key.source === 'config' ? (
      <span class="muted">from the config file</span>
    ) : (
      <div class="row-actions">
        <button type="button" class="small" aria-label={`Edit ${key.id}`} onClick={() => setEditing({ what: 'edit', key })}>Edit</button>
        <button type="button" class="small" aria-label={`Rotate ${key.id}`} onClick={() => setEditing({ what: 'rotate', key })}>Rotate</button>
        <button type="button" class="small" aria-label={`${key.disabled ? 'Enable' : 'Disable'} ${key.id}`} onClick={() => act(call(keyUrl(key), { method: 'PATCH', body: { disabled: !key.disabled } }))}>{key.disabled ? 'Enable' : 'Disable'}</button>
        <button type="button" class="small danger" aria-label={`Revoke ${key.id}`} onClick={() => setEditing({ what: 'revoke', key })}>Revoke</button>
      </div>
    );
  return (
    <>
      {secret !== null && <SecretBox title={secret.title} secret={secret.value} onDismiss={() => setSecret(null)} />}
      {canWrite && <CreateKey session={session} groups={groups} onCreated={(created) => (setSecret({ title: `Key ${created.id} created`, value: created.key }), keys.reload())} />}
      {editing?.what === 'edit' && <EditKey keyRecord={editing.key} groups={groups} onDone={(changed) => (setEditing(null), changed && keys.reload())} />}
      {editing?.what === 'rotate' && <RotateKey keyRecord={editing.key} onCancel={() => setEditing(null)} onRotated={(rotated) => (setEditing(null), setSecret({ title: `Key ${rotated.id} rotated`, value: rotated.key }), keys.reload())} />}
      {editing?.what === 'revoke' && (
        <Confirm title={`Revoke ${editing.key.id}?`} confirmLabel="Revoke key" onCancel={() => setEditing(null)} onConfirm={() => (act(call(keyUrl(editing.key), { method: 'DELETE' })), setEditing(null))}>
          <p>Requests with this key are refused from now on, on every instance. This cannot be undone.</p>
        </Confirm>
      )}
      {failure !== null && <p class="form-error" role="alert">{failure}</p>}
      <LoadError error={keys.error} />
      <DataTable
        caption="API keys"
        rows={keys.data?.data ?? []}
        rowKey={(key) => key.id}
        empty={keys.loading ? 'Loading…' : 'No keys.'}
        columns={[
          { label: 'Key', cell: (key) => <code>{key.id}</code> },
          { label: 'Team', cell: (key) => key.team },
          { label: 'Projects', cell: (key) => key.projects.join(', ') },
          { label: 'Limits', cell: (key) => limitsInWords(key.limits) },
          { label: 'Expires', cell: (key) => formatTime(key.expiresAt) },
          { label: 'Status', cell: (key) => (key.disabled ? 'Disabled' : 'Active') },
          { label: 'Models', cell: (key) => modelsInWords(key.models, 'its team\'s') },
          ...(canWrite ? [{ label: 'Actions', cell: actions }] : []),
        ]}
      />
    </>
  );
}
