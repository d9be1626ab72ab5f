import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { NavLink, Outlet, useNavigate, useNavigation } from 'react-router';
import { account } from './api';
import { meQuery, projectPath, projectsQuery, useProject } from './session';
import { Time } from './ui/kit';

const NAV: Array<{ group: string; links: Array<[string, string, boolean?]> }> = [
  {
    group: 'Send',
    links: [
      ['Overview', ''],
      ['Emails', 'emails'],
      ['Templates', 'templates'],
      ['Domains', 'domains'],
      ['Analytics', 'analytics'],
    ],
  },
  {
    group: 'Audience',
    links: [
      ['Contacts', 'contacts'],
      ['Segments', 'segments'],
      ['Suppressions', 'suppressions'],
      ['Events', 'events'],
    ],
  },
  {
    group: 'Automate',
    links: [
      ['Campaigns', 'campaigns'],
      ['Workflows', 'workflows'],
    ],
  },
  {
    group: 'Developers',
    links: [
      ['API keys', 'keys'],
      ['Webhooks', 'webhooks', true],
    ],
  },
  {
    group: 'Settings',
    links: [
      ['Project', 'settings'],
      ['Members', 'members'],
    ],
  },
];

/** The frame of every project page: navigation, project switcher, the signed-in person, the relay's state. */
export function ProjectLayout() {
  const { project, canManage } = useProject();
  const [menuOpen, setMenuOpen] = useState(false);
  const navigation = useNavigation();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Pigeon</span>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
      </header>
      <nav id="sidebar" className={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Console">
        <span className="brand wide">Pigeon</span>
        <ProjectSwitcher currentId={project.id} />
        {NAV.map(({ group, links }) => (
          <div key={group} className="nav-group">
            <h2>{group}</h2>
            <ul>
              {links
                .filter(([, , managers]) => !managers || canManage)
                .map(([label, path]) => (
                  <li key={path}>
                    <NavLink to={projectPath(project.id, path)} end={path === ''} onClick={() => setMenuOpen(false)}>
                      {label}
                    </NavLink>
                  </li>
                ))}
            </ul>
          </div>
        ))}
        <SignedIn />
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <RelayBanner />
        {navigation.state === 'loading' ? (
          <p className="loading-bar" role="status">
            Loading…
          </p>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}

function ProjectSwitcher({ currentId }: { currentId: string }) {
  const projects = useQuery(projectsQuery);
  const navigate = useNavigate();
  return (
    <div className="field switcher">
      <label htmlFor="project-switcher">Project</label>
      <select
        id="project-switcher"
        value={currentId}
        onChange={(e) => navigate(e.target.value === 'new' ? '/projects/new' : projectPath(e.target.value))}
      >
        {(projects.data ?? []).map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
        <option value="new">+ New project…</option>
      </select>
    </div>
  );
}

function SignedIn() {
  const me = useQuery(meQuery);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return (
    <div className="signed-in">
      <span title="Signed in">{me.data?.email}</span>
      <button
        type="button"
        className="small"
        onClick={async () => {
          await account.auth.logout().catch(() => undefined);
          queryClient.clear();
          navigate('/sign-in');
        }}
      >
        Sign out
      </button>
    </div>
  );
}

/** While the relay is down, every page says so (mail waits and costs no attempt meanwhile). */
function RelayBanner() {
  const { project } = useProject();
  const security = useQuery({
    queryKey: ['security', project.id],
    queryFn: () => account.projects.security(project.id),
    refetchInterval: 30_000,
  });
  const transport = security.data?.mailTransport;
  if (transport?.state !== 'down') return null;
  return (
    <div className="note warn" role="status">
      <strong>The mail relay ({transport.transport}) is down</strong> since <Time iso={transport.downSince} />. Mail
      waits in the queue and is sent when it is back (next check <Time iso={transport.nextProbeAt} relative />
      ).
      {transport.lastError ? <p className="muted">Last error: {transport.lastError}</p> : null}
    </div>
  );
}
