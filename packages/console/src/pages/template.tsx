import { CONTENT_TYPES, type Template, type TemplateCreateBody } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { isStatus } from '../api';
import { projectPath, useProject } from '../session';
import { ContentEditor } from '../ui/content-editor';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Field, Form, Loading, Notice, PageHeader, SelectField } from '../ui/kit';
import { UsedBy } from '../ui/used-by';

type Values = Required<Omit<TemplateCreateBody, 'description' | 'fromName' | 'replyTo'>> & {
  description: string;
  fromName: string;
  replyTo: string;
};

const blank = (from: string): Values => ({
  name: '',
  description: '',
  subject: '',
  body: '',
  from,
  fromName: '',
  replyTo: '',
  type: 'MARKETING',
});

const valuesOf = (t: Template): Values => ({
  name: t.name,
  description: t.description ?? '',
  subject: t.subject,
  body: t.body,
  from: t.from,
  fromName: t.fromName ?? '',
  replyTo: t.replyTo ?? '',
  type: t.type,
});

/** One template (or a new one at `templates/new`): the editor with its live preview, usage, duplicate and delete. */
export default function TemplatePage() {
  const { templateId = 'new' } = useParams();
  const { project, api } = useProject();
  const template = useQuery({
    queryKey: ['template', project.id, templateId],
    queryFn: () => api.templates.get(templateId),
    enabled: templateId !== 'new',
  });
  if (templateId === 'new') return <Editor key="new" initial={blank(project.defaultFrom ?? '')} />;
  if (template.error) {
    return (
      <>
        <PageHeader title="Template" />
        <ErrorNote error={template.error} />
      </>
    );
  }
  if (!template.data) return <Loading />;
  return <Editor key={template.data.id} initial={valuesOf(template.data)} template={template.data} />;
}

function Editor({ initial, template }: { initial: Values; template?: Template }) {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [values, setValues] = useState(initial);
  const [deleting, setDeleting] = useState(false);
  const set = (patch: Partial<Values>) => setValues((v) => ({ ...v, ...patch }));
  const setBody = useCallback((body: string) => setValues((v) => (v.body === body ? v : { ...v, body })), []);
  const body = {
    ...values,
    description: values.description || null,
    fromName: values.fromName || null,
    replyTo: values.replyTo || null,
  };
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['templates', project.id] });
  const save = useMutation({
    mutationFn: () => (template ? api.templates.update(template.id, body) : api.templates.create(body)),
    onSuccess: async (saved) => {
      await refresh();
      queryClient.setQueryData(['template', project.id, saved.id], saved);
      if (!template) navigate(projectPath(project.id, `templates/${saved.id}`), { replace: true });
    },
  });
  const duplicate = useMutation({
    mutationFn: (id: string) => api.templates.duplicate(id),
    onSuccess: async (copy) => {
      await refresh();
      navigate(projectPath(project.id, `templates/${copy.id}`));
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.templates.delete(id),
    onSuccess: async () => {
      await refresh();
      navigate(projectPath(project.id, 'templates'));
    },
  });
  const field = (name: keyof Values) => ({
    name,
    value: values[name],
    error: save.error,
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => set({ [name]: e.target.value }),
  });
  return (
    <>
      <PageHeader title={template ? template.name : 'New template'}>
        {template ? (
          <div className="actions">
            <button type="button" className="secondary" onClick={() => duplicate.mutate(template.id)}>
              Duplicate
            </button>
            <button type="button" className="danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
        ) : null}
      </PageHeader>
      <ErrorNote error={duplicate.error} />
      <Form onSubmit={() => save.mutate()}>
        <ErrorNote error={save.error} />
        {save.isSuccess && !save.isPending ? <Notice tone="ok">Saved.</Notice> : null}
        <section className="card" aria-labelledby="template-details">
          <h2 id="template-details">Details</h2>
          <div className="compose-grid">
            <Field label="Name" required {...field('name')} />
            <Field label="Description" {...field('description')} />
            <SelectField
              label="Type"
              value={values.type}
              onChange={(e) => set({ type: e.target.value as Values['type'] })}
              options={CONTENT_TYPES.map((t): [string, string] => [t, t.toLowerCase()])}
            />
            <Field label="From" type="email" required hint="On a verified sender domain" {...field('from')} />
            <Field label="Sender name" {...field('fromName')} />
            <Field label="Reply-To" type="email" {...field('replyTo')} />
          </div>
          <Field label="Subject" required hint='{{firstName ?? "there"}} fills in per contact' {...field('subject')} />
        </section>
        <section className="card" aria-labelledby="template-body">
          <h2 id="template-body">Body</h2>
          <ContentEditor
            subject={values.subject}
            body={values.body}
            type={values.type}
            onBodyChange={setBody}
            error={save.error}
          />
        </section>
        <div className="form-end">
          <button type="submit" className="primary" disabled={save.isPending}>
            {template ? 'Save template' : 'Create template'}
          </button>
        </div>
      </Form>
      {template ? <TemplateUsage template={template} /> : null}
      {template ? (
        <ConfirmDialog
          open={deleting}
          title={`Delete ${template.name}?`}
          confirm="Delete template"
          onConfirm={() => remove.mutate(template.id)}
          onClose={() => {
            setDeleting(false);
            remove.reset();
          }}
        >
          <p>The template is gone for good. Campaigns made from it keep their own copy.</p>
          {isStatus(remove.error, 409) ? (
            <Notice tone="warn">
              It cannot be deleted while workflow steps send it: change those steps first (listed under "Used by").
            </Notice>
          ) : (
            <ErrorNote error={remove.error} />
          )}
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** Campaigns made from the template and workflow steps that send it. */
function TemplateUsage({ template }: { template: Template }) {
  const { project, api } = useProject();
  const usage = useQuery({
    queryKey: ['template-usage', project.id, template.id],
    queryFn: () => api.templates.usage(template.id),
  });
  const links = usage.data && [
    ...usage.data.campaigns.map((c) => ({ ...c, kind: 'Campaign', path: `campaigns/${c.id}` })),
    ...usage.data.workflowSteps.map((s) => ({ ...s, kind: 'Workflow step', path: `workflows/${s.workflowId}` })),
  ];
  return <UsedBy links={links} error={usage.error} none="No campaign or workflow uses this template yet." />;
}
