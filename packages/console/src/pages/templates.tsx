import { CONTENT_TYPES, type Template } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Form, Loading, PageHeader, SelectField, StatusChip, Table, Time } from '../ui/kit';
import { OffsetPager, useFilter, usePageParam } from '../ui/pager';

const PAGE_SIZE = 20;

/** Templates: search, type filter, where each is used, and the way to write a new one. */
export default function TemplatesPage() {
  const { project, api } = useProject();
  const [search, setSearch] = useFilter('search');
  const [type, setType] = useFilter('type');
  const [page, setPage] = usePageParam();
  const [typed, setTyped] = useState(search);
  const query = {
    page,
    pageSize: PAGE_SIZE,
    search: search || undefined,
    type: (type || undefined) as Template['type'] | undefined,
    sort: 'updatedAt',
  };
  const list = useQuery({
    queryKey: ['templates', project.id, query],
    queryFn: () => api.templates.list(query),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Templates">
        <Link className="button" to={projectPath(project.id, 'templates/new')}>
          New template
        </Link>
      </PageHeader>
      <Form className="filters" onSubmit={() => setSearch(typed.trim())}>
        <div className="field">
          <label htmlFor="template-search">Name or subject</label>
          <input id="template-search" type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <SelectField
          label="Type"
          value={type}
          onChange={(e) => setType(e.target.value)}
          options={[['', 'Any type'], ...CONTENT_TYPES.map((t): [string, string] => [t, t.toLowerCase()])]}
        />
        <button type="submit">Find</button>
      </Form>
      <ErrorNote error={list.error} />
      {list.isPending ? <Loading /> : null}
      {list.data && list.data.data.length === 0 ? (
        <EmptyState title={search || type ? 'No template matches' : 'No template yet'}>
          <p>
            A template is a subject and body with <code>{'{{variables}}'}</code> filled from each contact. Campaigns
            start from one; workflows send them; <code>/v1/send</code> takes one by id.
          </p>
          <Link to={projectPath(project.id, 'templates/new')}>Write the first template</Link>
        </EmptyState>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <>
          <Table caption="Templates" headings={['Name', 'Subject', 'Type', 'Used by', 'Updated']}>
            {list.data.data.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link to={projectPath(project.id, `templates/${t.id}`)}>{t.name}</Link>
                  {t.description ? <div className="muted">{t.description}</div> : null}
                </td>
                <td>{t.subject}</td>
                <td>
                  <StatusChip status={t.type} />
                </td>
                <td>
                  <Usage id={t.id} />
                </td>
                <td>
                  <Time iso={t.updatedAt} relative />
                </td>
              </tr>
            ))}
          </Table>
          <OffsetPager page={list.data.page} totalPages={list.data.totalPages} onPage={setPage} label="Template pages">
            ({list.data.total} templates)
          </OffsetPager>
        </>
      ) : null}
    </>
  );
}

/** How many campaigns and workflow steps use a template (one small request per row of the page). */
function Usage({ id }: { id: string }) {
  const { project, api } = useProject();
  const usage = useQuery({ queryKey: ['template-usage', project.id, id], queryFn: () => api.templates.usage(id) });
  if (!usage.data) return <span className="muted">…</span>;
  const { campaigns, workflowSteps } = usage.data;
  if (campaigns.length + workflowSteps.length === 0) return <span className="muted">not used</span>;
  return (
    <span>
      {campaigns.length} campaign{campaigns.length === 1 ? '' : 's'}, {workflowSteps.length} workflow step
      {workflowSteps.length === 1 ? '' : 's'}
    </span>
  );
}
