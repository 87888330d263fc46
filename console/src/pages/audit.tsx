import { useState } from 'preact/hooks';
import { adminUrl, call, type AuditEntry, type List } from '../api.js';
import { FilterForm, type Filters } from '../ui/filters.js';
import { daysAgo, formatTime, utcDay } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { DataTable, errorsFromApi, LoadError } from '../ui/widgets.js';

/** Entries drawn at a time. */
const PAGE = 200;

/** Audit (SPEC 17, 12.3): who changed what, when, with what result; newest first on screen. */
export function AuditPage() {
  const [filters, setFilters] = useState<Filters>({ from: daysAgo(6), to: utcDay(new Date()), actor: '', action: '' });
  // A month of a busy gateway's audit log is thousands of entries: the newest are drawn first, more on request.
  const [shown, setShown] = useState(PAGE);
  const apply = (next: Filters): void => {
    setShown(PAGE);
    setFilters(next);
  };
  const entries = useLoad(() => call<List<AuditEntry>>(adminUrl('audit', filters)), [filters]);
  const all = entries.data?.data ?? [];
  const rows = all.slice(Math.max(0, all.length - shown)).reverse();
  return (
    <>
      <FilterForm label="Audit filters" initial={filters} fields={[{ name: 'actor', label: 'Actor (admin key id)', kind: 'text' }, { name: 'action', label: 'Action', kind: 'text' }]} onApply={apply} apiErrors={entries.error === null ? {} : errorsFromApi(entries.error, ['from', 'to', 'actor', 'action'])} />
      <LoadError error={entries.error?.param ? null : entries.error} />
      <DataTable
        caption={`Audit log from ${filters.from} to ${filters.to}${all.length > rows.length ? `, newest ${rows.length} of ${all.length}` : ''}`}
        rows={rows}
        rowKey={(entry) => `${entry.at}/${entry.requestId}/${entry.action}/${entry.target}`}
        empty={entries.loading ? 'Loading…' : 'No entries in this range.'}
        columns={[
          { label: 'Time', cell: (entry) => formatTime(entry.at) },
          { label: 'Actor', cell: (entry) => `${entry.actor}${entry.actorRole ? ` (${entry.actorRole})` : ''}` },
          { label: 'Action', cell: (entry) => entry.action },
          { label: 'Target', cell: (entry) => entry.target },
          { label: 'Result', cell: (entry) => entry.result },
        ]}
      />
      {all.length > rows.length && (
        <div class="actions pager">
          <button type="button" class="secondary" onClick={() => setShown(shown + PAGE)}>Show {Math.min(PAGE, all.length - rows.length)} older entries</button>
        </div>
      )}
    </>
  );
}
