import { adminUrl, call, type ModelsTable } from '../api.js';
import { formatCost, formatCount } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { modelsInWords } from '../ui/models.js';
import { DataTable, LoadError, Panel } from '../ui/widgets.js';
import { ModelRoutingTables } from './model-routing.js';

/** Models (SPEC 21, 22): the groups and default, each team's effective list, where chat goes, this month's usage by model. */
export function ModelsPage() {
  const table = useLoad(() => call<ModelsTable>(adminUrl('models')), []);
  const data = table.data;
  const groups = Object.entries(data?.groups ?? {});
  const usage = [...(data?.usage ?? [])].sort((a, b) => b.cost - a.cost || b.requests - a.requests || a.model.localeCompare(b.model));
  return (
    <>
      <LoadError error={table.error} />
      <Panel title="Default">
        <p>A key, team or token without a list of its own may use: <strong>{data === null ? '…' : modelsInWords(data.default, 'every model')}</strong></p>
      </Panel>
      <DataTable
        caption="Model groups"
        rows={groups}
        rowKey={([name]) => name}
        empty={table.loading ? 'Loading…' : 'No groups configured.'}
        columns={[
          { label: 'Group', cell: ([name]) => <code>@{name}</code> },
          { label: 'Patterns', cell: ([, patterns]) => patterns.join(', ') },
        ]}
      />
      <DataTable
        caption="Models each team may use"
        rows={data?.teams ?? []}
        rowKey={(team) => team.id}
        empty={table.loading ? 'Loading…' : 'No teams.'}
        columns={[
          { label: 'Team', cell: (team) => team.id },
          { label: 'Own list', cell: (team) => modelsInWords(team.models, 'the default') },
          { label: 'Effective', cell: (team) => modelsInWords(team.effective, 'every model') },
        ]}
      />
      <ModelRoutingTables routing={data?.routing} loading={table.loading} />
      <DataTable
        caption="Usage by model this month"
        rows={usage}
        rowKey={(row) => `${row.team}\n${row.model}`}
        empty={table.loading ? 'Loading…' : 'No usage this month.'}
        columns={[
          { label: 'Team', cell: (row) => row.team },
          { label: 'Model', cell: (row) => <code>{row.model}</code> },
          { label: 'Requests', cell: (row) => formatCount(row.requests), numeric: true },
          { label: 'Tokens', cell: (row) => formatCount(row.total_tokens), numeric: true },
          { label: 'Cost', cell: (row) => formatCost(row.cost), numeric: true },
        ]}
      />
    </>
  );
}
