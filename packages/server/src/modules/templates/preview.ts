import type { TemplatePreviewInput } from '@pigeon/contract';
import type { z } from 'zod';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import { type CompositionSettings, composeMessage } from '../composition/public.js';
import type { ContactRow } from '../contacts/public.js';
import { markdownToHtml, missingVariableWarnings } from '../rendering/public.js';

type PreviewInput = z.output<typeof TemplatePreviewInput>;

/** The id links of a preview are signed for: no email has it, so its links only show where they lead. */
const PREVIEW_EMAIL_ID = '00000000-0000-0000-0000-000000000000';

/** Who a preview is for when no contact is chosen: an address without data, so every data variable shows as missing. */
function sampleContact(projectId: string, now: Date): ContactRow {
  return {
    id: PREVIEW_EMAIL_ID,
    project_id: projectId,
    email: 'preview@example.com',
    subscribed: true,
    data: {},
    created_at: now,
    updated_at: now,
  };
}

/**
 * Content rendered for one contact by the same composition as delivery (variables, links, the
 * text part), untracked, with `/v1/send`'s missing-variable warnings. Stores and sends nothing.
 */
export async function previewTemplate(
  db: Queryable,
  projectId: string,
  input: PreviewInput,
  settings: Pick<CompositionSettings, 'publicUrl' | 'linkSecret'>,
  now: Date,
) {
  const contact = input.contactId
    ? await findInProject<ContactRow>(db, 'contacts', projectId, input.contactId, 'Contact')
    : sampleContact(projectId, now);
  const sourceHtml = input.format === 'markdown' ? await markdownToHtml(input.body) : input.body;
  const message = composeMessage(
    { subject: input.subject, html: sourceHtml, type: input.type },
    contact,
    { ...contact.data, ...input.data },
    PREVIEW_EMAIL_ID,
    { ...settings, tracked: false, unsubscribeMailbox: null, reportMissing: true },
  );
  return {
    subject: message.subject,
    html: message.html,
    text: message.text,
    sourceHtml,
    contact: { id: input.contactId ? contact.id : null, email: contact.email },
    warnings: missingVariableWarnings(message.missing ?? [], {}),
  };
}
