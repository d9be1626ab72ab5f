import { type Project, permits } from '@pigeon/sdk';
import { useQuery } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext } from 'react';
import { Navigate, useLocation, useParams } from 'react-router';
import { account, isStatus, projectApi } from './api';
import { ErrorNote, Loading } from './ui/kit';

export const meQuery = { queryKey: ['me'], queryFn: () => account.me.get() };
export const projectsQuery = { queryKey: ['projects'], queryFn: () => account.me.projects() };

/** Renders its children for a signed-in person; sends anyone else to sign in, coming back here after. */
export function RequireSession({ children }: { children: ReactNode }) {
  const me = useQuery(meQuery);
  const location = useLocation();
  if (me.isPending) return <Loading />;
  if (isStatus(me.error, 401)) {
    const next = `${location.pathname}${location.search}${location.hash}`;
    return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  if (me.error) return <ErrorNote error={me.error} />;
  return <>{children}</>;
}

interface ProjectContext {
  project: Project;
  /** The project API as this member (the SDK in session mode). */
  api: ReturnType<typeof projectApi>;
  /** OWNER or ADMIN: keys, members, settings and webhooks. A MEMBER is not offered them. */
  canManage: boolean;
}

const Context = createContext<ProjectContext | null>(null);

/** The project named by the URL (`/p/:projectId/…`), among the signed-in person's projects. */
export function ProjectScope({ children }: { children: ReactNode }) {
  const { projectId = '' } = useParams();
  const projects = useQuery(projectsQuery);
  if (projects.isPending) return <Loading />;
  if (projects.error) return <ErrorNote error={projects.error} />;
  const project = projects.data.find((p) => p.id === projectId);
  if (!project) {
    return (
      <main className="content">
        <h1>Project not found</h1>
        <p>You are not a member of this project, or it does not exist.</p>
      </main>
    );
  }
  const value = { project, api: projectApi(project.id), canManage: permits('project.manage', project.role) };
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useProject(): ProjectContext {
  const value = useContext(Context);
  if (!value) throw new Error('useProject outside a ProjectScope');
  return value;
}

/** `/p/<id>/<path>`: a link within the current project. */
export const projectPath = (projectId: string, path = '') => `/p/${projectId}${path ? `/${path}` : ''}`;
