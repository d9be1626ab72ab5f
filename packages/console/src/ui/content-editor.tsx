import type { Template, TemplatePreviewBody } from '@pigeon/sdk';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { fieldErrors, messageOf } from '../api';
import { useProject } from '../session';
import { ErrorNote, Notice } from './kit';
import { MessageFrame } from './message-frame';
import { useDebounced } from './use-debounced';

interface Props {
  subject: string;
  body: string;
  type: Template['type'];
  /** Always HTML: Markdown is converted by the server as the person writes. */
  onBodyChange: (html: string) => void;
  /** A failed save, for the body's field error. */
  error?: unknown;
}

/**
 * The body of a message, written in HTML or Markdown, beside a live preview rendered by the server
 * (the delivery renderer, with a chosen contact's data) that shows the same missing-variable
 * warnings as `/v1/send`; images are uploaded and placed at the cursor.
 */
export function ContentEditor({ subject, body, type, onBodyChange, error }: Props) {
  const { project, api } = useProject();
  const id = useId();
  const [format, setFormat] = useState<'html' | 'markdown'>('html');
  const [markdown, setMarkdown] = useState('');
  const [contact, setContact] = useState<{ id: string; email: string } | null>(null);
  const source = format === 'markdown' ? markdown : body;
  const request: TemplatePreviewBody = useDebounced({ subject, body: source, format, type, contactId: contact?.id });
  const preview = useQuery({
    queryKey: ['template-preview', project.id, request],
    queryFn: () => api.templates.preview(request),
    enabled: request.body.length > 0,
    placeholderData: keepPreviousData,
  });
  // Markdown is kept as the HTML the server made of it: that is what is saved and sent.
  const converted = format === 'markdown' ? preview.data?.sourceHtml : undefined;
  useEffect(() => {
    if (converted !== undefined && converted !== body) onBodyChange(converted);
  }, [converted, body, onBodyChange]);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const write = (text: string) => (format === 'markdown' ? setMarkdown(text) : onBodyChange(text));
  const upload = useMutation({
    mutationFn: (file: File) => api.uploads.image(file),
    onSuccess: (image) => {
      const tag =
        format === 'markdown' ? `![](${image.url})` : `<img src="${image.url}" alt="" style="max-width:100%">`;
      const at = textarea.current?.selectionStart ?? source.length;
      write(`${source.slice(0, at)}${tag}${source.slice(at)}`);
    },
  });
  const message = fieldErrors(error).body;
  return (
    <div className="compose-body">
      <div className="field">
        <fieldset className="format-choice">
          <legend className="sr-only">Write the body in</legend>
          {(['html', 'markdown'] as const).map((f) => (
            <label key={f} className="inline">
              <input
                type="radio"
                name={`${id}-format`}
                checked={format === f}
                onChange={() => {
                  if (f === 'markdown' && !markdown) setMarkdown('');
                  setFormat(f);
                }}
              />{' '}
              {f === 'html' ? 'HTML' : 'Markdown'}
            </label>
          ))}
        </fieldset>
        <label htmlFor={`${id}-body`}>Body ({format === 'html' ? 'HTML' : 'Markdown'})</label>
        <textarea
          ref={textarea}
          id={`${id}-body`}
          className="code"
          rows={18}
          value={source}
          aria-invalid={message ? true : undefined}
          aria-describedby={`${id}-note`}
          onChange={(e) => write(e.target.value)}
        />
        <small id={`${id}-note`} className={message ? 'field-error' : 'muted'}>
          {message ??
            (format === 'markdown'
              ? 'Saved as the HTML shown in the preview; editing again later is in HTML.'
              : '{{variables}} are filled per contact; {{unsubscribeUrl}} and {{manageUrl}} link to their pages.')}
        </small>
        <div className="field">
          <label htmlFor={`${id}-image`}>Insert an image at the cursor</label>
          <input
            id={`${id}-image`}
            type="file"
            accept="image/jpeg,image/png,image/gif,image/webp"
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (file) upload.mutate(file);
              e.target.value = '';
            }}
          />
          {upload.isPending ? <small className="muted">Uploading…</small> : null}
          {upload.error ? <small className="field-error">{messageOf(upload.error)}</small> : null}
        </div>
      </div>
      <div className="field preview">
        <span className="label">Preview</span>
        <PreviewContact contact={contact} onChange={setContact} />
        <ErrorNote error={preview.error} />
        {preview.data ? (
          <>
            <p className="preview-subject">
              <span className="muted">Subject:</span> {preview.data.subject || <em>(none)</em>}
            </p>
            {preview.data.warnings.length > 0 ? (
              <Notice tone="warn">
                <ul className="warnings">
                  {preview.data.warnings.map((w) => (
                    <li key={w.field}>{w.message}</li>
                  ))}
                </ul>
              </Notice>
            ) : null}
            <MessageFrame html={preview.data.html} title="Preview of the message" ownImages />
            <details>
              <summary>Plain-text part</summary>
              <pre className="text-part">{preview.data.text}</pre>
            </details>
          </>
        ) : (
          <p className="muted">Write a body to see it as {contact?.email ?? 'a contact'} will.</p>
        )}
      </div>
    </div>
  );
}

/** Whose data fills the preview: a contact found by email, or a sample contact without data. */
function PreviewContact({
  contact,
  onChange,
}: {
  contact: { id: string; email: string } | null;
  onChange: (c: { id: string; email: string } | null) => void;
}) {
  const { project, api } = useProject();
  const id = useId();
  const [typed, setTyped] = useState(contact?.email ?? '');
  const search = useDebounced(typed.trim().toLowerCase(), 300);
  const found = useQuery({
    queryKey: ['contacts', project.id, { search, limit: 8 }],
    queryFn: () => api.contacts.list({ search, limit: 8 }),
    enabled: search.length > 0,
  });
  const match = found.data?.data.find((c) => c.email === search);
  useEffect(() => {
    if (match && match.id !== contact?.id) onChange({ id: match.id, email: match.email });
    if (!search && contact) onChange(null);
  }, [match, search, contact, onChange]);
  return (
    <div className="field">
      <label htmlFor={id}>Preview as (contact email)</label>
      <input id={id} type="search" list={`${id}-list`} value={typed} onChange={(e) => setTyped(e.target.value)} />
      <datalist id={`${id}-list`}>
        {found.data?.data.map((c) => (
          <option key={c.id} value={c.email} />
        ))}
      </datalist>
      <small className="muted">
        {contact ? `With ${contact.email}'s data.` : 'Without a contact: a sample address with no data.'}
      </small>
    </div>
  );
}
