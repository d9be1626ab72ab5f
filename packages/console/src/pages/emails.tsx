import { EMAIL_SOURCES, EMAIL_STATUSES, type EmailListQuery, type EmailSource, type EmailStatus } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Form, Loading, PageHeader, SelectField, StatusChip, Table, Time } from '../ui/kit';
import { Pager, useCursor, useFilter } from '../ui/pager';

/** `YYYY-MM-DD` of a date input → the start of that day in the viewer's zone, as ISO. */
const dayStart = (day: string) => (day ? new Date(`${day}T00:00:00`).toISOString() : undefined);
const dayAfter = (day: string) =>
  day ? new Date(new Date(`${day}T00:00:00`).getTime() + 86_400_000).toISOString() : undefined;

/** The mail log: newest first, filtered by status, source, recipient and days, a page at a time. */
export default function EmailsPage() {
  const { project, api } = useProject();
  const pager = useCursor();
  const [status, setStatus] = useFilter('status');
  const [source, setSource] = useFilter('source');
  const [to, setTo] = useFilter('to');
  const [from, setFrom] = useFilter('from');
  const [until, setUntil] = useFilter('until');
  // Set by a campaign's numbers (`?campaign=<id>`): its rows only.
  const [campaign, setCampaign] = useFilter('campaign');
  const [recipient, setRecipient] = useState(to);
  const query: EmailListQuery = {
    limit: 50,
    cursor: pager.cursor,
    status: (status || undefined) as EmailStatus | undefined,
    source: (source || undefined) as EmailSource | undefined,
    to: to || undefined,
    campaignId: campaign || undefined,
    after: dayStart(from),
    before: dayAfter(until),
  };
  const emails = useQuery({
    queryKey: ['emails', project.id, query],
    queryFn: () => api.emails.list(query),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Emails" />
      <Form className="filters" aria-label="Filter emails" onSubmit={() => setTo(recipient.trim().toLowerCase())}>
        <SelectField
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
          options={[['', 'Any'], ...EMAIL_STATUSES.map((s): [string, string] => [s, s])]}
        />
        <SelectField
          label="Source"
          value={source}
          onChange={(e) => setSource(e.target.value)}
          options={[['', 'Any'], ...EMAIL_SOURCES.map((s): [string, string] => [s, s])]}
        />
        <div className="field">
          <label htmlFor="recipient">Recipient</label>
          <input
            id="recipient"
            type="email"
            value={recipient}
            placeholder="someone@example.com"
            onChange={(e) => setRecipient(e.target.value)}
            onBlur={() => setTo(recipient.trim().toLowerCase())}
          />
        </div>
        <div className="field">
          <label htmlFor="from-day">From</label>
          <input id="from-day" type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="until-day">Until</label>
          <input id="until-day" type="date" value={until} onChange={(e) => setUntil(e.target.value)} />
        </div>
      </Form>
      {campaign ? (
        <p className="muted">
          Only the emails of <Link to={projectPath(project.id, `campaigns/${campaign}`)}>one campaign</Link>.{' '}
          <button type="button" className="small" onClick={() => setCampaign('')}>
            Show every email
          </button>
        </p>
      ) : null}
      <ErrorNote error={emails.error} />
      {emails.isPending ? <Loading /> : null}
      {emails.data && emails.data.data.length === 0 ? (
        <EmptyState title="No email here yet">
          <p>Send one from your backend with the SDK (your secret key is on the API keys page):</p>
          <pre>{`await pigeon.emails.send({ to: 'you@example.com', from: 'hello@your-domain', subject: 'Hi', body: '<p>Hello</p>' });`}</pre>
        </EmptyState>
      ) : null}
      {emails.data && emails.data.data.length > 0 ? (
        <>
          {pager.isFirst ? (
            <p className="muted">
              {emails.data.total.toLocaleString()}
              {emails.data.totalCapped ? '+' : ''} emails
            </p>
          ) : null}
          <Table caption="Emails, newest first" headings={['Status', 'To', 'Subject', 'Source', 'Created']}>
            {emails.data.data.map((email) => (
              <tr key={email.id}>
                <td>
                  <StatusChip status={email.status} />
                </td>
                <td>
                  <Link to={projectPath(project.id, `emails/${email.id}`)}>{email.to}</Link>
                </td>
                <td>{email.subject}</td>
                <td>{email.source}</td>
                <td>
                  <Time iso={email.createdAt} />
                </td>
              </tr>
            ))}
          </Table>
          <Pager page={emails.data} pager={pager} label="Emails" />
        </>
      ) : null}
    </>
  );
}
