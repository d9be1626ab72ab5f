import { PigeonError } from '@pigeon/sdk';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, Outlet, RouterProvider } from 'react-router';
import { ProjectLayout } from './layout';
import { ProjectScope, RequireSession } from './session';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; network trouble and 5xx get one more try.
      retry: (count, error) =>
        count < 1 && !(error instanceof PigeonError && error.status >= 400 && error.status < 500),
      staleTime: 10_000,
      refetchOnWindowFocus: false,
    },
  },
});

/** Every page is loaded on demand (its own chunk): the first page loads only what it shows. */
const page = (load: () => Promise<{ default: React.ComponentType }>) => async () => ({
  Component: (await load()).default,
});

const router = createBrowserRouter(
  [
    {
      // Shown while the first page's code loads (every page is its own chunk).
      HydrateFallback: () => <p className="muted">Loading…</p>,
      children: [
        { path: 'sign-in', lazy: page(() => import('./pages/auth/sign-in')) },
        { path: 'sign-up', lazy: page(() => import('./pages/auth/sign-up')) },
        { path: 'forgot-password', lazy: page(() => import('./pages/auth/forgot-password')) },
        { path: 'reset-password', lazy: page(() => import('./pages/auth/reset-password')) },
        { path: 'verify-email', lazy: page(() => import('./pages/auth/verify-email')) },
        {
          element: (
            <RequireSession>
              <Outlet />
            </RequireSession>
          ),
          children: [
            { index: true, lazy: page(() => import('./pages/home')) },
            { path: 'projects/new', lazy: page(() => import('./pages/new-project')) },
            { path: 'accept-invitation', lazy: page(() => import('./pages/auth/accept-invitation')) },
            {
              path: 'p/:projectId',
              element: (
                <ProjectScope>
                  <ProjectLayout />
                </ProjectScope>
              ),
              children: [
                { index: true, lazy: page(() => import('./pages/overview')) },
                { path: 'emails', lazy: page(() => import('./pages/emails')) },
                { path: 'emails/:emailId', lazy: page(() => import('./pages/email')) },
                { path: 'events', lazy: page(() => import('./pages/events')) },
                { path: 'contacts', lazy: page(() => import('./pages/contacts')) },
                { path: 'contacts/import', lazy: page(() => import('./pages/contacts-import')) },
                { path: 'contacts/:contactId', lazy: page(() => import('./pages/contact')) },
                { path: 'suppressions', lazy: page(() => import('./pages/suppressions')) },
                { path: 'domains', lazy: page(() => import('./pages/domains')) },
                { path: 'keys', lazy: page(() => import('./pages/keys')) },
                { path: 'webhooks', lazy: page(() => import('./pages/webhooks')) },
                { path: 'webhooks/:endpointId', lazy: page(() => import('./pages/webhook')) },
                { path: 'members', lazy: page(() => import('./pages/members')) },
                { path: 'settings', lazy: page(() => import('./pages/settings')) },
                { path: 'templates', lazy: page(() => import('./pages/templates')) },
                { path: 'templates/:templateId', lazy: page(() => import('./pages/template')) },
                { path: 'segments', lazy: page(() => import('./pages/segments')) },
                { path: 'segments/:segmentId', lazy: page(() => import('./pages/segment')) },
                { path: 'campaigns', lazy: page(() => import('./pages/campaigns')) },
                { path: 'campaigns/:campaignId', lazy: page(() => import('./pages/campaign')) },
                { path: 'workflows', lazy: page(() => import('./pages/workflows')) },
                { path: 'workflows/:workflowId', lazy: page(() => import('./pages/workflow')) },
                {
                  path: 'workflows/:workflowId/executions/:executionId',
                  lazy: page(() => import('./pages/workflow/execution')),
                },
                { path: 'analytics', lazy: page(() => import('./pages/analytics')) },
              ],
            },
          ],
        },
        { path: '*', lazy: page(() => import('./pages/not-found')) },
      ],
    },
  ],
  { basename: '/app' },
);

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
