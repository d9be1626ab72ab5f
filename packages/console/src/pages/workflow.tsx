import { PageHeader } from '../ui/kit';

/** Placeholder until the page is built (issue 61). */
export default function WorkflowPage() {
  return <PageHeader title="Workflow" />;
}
