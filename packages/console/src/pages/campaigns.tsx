import { CAMPAIGN_STATUSES, type Campaign, type CampaignStatus } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Loading, PageHeader, SelectField, StatusChip, Table, Time } from '../ui/kit';
import { OffsetPager, useFilter, usePageParam } from '../ui/pager';
import { isLive, LIVE_MS, mailLogPath } from './campaign/format';

const PAGE_SIZE = 25;

/** Campaigns: newest first, filtered by status and searched by name, subject or sender; a page at a time. */
export default function CampaignsPage() {
  const { project, api } = useProject();
  const [status, setStatus] = useFilter('status');
  const [search, setSearch] = useFilter('search');
  const [page, setPage] = usePageParam();
  const [typed, setTyped] = useState(search);
  useEffect(() => {
    const timer = setTimeout(() => typed !== search && setSearch(typed.trim()), 300);
    return () => clearTimeout(timer);
  }, [typed, search, setSearch]);
  const query = {
    page,
    pageSize: PAGE_SIZE,
    status: (status || undefined) as CampaignStatus | undefined,
    search: search || undefined,
  };
  const campaigns = useQuery({
    queryKey: ['campaigns', project.id, query],
    queryFn: () => api.campaigns.list(query),
    placeholderData: keepPreviousData,
    // A sending campaign's counters move: the list follows them while one is on the page.
    refetchInterval: (q) => (q.state.data?.data.some((c) => isLive(c)) ? LIVE_MS * 3 : false),
  });
  const newLink = projectPath(project.id, 'campaigns/new');
  const filtered = Boolean(status || search);
  return (
    <>
      <PageHeader title="Campaigns">
        <Link className="button primary" to={newLink}>
          New campaign
        </Link>
      </PageHeader>
      <div className="filters">
        <SelectField
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
          options={[['', 'Any'], ...CAMPAIGN_STATUSES.map((s): [string, string] => [s, s])]}
        />
        <div className="field">
          <label htmlFor="campaign-search">Search</label>
          <input
            id="campaign-search"
            type="search"
            placeholder="Name, subject or sender"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
          />
        </div>
      </div>
      <ErrorNote error={campaigns.error} />
      {campaigns.isPending ? <Loading /> : null}
      {campaigns.data && campaigns.data.data.length === 0 ? (
        <EmptyState title={filtered ? 'No campaign matches' : 'No campaigns yet'}>
          {filtered ? (
            <p>Change the status or the search above.</p>
          ) : (
            <p>
              A campaign sends one message to every contact of an audience, now or at a time you choose.{' '}
              <Link to={newLink}>Write the first one</Link>, from scratch or from a{' '}
              <Link to={projectPath(project.id, 'templates')}>template</Link>.
            </p>
          )}
        </EmptyState>
      ) : null}
      {campaigns.data && campaigns.data.data.length > 0 ? (
        <>
          <p className="muted">{campaigns.data.total.toLocaleString()} campaigns</p>
          <Table caption="Campaigns, newest first" headings={['Name', 'Status', 'Recipients', 'Sent', 'Opens', 'When']}>
            {campaigns.data.data.map((c) => (
              <Row key={c.id} campaign={c} />
            ))}
          </Table>
          <OffsetPager
            page={campaigns.data.page}
            totalPages={campaigns.data.totalPages}
            onPage={setPage}
            label="Campaigns pages"
          />
        </>
      ) : null}
    </>
  );
}

function Row({ campaign: c }: { campaign: Campaign }) {
  const { project } = useProject();
  return (
    <tr>
      <td>
        <Link to={projectPath(project.id, `campaigns/${c.id}`)}>{c.name}</Link>
        <div className="muted">{c.subject}</div>
      </td>
      <td>
        <StatusChip status={c.status} />
      </td>
      <td>{c.status === 'DRAFT' || c.status === 'SCHEDULED' ? '—' : c.totalRecipients.toLocaleString()}</td>
      <td>
        {c.sentCount > 0 ? (
          <Link
            to={projectPath(project.id, mailLogPath(c.id))}
            aria-label={`${c.sentCount.toLocaleString()} sent by ${c.name}: show these emails`}
          >
            {c.sentCount.toLocaleString()}
          </Link>
        ) : (
          '0'
        )}
      </td>
      <td>{c.openedCount.toLocaleString()}</td>
      <td>
        <When campaign={c} />
      </td>
    </tr>
  );
}

function When({ campaign: c }: { campaign: Campaign }) {
  if (c.status === 'SCHEDULED') return <Time iso={c.scheduledFor} />;
  if (c.status === 'SENT') return <Time iso={c.sentAt} />;
  if (c.status === 'CANCELLED') return <Time iso={c.cancelledAt} />;
  return (
    <span className="muted">
      edited <Time iso={c.updatedAt} relative />
    </span>
  );
}
