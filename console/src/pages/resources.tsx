import { useState } from 'preact/hooks';
import { adminUrl, call, type List, type Resource, type Session } from '../api.js';
import { formatTime } from '../ui/format.js';
import { NAME_PATTERN, NAME_RULE } from '../ui/limits.js';
import { useLoad } from '../ui/load.js';
import { submitted } from '../ui/submit.js';
import { DataTable, FormError, Input, LoadError, Panel, Select, type FieldErrors } from '../ui/widgets.js';

const KINDS = [['model', 'Model'], ['training_job', 'Training job']] as const;
const FIELDS = ['kind', 'id', 'team', 'project', 'artifact'];

/** Adopt: give a resource (one created before ownership was recorded, or another team's) to a team and project. */
function Adopt({ onAdopted }: { readonly onAdopted: () => void }) {
  const [values, setValues] = useState({ kind: 'model', id: '', team: '', project: '', artifact: '' });
  const [errors, setErrors] = useState<FieldErrors>({});
  const set = (name: keyof typeof values) => (value: string) => setValues({ ...values, [name]: value });
  const check = (): FieldErrors => {
    const problems: Record<string, string> = {};
    if (values.id.trim() === '') problems.id = 'Enter the resource id.';
    if (!NAME_PATTERN.test(values.team)) problems.team = `Enter a team: ${NAME_RULE}.`;
    if (!NAME_PATTERN.test(values.project)) problems.project = `Enter a project: ${NAME_RULE}.`;
    if (values.artifact !== '' && !/^[^/\s]+\/[^/\s]+\/[^/\s:]+$/.test(values.artifact)) problems.artifact = 'Enter entity/project/name, or leave it empty.';
    return problems;
  };
  const adopt = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body = { team: values.team, project: values.project, ...(values.artifact === '' ? {} : { artifact: values.artifact }) };
    const url = adminUrl(`resources/${values.kind}/${encodeURIComponent(values.id.trim())}`);
    if ((await submitted(FIELDS, check, () => call<Resource>(url, { method: 'PUT', body }), setErrors)) !== null) {
      setValues({ kind: values.kind, id: '', team: '', project: '', artifact: '' });
      onAdopted();
    }
  };
  return (
    <Panel title="Adopt a resource">
      <form onSubmit={adopt} noValidate aria-label="Adopt a resource" class="grid-form">
        <Select label="Kind" name="kind" value={values.kind} options={KINDS} onChange={set('kind')} errors={errors} />
        <Input label="Resource id" name="id" value={values.id} onInput={set('id')} errors={errors} />
        <Input label="Team" name="team" value={values.team} onInput={set('team')} errors={errors} />
        <Input label="Project" name="project" value={values.project} onInput={set('project')} errors={errors} />
        <Input label="Artifact (models)" name="artifact" value={values.artifact} onInput={set('artifact')} errors={errors} hint="entity/project/name" />
        <FormError errors={errors} />
        <div class="actions">
          <button type="submit">Adopt</button>
        </div>
      </form>
    </Panel>
  );
}

/** Resources (SPEC 17, 13): models and training jobs by team; adopt (admins). */
export function ResourcesPage({ session }: { readonly session: Session }) {
  const resources = useLoad(() => call<List<Resource>>(adminUrl('resources')), []);
  const rows = [...(resources.data?.data ?? [])].sort((a, b) => a.team.localeCompare(b.team) || a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id));
  return (
    <>
      {session.role === 'admin' && <Adopt onAdopted={resources.reload} />}
      <LoadError error={resources.error} />
      <DataTable
        caption="Models and training jobs by team"
        rows={rows}
        rowKey={(row) => `${row.kind}/${row.id}`}
        empty={resources.loading ? 'Loading…' : 'No resources recorded.'}
        columns={[
          { label: 'Team', cell: (row) => row.team },
          { label: 'Project', cell: (row) => row.project },
          { label: 'Kind', cell: (row) => (row.kind === 'model' ? 'Model' : 'Training job') },
          { label: 'Id', cell: (row) => <code>{row.id}</code> },
          { label: 'Artifact', cell: (row) => row.artifact ?? '—' },
          { label: 'Created', cell: (row) => formatTime(row.createdAt) },
        ]}
      />
    </>
  );
}
