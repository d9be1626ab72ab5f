import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { projectPath, useProject } from '../session';
import { ErrorNote, Loading, Notice, PageHeader, StatusChip, Time } from '../ui/kit';
import { MessageFrame } from '../ui/message-frame';

/** One email: who and what, its timeline, the message itself (sandboxed), and cancel or requeue. */
export default function EmailPage() {
  const { emailId = '' } = useParams();
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const email = useQuery({
    queryKey: ['email', emailId],
    queryFn: () => api.emails.get(emailId),
    // Until it is out (or failed), its status moves: follow it.
    refetchInterval: (q) => (['QUEUED', 'SENDING', 'SCHEDULED'].includes(q.state.data?.status ?? '') ? 2000 : false),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['email', emailId] });
  const cancel = useMutation({ mutationFn: () => api.emails.cancel(emailId), onSuccess: refresh });
  const requeue = useMutation({ mutationFn: () => api.emails.requeue(emailId), onSuccess: refresh });
  const [tab, setTab] = useState<'html' | 'text' | 'headers'>('html');
  if (email.isPending) return <Loading />;
  if (email.error) return <ErrorNote error={email.error} />;
  const e = email.data;
  const content = e.content;
  return (
    <>
      <p>
        <Link to={projectPath(project.id, 'emails')}>← Emails</Link>
      </p>
      <PageHeader title={e.subject || '(no subject)'}>
        {e.status === 'QUEUED' || e.status === 'SCHEDULED' ? (
          <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            Cancel sending
          </button>
        ) : null}
        {e.status === 'FAILED' ? (
          <button type="button" onClick={() => requeue.mutate()} disabled={requeue.isPending}>
            Queue again
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={cancel.error ?? requeue.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusChip status={e.status} />
        </dd>
        <dt>To</dt>
        <dd>{e.toName ? `${e.toName} <${e.to}>` : e.to}</dd>
        {e.cc.length ? (
          <>
            <dt>Cc</dt>
            <dd>{e.cc.map((c) => c.email).join(', ')}</dd>
          </>
        ) : null}
        {e.bcc.length ? (
          <>
            <dt>Bcc</dt>
            <dd>{e.bcc.map((c) => c.email).join(', ')}</dd>
          </>
        ) : null}
        <dt>From</dt>
        <dd>{e.fromName ? `${e.fromName} <${e.from}>` : e.from}</dd>
        {e.replyTo ? (
          <>
            <dt>Reply-To</dt>
            <dd>{e.replyTo}</dd>
          </>
        ) : null}
        <dt>Source</dt>
        <dd>{e.source}</dd>
        {e.contactId ? (
          <>
            <dt>Contact</dt>
            <dd>
              <Link to={projectPath(project.id, `contacts/${e.contactId}`)}>Open the contact</Link>
            </dd>
          </>
        ) : null}
        {Object.keys(e.tags).length ? (
          <>
            <dt>Tags</dt>
            <dd>
              {Object.entries(e.tags).map(([k, v]) => (
                <span key={k} className="chip plain">
                  {k}: {v}
                </span>
              ))}
            </dd>
          </>
        ) : null}
        <dt>Opens / clicks</dt>
        <dd>
          {e.opens} / {e.clicks}
        </dd>
        <dt>Tries</dt>
        <dd>{e.attempts}</dd>
        {e.lastError ? (
          <>
            <dt>Last error</dt>
            <dd className="error-text">{e.lastError}</dd>
          </>
        ) : null}
      </dl>
      <section className="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <ol className="timeline">
          {e.timeline.map((entry, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list in server order, never reordered
            <li key={`${entry.type}-${i}`}>
              <Time iso={entry.at} /> <strong>{entry.type}</strong>
              {Object.keys(entry.data).length ? <code className="data">{JSON.stringify(entry.data)}</code> : null}
            </li>
          ))}
        </ol>
      </section>
      <section className="card" aria-labelledby="message-title">
        <h2 id="message-title">Message</h2>
        {content ? (
          <>
            <div className="tabs" role="tablist" aria-label="Message parts">
              {(['html', 'text', 'headers'] as const).map((t) => (
                <button
                  key={t}
                  id={`tab-${t}`}
                  type="button"
                  role="tab"
                  aria-selected={tab === t}
                  aria-controls="message-part"
                  onClick={() => setTab(t)}
                >
                  {t === 'html' ? 'HTML' : t === 'text' ? 'Text' : 'Headers'}
                </button>
              ))}
            </div>
            <div id="message-part" role="tabpanel" aria-labelledby={`tab-${tab}`}>
              {tab === 'html' ? (
                content.html ? (
                  <MessageFrame html={content.html} title={`The message "${e.subject}" as HTML`} />
                ) : (
                  <p className="muted">No HTML part.</p>
                )
              ) : null}
              {tab === 'text' ? <pre className="message-text">{content.text ?? '(no text part)'}</pre> : null}
              {tab === 'headers' ? (
                Object.keys(content.headers).length ? (
                  <table>
                    <caption className="sr-only">Custom headers</caption>
                    <tbody>
                      {Object.entries(content.headers).map(([k, v]) => (
                        <tr key={k}>
                          <th scope="row">{k}</th>
                          <td>{v}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                ) : (
                  <p className="muted">No custom headers.</p>
                )
              ) : null}
            </div>
            {content.attachments.length ? (
              <ul>
                {content.attachments.map((a) => (
                  <li key={a.filename}>
                    {a.filename} ({a.contentType ?? 'unknown type'}, {a.size.toLocaleString()} bytes)
                  </li>
                ))}
              </ul>
            ) : null}
          </>
        ) : (
          <Notice>
            {e.contentCleared
              ? "The message's content was removed by the project's content retention; its metadata stays."
              : 'Campaign mail is composed for each contact at delivery: the campaign holds its body.'}
          </Notice>
        )}
      </section>
    </>
  );
}
