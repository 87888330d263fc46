import { useState } from 'preact/hooks';
import { adminUrl, call, type LedgerPage, type LedgerRow, type Session } from '../api.js';
import { FilterForm, teamFilter, type Filters } from '../ui/filters.js';
import { formatCost, formatCount, formatTime, thisMonth } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { DataTable, errorsFromApi, LoadError, Panel } from '../ui/widgets.js';

const PAGE_SIZE = 50;
const FIELDS = ['from', 'to', 'team', 'project', 'key'];

function Details({ row, onClose }: { readonly row: LedgerRow; readonly onClose: () => void }) {
  return (
    <Panel title={`Request ${row.request_id}`} actions={<button type="button" class="secondary" onClick={onClose}>Close details</button>}>
      <dl class="details">
        {Object.entries(row).map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{String(value)}</dd>
          </div>
        ))}
      </dl>
    </Panel>
  );
}

/** Requests (SPEC 17): the ledger's rows, newest last, paged by cursor, filtered; one row's details. */
export function RequestsPage({ session }: { readonly session: Session }) {
  const [filters, setFilters] = useState<Filters>({ ...thisMonth(), team: '', project: '', key: '' });
  // The cursors of the pages before this one: "Previous" goes back without the API paging backwards.
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined]);
  const [open, setOpen] = useState<LedgerRow | null>(null);
  const after = cursors.at(-1);
  const page = useLoad(() => call<LedgerPage>(adminUrl('usage/requests', { ...filters, limit: PAGE_SIZE, after })), [filters, after]);
  const apply = (next: Filters): void => {
    setCursors([undefined]);
    setOpen(null);
    setFilters(next);
  };
  const rows = page.data?.data ?? [];
  return (
    <>
      <FilterForm label="Request filters" initial={filters} fields={[...teamFilter(session), { name: 'project', label: 'Project', kind: 'name' }, { name: 'key', label: 'Key id', kind: 'text' }]} onApply={apply} apiErrors={page.error === null ? {} : errorsFromApi(page.error, FIELDS)} />
      <LoadError error={page.error?.param ? null : page.error} />
      {open !== null && <Details row={open} onClose={() => setOpen(null)} />}
      <DataTable
        caption={`Requests from ${filters.from} to ${filters.to}, page ${cursors.length}`}
        rows={rows}
        rowKey={(row) => row.id}
        empty={page.loading ? 'Loading…' : 'No requests in this range.'}
        columns={[
          { label: 'Time', cell: (row) => formatTime(row.at) },
          { label: 'Team/project', cell: (row) => `${row.team}/${row.project}` },
          { label: 'Key', cell: (row) => row.key },
          { label: 'Model', cell: (row) => row.model ?? '—' },
          { label: 'Status', cell: (row) => row.status, numeric: true },
          { label: 'Tokens', cell: (row) => formatCount(row.total_tokens), numeric: true },
          { label: 'Cost', cell: (row) => formatCost(row.cost), numeric: true },
          { label: 'Details', cell: (row) => <button type="button" class="small" aria-label={`Details of request ${row.request_id}`} onClick={() => setOpen(row)}>Details</button> },
        ]}
      />
      <div class="actions pager">
        <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <button type="button" class="secondary" disabled={!page.data?.has_more} onClick={() => page.data?.last_id && setCursors([...cursors, page.data.last_id])}>Next page</button>
      </div>
    </>
  );
}
