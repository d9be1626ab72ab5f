import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { ErrorNote } from './kit';

export interface UsageLink {
  id: string;
  name: string;
  /** What it is: "Campaign", "Workflow step"… */
  kind: string;
  /** The console page of it, within the project. */
  path: string;
}

/** What uses a resource, each a link: the reason its delete is refused while the list is not empty. */
export function UsedBy({ links, error, none }: { links: UsageLink[] | undefined; error: unknown; none: string }) {
  const { project } = useProject();
  return (
    <section className="card" aria-labelledby="used-by">
      <h2 id="used-by">Used by</h2>
      <ErrorNote error={error} />
      {links && links.length === 0 ? <p className="muted">{none}</p> : null}
      <ul>
        {links?.map((l) => (
          <li key={l.id}>
            {l.kind} <Link to={projectPath(project.id, l.path)}>{l.name}</Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
