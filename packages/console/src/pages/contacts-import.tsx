import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { ErrorNote, Form, Notice, PageHeader, Progress, StatusChip } from '../ui/kit';
import { useFilter } from '../ui/pager';

/** CSV import with live progress; the job stays in the URL (`?job=`), so a reload keeps following it. */
export default function ContactsImportPage() {
  const { project, api } = useProject();
  const [jobId, setJobId] = useFilter('job');
  const [file, setFile] = useState<File | null>(null);
  const upload = useMutation({
    mutationFn: (f: File) => api.contacts.import(f, { filename: f.name }),
    onSuccess: (accepted) => setJobId(accepted.jobId),
  });
  const job = useQuery({
    queryKey: ['import', jobId],
    queryFn: () => api.contacts.importStatus(jobId),
    enabled: Boolean(jobId),
    refetchInterval: (q) => (q.state.data && ['completed', 'failed'].includes(q.state.data.status) ? false : 500),
  });
  const j = job.data;
  return (
    <>
      <p>
        <Link to={projectPath(project.id, 'contacts')}>← Contacts</Link>
      </p>
      <PageHeader title="Import contacts" />
      <section className="card">
        <p>
          A CSV file of at most 5 MB with an <code>email</code> column; other columns become contact data, and a{' '}
          <code>subscribed</code> column (true/false) sets the subscription. Existing contacts are updated.
        </p>
        <Form onSubmit={() => file && upload.mutate(file)}>
          <div className="field">
            <label htmlFor="csv-file">CSV file</label>
            <input
              id="csv-file"
              type="file"
              accept=".csv,text/csv"
              required
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            />
          </div>
          <ErrorNote error={upload.error} />
          <button type="submit" className="primary" disabled={!file || upload.isPending}>
            {upload.isPending ? 'Uploading…' : 'Import'}
          </button>
        </Form>
      </section>
      {jobId ? (
        <section className="card" aria-labelledby="import-progress" aria-live="polite">
          <h2 id="import-progress">Progress</h2>
          <ErrorNote error={job.error} />
          {j ? (
            <>
              <p>
                <StatusChip status={j.status} />
              </p>
              <Progress label="Rows processed" value={j.processed} max={j.total} />
              <p>
                {j.created.toLocaleString()} created, {j.updated.toLocaleString()} updated, {j.skipped.toLocaleString()}{' '}
                skipped
              </p>
              {j.error ? <Notice tone="warn">{j.error}</Notice> : null}
              {j.errors.length ? (
                <details>
                  <summary>{j.errors.length} rows not imported</summary>
                  <ul>
                    {j.errors.slice(0, 100).map((err, i) => (
                      // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list in server order, never reordered
                      <li key={i}>
                        {err.row ? `Line ${err.row}: ` : ''}
                        {err.reason}
                      </li>
                    ))}
                  </ul>
                </details>
              ) : null}
              {j.status === 'completed' ? <Link to={projectPath(project.id, 'contacts')}>See the contacts</Link> : null}
            </>
          ) : null}
        </section>
      ) : null}
    </>
  );
}
