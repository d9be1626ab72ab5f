import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link } from 'react-router';
import { account } from '../api';
import { projectPath, useProject } from '../session';
import { ErrorNote, Loading, PageHeader, StatusChip } from '../ui/kit';

const STEP_LINKS: Record<string, string> = {
  verify_domain: 'domains',
  send_first_email: 'keys',
  track_first_event: 'keys',
  add_contacts: 'contacts/import',
};

/** A project's front page: what is left to set up, and whether mail flows. */
export default function OverviewPage() {
  const { project } = useProject();
  useEffect(() => localStorage.setItem('pigeon.lastProject', project.id), [project.id]);
  const setup = useQuery({ queryKey: ['setup', project.id], queryFn: () => account.projects.setupState(project.id) });
  const security = useQuery({
    queryKey: ['security', project.id],
    queryFn: () => account.projects.security(project.id),
  });
  return (
    <>
      <PageHeader title={project.name} />
      {project.disabled ? (
        <div className="note error">
          This project is disabled: {project.disabledReason ?? 'no reason given'}. It can read but not write.
        </div>
      ) : null}
      <section aria-labelledby="setup-title" className="card">
        <h2 id="setup-title">Getting started</h2>
        {setup.isPending ? <Loading /> : null}
        <ErrorNote error={setup.error} />
        {setup.data ? (
          <ol className="steps">
            {setup.data.steps.map((step) => (
              <li key={step.id} className={step.done ? 'done' : ''}>
                <span aria-hidden="true">{step.done ? '✓' : '○'}</span>{' '}
                <Link to={projectPath(project.id, STEP_LINKS[step.id] ?? '')}>{step.title}</Link>
                {step.done ? <span className="sr-only"> (done)</span> : null}
              </li>
            ))}
          </ol>
        ) : null}
      </section>
      <section aria-labelledby="health-title" className="card">
        <h2 id="health-title">Deliverability</h2>
        <ErrorNote error={security.error} />
        {security.data ? (
          <dl className="facts">
            <dt>Relay</dt>
            <dd>
              <StatusChip status={security.data.mailTransport.state} /> {security.data.mailTransport.transport}
            </dd>
            <dt>Sent ({security.data.windowDays} days)</dt>
            <dd>{security.data.emailsSent.toLocaleString()}</dd>
            <dt>Bounce rate</dt>
            <dd>
              {(security.data.health.bounceRate * 100).toFixed(2)}% (campaigns pause above{' '}
              {(security.data.health.bounceThreshold * 100).toFixed(1)}%)
            </dd>
            <dt>Complaint rate</dt>
            <dd>
              {(security.data.health.complaintRate * 100).toFixed(3)}% (pause above{' '}
              {(security.data.health.complaintThreshold * 100).toFixed(2)}%)
            </dd>
            <dt>Campaigns</dt>
            <dd>
              {security.data.health.campaignsPaused ? `paused: ${security.data.health.pausedReason ?? ''}` : 'sending'}
            </dd>
          </dl>
        ) : null}
      </section>
    </>
  );
}
