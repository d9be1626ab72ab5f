import { useQuery } from '@tanstack/react-query';
import { Navigate } from 'react-router';
import { projectPath, projectsQuery } from '../session';
import { ErrorNote, Loading } from '../ui/kit';

/** `/app/`: the last project used, else the first one; a person without any creates one. */
export default function HomePage() {
  const projects = useQuery(projectsQuery);
  if (projects.isPending) return <Loading />;
  if (projects.error) return <ErrorNote error={projects.error} />;
  const last = localStorage.getItem('pigeon.lastProject');
  const project = projects.data.find((p) => p.id === last) ?? projects.data[0];
  return <Navigate to={project ? projectPath(project.id) : '/projects/new'} replace />;
}
