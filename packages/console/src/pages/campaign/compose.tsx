import type { Campaign } from '@pigeon/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ContentEditor } from '../../ui/content-editor';
import { ErrorNote, Field, SelectField } from '../../ui/kit';
import { AudienceFields } from './audience';
import { type ComposeValues, type ContentType, fromTemplate } from './values';

const TYPES: Array<[ContentType, string]> = [
  ['MARKETING', 'Marketing: skips unsubscribed'],
  ['TRANSACTIONAL', 'Transactional: to everyone'],
  ['HEADLESS', 'Headless: skips unsubscribed'],
];

/** The campaign's content and audience, as a form's inputs (the page owns the values and the saving). */
export function ComposeFields({
  values,
  onChange,
  error,
}: {
  values: ComposeValues;
  onChange: (next: Partial<ComposeValues>) => void;
  error: unknown;
}) {
  const text = (name: keyof ComposeValues) => ({
    name,
    error,
    value: values[name] as string,
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => onChange({ [name]: e.target.value }),
  });
  return (
    <>
      <TemplatePicker values={values} onChange={onChange} />
      <section className="card" aria-labelledby="content-title">
        <h2 id="content-title">Message</h2>
        <div className="compose-grid">
          <Field label="Campaign name" required maxLength={200} {...text('name')} hint="Only you see it" />
          <SelectField
            label="Kind of mail"
            value={values.type}
            onChange={(e) => onChange({ type: e.target.value as ContentType })}
            options={TYPES}
          />
          <Field label="From address" type="email" required {...text('from')} hint="On a verified domain" />
          <Field label="From name" {...text('fromName')} />
          <Field label="Reply-to" type="email" {...text('replyTo')} />
          <Field label="Subject" required {...text('subject')} hint='{{name ?? "there"}} fills in per contact' />
        </div>
        <ContentEditor
          subject={values.subject}
          body={values.body}
          type={values.type}
          onBodyChange={(body) => onChange({ body })}
          error={error}
        />
      </section>
      <section className="card" aria-labelledby="audience-title">
        <h2 id="audience-title">Who gets it</h2>
        <AudienceFields values={values} onChange={onChange} error={error} />
      </section>
    </>
  );
}

/** "Compose from a template": its subject, body, sender and kind copied into the form. */
function TemplatePicker({
  values,
  onChange,
}: {
  values: ComposeValues;
  onChange: (next: Partial<ComposeValues>) => void;
}) {
  const { project, api } = useProject();
  const [chosen, setChosen] = useState(values.templateId ?? '');
  const templates = useQuery({
    queryKey: ['templates', project.id, 'picker'],
    queryFn: () => api.templates.list({ pageSize: 100, sort: 'name', dir: 'asc' }),
  });
  const template = templates.data?.data.find((t) => t.id === chosen);
  const from = templates.data?.data.find((t) => t.id === values.templateId);
  return (
    <section className="card" aria-labelledby="template-title">
      <h2 id="template-title">Start from a template</h2>
      <ErrorNote error={templates.error} />
      {templates.data?.data.length === 0 ? (
        <p className="muted">
          No template yet: write the message below, or{' '}
          <Link to={projectPath(project.id, 'templates')}>create a template</Link> to reuse.
        </p>
      ) : (
        <div className="inline-form">
          <SelectField
            label="Template"
            value={chosen}
            onChange={(e) => setChosen(e.target.value)}
            options={[
              ['', templates.isPending ? 'Loading templates…' : 'Choose a template'],
              ...(templates.data?.data ?? []).map((t): [string, string] => [t.id, t.name]),
            ]}
          />
          <div className="field">
            <button
              type="button"
              disabled={!template}
              onClick={() => template && onChange(fromTemplate(values, template))}
            >
              Copy into the campaign
            </button>
          </div>
        </div>
      )}
      {values.templateId ? (
        <p className="muted">Made from the template {from ? `“${from.name}”` : values.templateId}.</p>
      ) : null}
    </section>
  );
}

/** What the campaign will show as its sender. */
export const senderOf = (c: Pick<Campaign, 'from' | 'fromName'>) => (c.fromName ? `${c.fromName} <${c.from}>` : c.from);
